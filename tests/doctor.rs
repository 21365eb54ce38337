//! `baton doctor` against fake CLIs on a PATH of their own, in a temporary
//! HOME: every check's failure and success, the exit code, and speed.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{Env, Run};

/// Every variable doctor reads for credentials or CLI homes.
const CLEARED: &[&str] = &[
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "GEMINI_API_KEY",
    "ZAI_API_KEY",
    "ANTHROPIC_OAUTH_TOKEN",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "XAI_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "CEREBRAS_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AWS_BEARER_TOKEN_BEDROCK",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CODEX_HOME",
    "CLAUDE_CONFIG_DIR",
    "PI_CODING_AGENT_DIR",
    "GEMINI_CLI_HOME",
    "XDG_CONFIG_HOME",
];

struct Doc {
    env: Env,
    home: PathBuf,
}

impl Doc {
    fn new() -> Doc {
        let env = Env::new();
        let home = env.tmp.path().join("home");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(env.tmp.path().join("tmpdir")).unwrap();
        // The few system tools the fakes use, and not bwrap or socat.
        let tools = env.tmp.path().join("tools");
        fs::create_dir_all(&tools).unwrap();
        for t in ["sleep", "cat", "git"] {
            let real = ["/usr/bin", "/bin"]
                .iter()
                .map(|d| PathBuf::from(d).join(t))
                .find(|p| p.exists())
                .unwrap();
            std::os::unix::fs::symlink(real, tools.join(t)).unwrap();
        }
        Doc { env, home }
    }

    /// A fake CLI that answers `--version` with `line` (on stderr if asked).
    fn cli(&self, name: &str, line: &str) -> &Self {
        self.env.fake(
            name,
            &format!(
                "last=\nfor a in \"$@\"; do last=$a; done\n[ \"$last\" = --version ] && {{ echo '{line}'; exit 0; }}\nexit 3"
            ),
        );
        self
    }

    /// bwrap and socat, so claude's and codex's sandbox checks pass.
    fn sandbox_tools(&self) -> &Self {
        self.env.fake("bwrap", "exit 0").fake("socat", "exit 0");
        self
    }

    /// doctor with PATH = the fakes only and HOME/TMPDIR in the temp dir.
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = self.env.baton();
        for v in CLEARED {
            c.env_remove(v);
        }
        c.env(
            "PATH",
            format!(
                "{}:{}",
                self.env.bin.display(),
                self.env.tmp.path().join("tools").display()
            ),
        )
        .env("HOME", &self.home)
        .env("TMPDIR", self.env.tmp.path().join("tmpdir"))
        .arg("doctor")
        .args(args);
        c
    }

    fn run(&self, args: &[&str]) -> (Run, serde_json::Value) {
        self.run_with(args, &[])
    }

    fn run_with(&self, args: &[&str], vars: &[(&str, &str)]) -> (Run, serde_json::Value) {
        let mut c = self.cmd(args);
        for (k, v) in vars {
            c.env(k, v);
        }
        let r = Run::from(c.output().unwrap());
        let j = r.json();
        (r, j)
    }
}

fn check<'a>(j: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id} in {j:#}"))
}

fn has_check(j: &serde_json::Value, id: &str) -> bool {
    j["checks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["id"] == id)
}

#[test]
fn a_missing_default_cli_fails_with_the_install_command() {
    let d = Doc::new();
    let (r, j) = d.run(&[]);
    assert_eq!(r.code, 1);
    assert_eq!(j["schema_version"], 1);
    assert_eq!(j["status"], "failed");
    let c = check(&j, "agent.codex.cli");
    assert_eq!(c["ok"], false);
    assert_eq!(c["severity"], "error");
    assert!(
        c["hint"]
            .as_str()
            .unwrap()
            .contains("npm install -g @openai/codex")
    );
    // Optional CLIs that are absent are information, not failures.
    let c = check(&j, "agent.claude.cli");
    assert_eq!(
        (c["ok"].as_bool(), c["severity"].as_str()),
        (Some(true), Some("info"))
    );
    for c in j["checks"].as_array().unwrap() {
        for k in ["id", "ok", "severity", "message", "hint"] {
            assert!(c.get(k).is_some(), "{k} missing in {c}");
        }
        if c["ok"] == false {
            assert!(c["hint"].is_string(), "a problem without a fix: {c}");
        }
    }
}

#[test]
fn a_ready_default_agent_exits_0_and_never_prints_the_key() {
    let d = Doc::new();
    d.cli("codex", "codex-cli 0.171.0").sandbox_tools();
    let secret = "sk-test-DO-NOT-PRINT-0123456789";
    let (r, j) = d.run_with(&[], &[("OPENAI_API_KEY", secret)]);
    assert_eq!(r.code, 0, "{j:#}");
    assert_eq!(j["status"], "success");
    assert_eq!(j["default_agent"], "codex");
    assert!(j["ready"].as_array().unwrap().contains(&"codex".into()));
    assert_eq!(check(&j, "agent.codex.version")["ok"], true);
    let auth = check(&j, "agent.codex.auth");
    assert_eq!(auth["ok"], true);
    assert!(auth["message"].as_str().unwrap().contains("OPENAI_API_KEY"));
    assert_eq!(check(&j, "agent.codex.sandbox")["ok"], true);
    assert!(!r.stdout.contains(secret) && !r.stderr.contains(secret));
    let row = j["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "codex")
        .unwrap();
    assert_eq!(row["version"], "codex-cli 0.171.0");
    assert_eq!(row["version_source"], "--version");
    assert_eq!(row["reports_model"], false);
    assert!(row["access"]["read-only"].is_string());
    // The text form says the same for people.
    let r = Run::from(
        d.cmd(&["--text"])
            .env("OPENAI_API_KEY", secret)
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("codex is ready"), "{}", r.stdout);
    assert!(
        r.stdout.contains("cannot confirm which model served"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains(secret));
}

#[test]
fn old_and_new_versions_are_warnings_that_say_why() {
    let d = Doc::new();
    d.cli("claude", "2.1.100 (Claude Code)")
        .cli("codex", "codex-cli 0.999.0")
        .cli("gemini", "0.61.0")
        .sandbox_tools();
    let (_, j) = d.run_with(&[], &[("ANTHROPIC_API_KEY", "x"), ("OPENAI_API_KEY", "x")]);
    let c = check(&j, "agent.claude.version");
    assert_eq!(
        (c["ok"].as_bool(), c["severity"].as_str()),
        (Some(false), Some("warning"))
    );
    let m = c["message"].as_str().unwrap();
    assert!(
        m.contains("older than the tested 2.1.197") && m.contains("known differences"),
        "{m}"
    );
    assert!(
        c["hint"]
            .as_str()
            .unwrap()
            .contains("@anthropic-ai/claude-code@2.1.332")
    );
    let c = check(&j, "agent.codex.version");
    assert!(
        c["message"]
            .as_str()
            .unwrap()
            .contains("newer than the tested 0.171.0"),
        "{c}"
    );
    assert_eq!(c["severity"], "warning");
    // The measured older claude is tested, with its differences named.
    d.cli("claude", "2.1.197 (Claude Code)");
    let (_, j) = d.run_with(&["--agent", "claude"], &[("ANTHROPIC_API_KEY", "x")]);
    let c = check(&j, "agent.claude.version");
    assert_eq!(c["ok"], true);
    assert!(
        c["message"].as_str().unwrap().contains("plugin validate"),
        "{c}"
    );
    assert!(
        !has_check(&j, "agent.codex.cli"),
        "--agent checks that agent only"
    );
}

#[test]
fn no_credentials_is_an_error_with_the_login_command() {
    let d = Doc::new();
    d.cli("pi", "0.73.1").sandbox_tools();
    let (r, j) = d.run(&["--agent", "zai"]);
    assert_eq!(r.code, 1);
    let c = check(&j, "agent.zai.auth");
    assert_eq!(
        (c["ok"].as_bool(), c["severity"].as_str()),
        (Some(false), Some("error"))
    );
    assert!(c["message"].as_str().unwrap().contains("ZAI_API_KEY"));
    assert!(c["hint"].as_str().unwrap().contains("export ZAI_API_KEY"));
    // With the key, zai is ready.
    let (r, j) = d.run_with(&["--agent", "zai"], &[("ZAI_API_KEY", "x")]);
    assert_eq!(r.code, 0, "{j:#}");
}

#[test]
fn a_login_file_readable_by_others_is_a_warning() {
    let d = Doc::new();
    d.cli("codex", "codex-cli 0.171.0").sandbox_tools();
    let dir = d.home.join(".codex");
    fs::create_dir_all(&dir).unwrap();
    let auth = dir.join("auth.json");
    fs::write(&auth, "{\"tokens\":\"SECRET-IN-FILE\"}").unwrap();
    fs::set_permissions(&auth, fs::Permissions::from_mode(0o644)).unwrap();
    let (r, j) = d.run(&[]);
    // Logged in (the file is there), so still ready, with a warning.
    assert_eq!(r.code, 0, "{j:#}");
    assert_eq!(check(&j, "agent.codex.auth")["ok"], true);
    let w = check(&j, "agent.codex.login_file");
    assert_eq!(
        (w["ok"].as_bool(), w["severity"].as_str()),
        (Some(false), Some("warning"))
    );
    assert!(w["message"].as_str().unwrap().contains("0644"));
    assert_eq!(w["hint"], format!("chmod 600 {}", auth.display()));
    assert!(!r.stdout.contains("SECRET-IN-FILE"));

    fs::set_permissions(&auth, fs::Permissions::from_mode(0o600)).unwrap();
    let (_, j) = d.run(&[]);
    assert!(!has_check(&j, "agent.codex.login_file"), "{j:#}");
}

#[test]
fn claude_without_bubblewrap_and_socat_is_warned() {
    let d = Doc::new();
    d.cli("claude", "2.1.332 (Claude Code)");
    let (r, j) = d.run_with(&["--agent", "claude"], &[("ANTHROPIC_API_KEY", "x")]);
    assert_eq!(r.code, 0, "a warning does not make it unready");
    let c = check(&j, "agent.claude.sandbox");
    assert_eq!(c["severity"], "warning");
    let m = c["message"].as_str().unwrap();
    assert!(
        m.contains("bwrap and socat") && m.contains("commands"),
        "{m}"
    );
    assert!(c["hint"].as_str().unwrap().contains("bubblewrap socat"));
    d.sandbox_tools();
    let (_, j) = d.run_with(&["--agent", "claude"], &[("ANTHROPIC_API_KEY", "x")]);
    assert_eq!(check(&j, "agent.claude.sandbox")["ok"], true);
}

#[test]
fn codex_home_under_tmp_with_a_system_bwrap_is_an_error() {
    let d = Doc::new();
    d.cli("codex", "codex-cli 0.171.0");
    let tmp_home = d.env.tmp.path().join("tmpdir/codex-home");
    let vars = [
        ("OPENAI_API_KEY", "x"),
        ("CODEX_HOME", tmp_home.to_str().unwrap()),
    ];
    let (_, j) = d.run_with(&[], &vars);
    assert_eq!(check(&j, "agent.codex.sandbox")["severity"], "warning");
    d.sandbox_tools();
    let (r, j) = d.run_with(&[], &vars);
    assert_eq!(r.code, 1);
    let c = check(&j, "agent.codex.sandbox");
    assert_eq!(c["severity"], "error");
    assert!(c["hint"].as_str().unwrap().contains("CODEX_HOME"));
}

/// Issue 29 §7: the hint changes something, and following it passes the
/// check. HOME outside the temporary directory: `CODEX_HOME` under HOME.
/// HOME itself under it (CI, containers), where `$HOME/.codex` is the same
/// place: a private `TMPDIR` inside HOME.
#[test]
fn the_codex_home_hint_is_a_fix_that_works_also_when_home_is_under_tmp() {
    let d = Doc::new();
    d.cli("codex", "codex-cli 0.171.0").sandbox_tools();
    let key = ("OPENAI_API_KEY", "x");
    let hint = |j: &serde_json::Value| -> String {
        let c = check(j, "agent.codex.sandbox");
        assert_eq!(c["severity"], "error", "{c}");
        c["hint"].as_str().unwrap().to_string()
    };

    // CODEX_HOME set under TMPDIR, HOME outside it.
    let tmp_home = d.env.tmp.path().join("tmpdir/codex-home");
    let (_, j) = d.run_with(&[], &[key, ("CODEX_HOME", tmp_home.to_str().unwrap())]);
    let h = hint(&j);
    let suggested = d.home.join(".codex");
    assert!(
        h.contains(&format!("export CODEX_HOME=\"{}\"", suggested.display())),
        "{h}"
    );
    let (_, j) = d.run_with(&[], &[key, ("CODEX_HOME", suggested.to_str().unwrap())]);
    assert_eq!(check(&j, "agent.codex.sandbox")["ok"], true, "{j:#}");

    // HOME under TMPDIR, CODEX_HOME left to its default ($HOME/.codex).
    let tmpdir = d.env.tmp.path().to_str().unwrap().to_string();
    let (_, j) = d.run_with(&[], &[key, ("TMPDIR", &tmpdir)]);
    let h = hint(&j);
    assert!(
        !h.contains("export CODEX_HOME=\"$HOME/.codex\""),
        "a no-op: {h}"
    );
    assert!(
        !h.contains(&format!("export CODEX_HOME=\"{}\"", suggested.display())),
        "{h}"
    );
    let private = d.home.join(".tmp");
    assert!(
        h.contains(&format!("export TMPDIR=\"{}\"", private.display())),
        "{h}"
    );
    fs::create_dir_all(&private).unwrap();
    let (_, j) = d.run_with(&[], &[key, ("TMPDIR", private.to_str().unwrap())]);
    assert_eq!(check(&j, "agent.codex.sandbox")["ok"], true, "{j:#}");
}

#[test]
fn the_version_of_an_npm_install_is_read_from_its_package_json() {
    let d = Doc::new();
    // node_modules/.bin/gemini -> ../@google/gemini-cli/dist/index.js, a
    // script that would fail if it were run.
    let nm = d.env.tmp.path().join("node_modules");
    let pkg = nm.join("@google/gemini-cli");
    fs::create_dir_all(pkg.join("dist")).unwrap();
    fs::write(
        pkg.join("package.json"),
        r#"{"name":"@google/gemini-cli","version":"0.61.0"}"#,
    )
    .unwrap();
    let script = pkg.join("dist/index.js");
    fs::write(
        &script,
        "#!/bin/sh\necho started >> \"$FAKE_DIR/started\"\nexit 9\n",
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink(&script, d.env.bin.join("gemini")).unwrap();
    let (r, j) = d.run_with(&["--agent", "gemini-cli"], &[("GEMINI_API_KEY", "x")]);
    assert_eq!(r.code, 0, "{j:#}");
    let row = &j["agents"][0];
    assert_eq!(row["version"], "0.61.0");
    assert_eq!(row["version_source"], "package.json");
    assert!(
        !d.env.fake_dir.join("started").exists(),
        "the CLI was started"
    );
}

#[test]
fn versions_are_asked_in_parallel_with_a_timeout() {
    let d = Doc::new();
    for name in ["codex", "claude", "agy", "pi", "gemini"] {
        d.env.fake(name, "sleep 1\necho 1.0.0");
    }
    d.env.fake("hangs", "sleep 30");
    fs::write(
        d.env.tmp.path().join("user-config.toml"),
        format!(
            "[agents.zai]\ncommand = [\"{}\"]\n",
            d.env.bin.join("hangs").display()
        ),
    )
    .unwrap();
    let start = Instant::now();
    let (_, j) = d.run(&[]);
    let took = start.elapsed();
    // Five 1 s CLIs one after another would take 5 s; a hung one 30 s.
    assert!(took < Duration::from_millis(4500), "took {took:?}");
    let c = check(&j, "agent.zai.version");
    assert!(
        c["message"].as_str().unwrap().contains("no answer within"),
        "{c}"
    );
}

#[test]
fn a_broken_config_is_a_finding_and_a_pinned_command_is_shown() {
    let d = Doc::new();
    d.cli("codex", "codex-cli 0.171.0").sandbox_tools();
    let cfg = d.env.tmp.path().join("user-config.toml");
    fs::write(&cfg, "[run]\ntimeout = \"soon\"\n").unwrap();
    let (r, j) = d.run_with(&[], &[("OPENAI_API_KEY", "x")]);
    assert_eq!(r.code, 1);
    let c = check(&j, "baton.config");
    assert_eq!(c["severity"], "error");
    assert!(
        c["message"]
            .as_str()
            .unwrap()
            .contains("user-config.toml:2: `run.timeout`"),
        "{c}"
    );

    d.cli("node-ish", "0.73.1");
    fs::write(
        &cfg,
        format!(
            "agent = \"pi\"\n[agents.pi]\ncommand = [\"{}\", \"/opt/pi/cli.js\"]\n",
            d.env.bin.join("node-ish").display()
        ),
    )
    .unwrap();
    let (r, j) = d.run_with(&[], &[("ANTHROPIC_API_KEY", "x")]);
    assert_eq!(r.code, 0, "{j:#}");
    assert_eq!(j["default_agent"], "pi");
    assert!(
        check(&j, "agent.pi.cli")["message"]
            .as_str()
            .unwrap()
            .contains("agents.pi.command")
    );
    let files = j["baton"]["config_files"].as_array().unwrap();
    assert!(
        files
            .iter()
            .any(|f| f["exists"] == true && f["scope"] == "user")
    );
}

#[test]
fn baton_reports_its_own_binary_and_state_dir() {
    let d = Doc::new();
    d.env.git_init();
    let (_, j) = d.run_with(&[], &[("BATON_BIN", "/nonexistent/baton")]);
    assert!(
        check(&j, "baton.version")["message"]
            .as_str()
            .unwrap()
            .contains("commit")
    );
    assert_eq!(check(&j, "baton.binary")["severity"], "warning");
    // Where records really go: the state directory in use, not `.baton`.
    let sd = check(&j, "baton.state_dir");
    assert_eq!(sd["ok"], true, "{sd}");
    let msg = sd["message"].as_str().unwrap();
    let repos = d.env.state.join("repos");
    assert!(
        msg.starts_with(&format!("records go to {}/work-", repos.display())),
        "{msg}"
    );
    assert!(msg.ends_with("(made on the first run)"), "{msg}");
    assert!(!msg.contains(".baton"), "{msg}");
    let dir = j["baton"]["state_dir"].as_str().unwrap().to_string();
    assert!(dir.starts_with(repos.to_str().unwrap()), "{dir}");
    fs::create_dir_all(&dir).unwrap();
    let (_, j) = d.run(&[]);
    let msg = check(&j, "baton.state_dir")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(msg, format!("records go to {dir} (writable)"));
    assert_eq!(check(&j, "baton.gitignore")["ok"], true);
    assert!(j["baton"]["exe"].as_str().unwrap().ends_with("baton"));
    // A .baton/ that lost its .gitignore shows in git status: warned.
    fs::create_dir_all(d.env.work.join(".baton")).unwrap();
    let (_, j) = d.run(&[]);
    assert_eq!(check(&j, "baton.gitignore")["severity"], "warning");
}

#[test]
fn probe_sends_a_tiny_read_only_prompt_to_each_ready_agent() {
    let d = Doc::new();
    d.sandbox_tools();
    let fixture = crate::support::fixture("codex/codex-exec-basic.jsonl");
    d.env.fake(
        "codex",
        &format!(
            "[ \"${{1-}}\" = --version ] && {{ echo 'codex-cli 0.171.0'; exit 0; }}\n{}\ncat '{}'",
            crate::support::record("codex"),
            fixture.display()
        ),
    );
    let (r, j) = d.run_with(&["--agent", "codex", "--probe"], &[("OPENAI_API_KEY", "x")]);
    assert_eq!(r.code, 0, "{j:#}");
    let c = check(&j, "agent.codex.probe");
    assert_eq!(c["ok"], true, "{c}");
    assert!(c["message"].as_str().unwrap().contains("round trip"), "{c}");
    let argv = d.env.argv("codex");
    assert!(
        argv.windows(2).any(|w| w == ["--sandbox", "read-only"]),
        "{argv:?}"
    );
    assert!(d.env.stdin("codex").contains("pong"));
    // Never without --probe.
    fs::remove_file(d.env.fake_dir.join("codex.argv")).unwrap();
    d.run_with(&["--agent", "codex"], &[("OPENAI_API_KEY", "x")]);
    assert!(!d.env.called("codex"));
}

#[test]
fn a_codex_custom_provider_downgrades_missing_keys_to_a_warning() {
    let d = Doc::new();
    d.cli("codex", "codex-cli 0.171.0").sandbox_tools();
    let dir = d.home.join(".codex");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("config.toml"), "model_provider = \"mine\"\n").unwrap();
    let (r, j) = d.run(&[]);
    assert_eq!(r.code, 0, "{j:#}");
    let c = check(&j, "agent.codex.auth");
    assert_eq!(c["severity"], "warning");
    assert!(
        c["message"].as_str().unwrap().contains("config.toml"),
        "{c}"
    );
}

/// A state directory others may write is an error of baton itself, named
/// in the summary with the `chmod` that fixes it.
#[test]
fn an_unsafe_state_directory_is_an_error_of_baton_itself() {
    let d = Doc::new();
    d.cli("codex", "codex-cli 0.171.0").sandbox_tools();
    fs::create_dir_all(&d.env.state).unwrap();
    fs::set_permissions(&d.env.state, fs::Permissions::from_mode(0o777)).unwrap();
    let (r, j) = d.run_with(&[], &[("OPENAI_API_KEY", "sk-x")]);
    assert_eq!(r.code, 1, "{j:#}");
    let c = check(&j, "baton.state_dir");
    assert_eq!(
        (c["ok"].as_bool(), c["severity"].as_str()),
        (Some(false), Some("error"))
    );
    assert!(
        c["message"]
            .as_str()
            .unwrap()
            .contains("writable by group and others"),
        "{c}"
    );
    assert_eq!(c["hint"], format!("chmod 700 {}", d.env.state.display()));
    let summary = j["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("baton itself has a problem: ")
            && summary.contains("writable by group and others"),
        "{summary}"
    );
}

/// The last line of the text report says what is wrong instead of pointing
/// "below" (the checks are above it; in the JSON they follow it).
#[test]
fn the_summary_names_the_error_instead_of_pointing_at_it() {
    let d = Doc::new();
    let (_, j) = d.run(&[]);
    let summary = j["summary"].as_str().unwrap();
    let cli = check(&j, "agent.codex.cli")["message"].as_str().unwrap();
    assert_eq!(summary, format!("codex is not ready: {cli}"));
    // Two errors (no credentials; CODEX_HOME under /tmp with a system
    // bwrap): the first, and how many more.
    d.cli("codex", "codex-cli 0.171.0").sandbox_tools();
    let tmp_home = d.env.tmp.path().join("tmpdir/codex-home");
    let (_, j) = d.run_with(&[], &[("CODEX_HOME", tmp_home.to_str().unwrap())]);
    let summary = j["summary"].as_str().unwrap().to_string();
    let auth = check(&j, "agent.codex.auth")["message"].as_str().unwrap();
    assert_eq!(
        summary,
        format!("codex is not ready: {auth} (and 1 more error)")
    );
    let r = Run::from(
        d.cmd(&["--text"])
            .env("CODEX_HOME", &tmp_home)
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.stdout.matches("[FAIL]").count(), 2, "{}", r.stdout);
    assert_eq!(r.stdout.lines().last().unwrap(), summary, "{}", r.stdout);
    assert!(!r.stdout.contains("below"), "{}", r.stdout);
}

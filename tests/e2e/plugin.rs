//! The plugin as users install it, with the real CLIs (issue 5, "Proof"):
//! - claude: `plugin validate --strict` passes on the repository and on
//!   plugin/; `plugin marketplace add` + `plugin install` succeed; a
//!   `claude -p --output-format stream-json --verbose` session lists the
//!   skill `baton:peer` in its `init` event, the mock invokes it with the
//!   `Skill` tool and gets SKILL.md's body, then runs `baton` from PATH;
//! - codex: `plugin marketplace add` + `plugin add` succeed and the copy
//!   codex keeps in its cache runs (`bin/baton --version`, modes kept);
//! - pi: `pi install <path>` + `pi list`, and a session's system prompt
//!   carries the skill's name, description and SKILL.md location (pi's way:
//!   it lists skills there and the model reads the file when one applies).
//!
//! Each test installs a copy of the plugin files (the CLIs write beside a
//! marketplace they add; the checkout is never touched) whose directory
//! name has a space, and checks that the shim each CLI ends up with starts
//! the committed binary for this platform: it names its (musl) target in
//! `--version`, which the cargo-built binary under test does not.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::mock::Api;
use crate::support::{Agent, Peer, turns};

const VERSION: &str = env!("CARGO_PKG_VERSION");
const CHECKOUT: &str = env!("CARGO_MANIFEST_DIR");
/// A guard so no CLI can hang the suite (each takes seconds here).
const CLI_TIMEOUT: Duration = Duration::from_secs(180);

/// The plugin directory and the files the marketplaces, pi and gemini read, as
/// tracked by git but with their work-tree content (what is being tested).
const PLUGIN_FILES: [&str; 9] = [
    ".claude-plugin",
    ".agents",
    "plugin",
    "gemini-extension.json",
    "skills",
    "package.json",
    "README.md",
    "LICENSE",
    "Cargo.toml",
];

/// Copy the plugin files of the checkout to `<peer root>/baton repo`
/// (modes kept: `fs::copy` copies permissions).
pub(crate) fn plugin_repo(peer: &Peer) -> PathBuf {
    let dst = peer.root.join("baton repo");
    let out = Command::new("git")
        .args(["ls-files", "-z", "--"])
        .args(PLUGIN_FILES)
        .current_dir(CHECKOUT)
        .output()
        .expect("run git ls-files");
    assert!(out.status.success(), "git ls-files in {CHECKOUT} failed");
    let mut n = 0;
    for rel in out.stdout.split(|b| *b == 0).filter(|s| !s.is_empty()) {
        let rel = Path::new(std::str::from_utf8(rel).expect("UTF-8 path"));
        let to = dst.join(rel);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(Path::new(CHECKOUT).join(rel), &to)
            .unwrap_or_else(|e| panic!("copy {}: {e}", rel.display()));
        n += 1;
    }
    assert!(
        dst.join("plugin/bin/baton").is_file(),
        "no shim among the {n} files copied"
    );
    dst
}

pub(crate) fn json_file(path: &Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `name` of a marketplace file (`rel` under the repository copy).
fn marketplace(repo: &Path, rel: &str) -> String {
    json_file(&repo.join(rel))["name"]
        .as_str()
        .unwrap_or_else(|| panic!("{rel} has no name"))
        .to_string()
}

/// SKILL.md's front-matter `description` and the first line of its body.
pub(crate) fn skill_parts(repo: &Path) -> (String, String) {
    let text = fs::read_to_string(repo.join("plugin/skills/peer/SKILL.md")).unwrap();
    let rest = text.strip_prefix("---\n").expect("front matter");
    let (front, body) = rest.split_once("\n---\n").expect("front matter end");
    let desc = front
        .lines()
        .find_map(|l| l.strip_prefix("description: "))
        .expect("a one-line description")
        .to_string();
    let first = body
        .lines()
        .find(|l| !l.trim().is_empty())
        .expect("a body")
        .to_string();
    (desc, first)
}

/// What `bin/baton --version` prints here when the shim found the committed
/// binary for this platform.
fn committed_version_prefix() -> String {
    let triple = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "x86_64-unknown-linux-musl",
        ("linux", "aarch64") => "aarch64-unknown-linux-musl",
        ("macos", "x86_64") => "x86_64-apple-darwin",
        ("macos", "aarch64") => "aarch64-apple-darwin",
        (os, arch) => panic!("the plugin ships no binary for {os}/{arch}"),
    };
    format!("baton {VERSION} ({triple}, commit ")
}

/// A program with arguments, in the peer's env and work dir.
pub(crate) fn cmd<I, S>(peer: &Peer, program: &str, args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut c = peer.cli(program);
    c.args(args);
    c
}

pub(crate) struct Ran {
    label: String,
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Ran {
    pub(crate) fn dump(&self) -> String {
        format!(
            "{}: exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.label,
            self.code,
            self.stdout.trim(),
            self.stderr.trim()
        )
    }

    /// Panics unless the command exited 0.
    pub(crate) fn ok(self) -> Ran {
        assert_eq!(self.code, Some(0), "{}", self.dump());
        self
    }
}

/// Run `c` to its end (killed as a group after `CLI_TIMEOUT`), `input` on
/// stdin; stdout and stderr go to files under `<peer root>/logs/`.
pub(crate) fn run(peer: &Peer, label: &str, mut c: Command, input: Option<&str>) -> Ran {
    let dir = peer.root.join("logs");
    fs::create_dir_all(&dir).unwrap();
    let file = |ext: &str| dir.join(format!("{label}.{ext}"));
    if let Some(text) = input {
        fs::write(file("stdin"), text).unwrap();
        c.stdin(fs::File::open(file("stdin")).unwrap());
    }
    c.stdout(fs::File::create(file("stdout")).unwrap())
        .stderr(fs::File::create(file("stderr")).unwrap())
        .process_group(0);
    let mut child = c
        .spawn()
        .unwrap_or_else(|e| panic!("{label}: cannot start {:?}: {e}", c.get_program()));
    let end = Instant::now() + CLI_TIMEOUT;
    let code = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st.code();
        }
        if Instant::now() >= end {
            // SAFETY: kill has no memory preconditions; the group is the child's own.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let read = |ext| fs::read_to_string(file(ext)).unwrap_or_default();
    Ran {
        label: label.to_string(),
        code,
        stdout: read("stdout"),
        stderr: read("stderr"),
    }
}

/// `bin/baton --version` of an installed plugin copy must start the
/// committed binary for this platform.
pub(crate) fn assert_shim_runs(peer: &Peer, plugin_root: &Path, label: &str) -> String {
    let shim = plugin_root.join("bin/baton");
    let mode = fs::metadata(&shim)
        .unwrap_or_else(|e| panic!("{}: {e}", shim.display()))
        .permissions()
        .mode();
    assert!(mode & 0o111 != 0, "{} lost its x bits", shim.display());
    let r = run(
        peer,
        label,
        cmd(peer, shim.to_str().unwrap(), ["--version"]),
        None,
    )
    .ok();
    let want = committed_version_prefix();
    assert!(
        r.stdout.starts_with(&want),
        "want `{want}…` from the committed binary\n{}",
        r.dump()
    );
    r.stdout.trim().to_string()
}

/// Every string in a JSON value, joined (what a request says, wherever).
pub(crate) fn strings(v: &Value) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    walk(v, &mut out);
    out
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn claude_validates_the_marketplace_and_the_plugin_strictly() {
    let p = Peer::new(Agent::Claude, "plugin-validate");
    let repo = plugin_repo(&p);
    let plugin = repo.join("plugin");
    for (label, target) in [("root", &repo), ("plugin", &plugin)] {
        let strict = cmd(&p, "claude", ["plugin", "validate", "--strict"]);
        let r = run(&p, &format!("validate-{label}"), arg(strict, target), None).ok();
        assert!(r.stdout.contains("Validation passed"), "{}", r.dump());

        // The same, machine-readable: no error and no warning at all.
        let strict = cmd(&p, "claude", ["plugin", "validate", "--strict", "--json"]);
        let r = run(
            &p,
            &format!("validate-{label}-json"),
            arg(strict, target),
            None,
        )
        .ok();
        let v: Value =
            serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}\n{}", r.dump()));
        assert_eq!(v["success"], true, "{}", r.dump());
        assert_eq!(
            v["manifest"]["errors"],
            Value::Array(vec![]),
            "{}",
            r.dump()
        );
        assert_eq!(
            v["manifest"]["warnings"],
            Value::Array(vec![]),
            "{}",
            r.dump()
        );
        if label == "plugin" {
            assert_eq!(v["manifest"]["type"], "plugin");
            assert_eq!(
                v["provides"]["skills"],
                serde_json::json!(["baton:peer"]),
                "{}",
                r.dump()
            );
            let bins = strings(&v["provides"]["bin"]);
            assert!(bins.lines().any(|b| b == "baton"), "{}", r.dump());
        } else {
            assert_eq!(v["manifest"]["type"], "marketplace");
        }
    }
    // The plugin-directory (catalog) checks as blocking: README, LICENSE.
    let dir = cmd(
        &p,
        "claude",
        [
            "plugin",
            "validate",
            "--strict",
            "--json",
            "--profile",
            "directory",
        ],
    );
    let r = run(&p, "validate-directory", arg(dir, &plugin), None).ok();
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}\n{}", r.dump()));
    assert_eq!(v["success"], true, "{}", r.dump());
    assert_eq!(v["directory"]["profile"], "directory", "{}", r.dump());
    assert_eq!(v["directory"]["incomplete"], false, "{}", r.dump());
    assert_eq!(
        v["directory"]["findings"],
        Value::Array(vec![]),
        "{}",
        r.dump()
    );
}

pub(crate) fn arg(mut c: Command, a: impl AsRef<OsStr>) -> Command {
    c.arg(a);
    c
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn claude_installs_the_plugin_and_a_session_loads_the_skill() {
    let p = Peer::new(Agent::Claude, "plugin-session");
    let repo = plugin_repo(&p);
    let mkt = marketplace(&repo, ".claude-plugin/marketplace.json");
    let spec = format!("baton@{mkt}");
    let add = cmd(&p, "claude", ["plugin", "marketplace", "add"]);
    run(&p, "marketplace-add", arg(add, &repo), None).ok();
    let r = run(
        &p,
        "install",
        cmd(&p, "claude", ["plugin", "install", &spec]),
        None,
    )
    .ok();
    assert!(r.stdout.contains("Successfully installed"), "{}", r.dump());

    // claude copies the plugin into its cache; that copy's shim must run.
    let installed = json_file(&p.home.join(".claude/plugins/installed_plugins.json"));
    let entry = &installed["plugins"][&spec][0];
    assert_eq!(entry["version"], VERSION, "{installed}");
    let root = PathBuf::from(entry["installPath"].as_str().expect("installPath"));
    let version = assert_shim_runs(&p, &root, "cached-shim");

    // A headless session: the skill is listed, loads, and `baton` is on PATH.
    let (id, task) = p.prompt("E2E-PLUGIN-SKILL");
    let session = cmd(
        &p,
        "claude",
        [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--allowedTools",
            "Bash",
        ],
    );
    let r = run(&p, "session", session, Some(&task)).ok();
    let events: Vec<Value> = r
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let init = events
        .iter()
        .find(|e| e["type"] == "system" && e["subtype"] == "init")
        .unwrap_or_else(|| panic!("no init event\n{}", r.dump()));
    let skills = strings(&init["skills"]);
    assert!(
        skills.lines().any(|s| s == "baton:peer"),
        "init.skills lacks baton:peer: {}",
        init["skills"]
    );
    let plugins = init["plugins"].as_array().cloned().unwrap_or_default();
    let loaded = plugins
        .iter()
        .find(|x| x["name"] == "baton" && x["source"] == spec && x["version"] == VERSION)
        .unwrap_or_else(|| panic!("init.plugins lacks {spec} {VERSION}: {}", init["plugins"]));
    // A directory marketplace's plugin is read from its source folder, not
    // from the cache copy (shared/realcli/claude-gemini.md §8): here the
    // path with a space.
    let live = PathBuf::from(loaded["path"].as_str().unwrap_or_default());
    assert_eq!(live, repo.join("plugin"), "{}", init["plugins"]);
    let result = events
        .iter()
        .find(|e| e["type"] == "result")
        .unwrap_or_else(|| panic!("no result event\n{}", r.dump()));
    assert_eq!(result["is_error"], false, "{}", r.dump());

    let reqs: Vec<_> = turns(&id)
        .into_iter()
        .filter(|q| q.api == Api::Anthropic)
        .collect();
    let steps: Vec<usize> = reqs.iter().map(|q| q.step).collect();
    assert_eq!(steps, [0, 1, 2], "Skill, Bash, answer\n{}", r.dump());
    let (desc, body_line) = skill_parts(&repo);
    // Before any call the model is told the skill exists and what it is for.
    assert!(
        strings(&reqs[0].body).contains(&desc),
        "the first request does not carry the skill's description"
    );
    assert!(
        !strings(&reqs[0].body).contains(&body_line),
        "the body must only come when the skill is invoked"
    );
    // The Skill call brought SKILL.md's body, from the installed copy.
    let after_skill = strings(&reqs[1].body);
    assert!(
        after_skill.contains(&body_line),
        "SKILL.md's body did not reach the model after the Skill call"
    );
    let base = format!(
        "Base directory for this skill: {}",
        live.join("skills/peer").display()
    );
    assert!(after_skill.contains(&base), "no `{base}` in the request");
    // The body's `${CLAUDE_PLUGIN_ROOT}/bin/baton` arrives resolved.
    let shim = live.join("bin/baton");
    assert!(
        after_skill.contains(&format!("`{}`", shim.display()))
            && !after_skill.contains("${CLAUDE_PLUGIN_ROOT}"),
        "the skill's shim path did not arrive resolved to {}",
        shim.display()
    );
    // `baton` on the Bash tool's PATH is that shim, and it started the
    // committed binary.
    let answer = result["result"].as_str().unwrap_or_default();
    assert!(answer.starts_with("PLUGIN-SKILL-DONE"), "{}", r.dump());
    assert!(
        answer.contains(&format!("<{}\n", shim.display())),
        "`command -v baton` is not {}\n{answer}",
        shim.display()
    );
    assert!(answer.contains(&version), "{answer}");
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn codex_installs_the_plugin_and_its_cached_shim_runs() {
    let p = Peer::new(Agent::Codex, "plugin-install");
    let repo = plugin_repo(&p);
    let mkt = marketplace(&repo, ".agents/plugins/marketplace.json");
    // The suite's codex config turns plugins off (so runs look nothing up
    // outside); installing needs them on.
    let add = cmd(
        &p,
        "codex",
        ["plugin", "--enable", "plugins", "marketplace", "add"],
    );
    let r = run(&p, "marketplace-add", arg(add, &repo), None).ok();
    assert!(
        r.stdout.contains(&format!("Added marketplace `{mkt}`")),
        "{}",
        r.dump()
    );
    let spec = format!("baton@{mkt}");
    let r = run(
        &p,
        "plugin-add",
        cmd(&p, "codex", ["plugin", "--enable", "plugins", "add", &spec]),
        None,
    )
    .ok();
    let root = r
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("Installed plugin root: "))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no plugin root reported\n{}", r.dump()));
    assert_eq!(
        root,
        p.home
            .join(".codex/plugins/cache")
            .join(&mkt)
            .join("baton")
            .join(VERSION),
        "codex keeps the plugin under its cache, by version"
    );
    assert!(root.join("skills/peer/SKILL.md").is_file());
    assert!(root.join(".codex-plugin/plugin.json").is_file());
    assert_shim_runs(&p, &root, "cached-shim");

    // A session with plugins on lists the skill to the model: name,
    // description and a short path under a "skill root" alias.
    let (id, task) = p.prompt("E2E-PLAIN");
    let session = cmd(
        &p,
        "codex",
        [
            "exec",
            "--enable",
            "plugins",
            "--json",
            "--skip-git-repo-check",
            "--sandbox",
            "read-only",
            "-",
        ],
    );
    let r = run(&p, "session", session, Some(&task)).ok();
    assert!(r.stdout.contains("PLAIN-ANSWER"), "{}", r.dump());
    let reqs = turns(&id);
    assert_eq!(reqs.len(), 1, "{}", r.dump());
    let text = strings(&reqs[0].body);
    let (desc, _) = skill_parts(&repo);
    let entry = text
        .lines()
        .find_map(|l| l.strip_prefix("- baton:peer: "))
        .unwrap_or_else(|| panic!("no skill baton:peer offered to the model\n{text}"));
    let file = entry
        .strip_prefix(&desc)
        .and_then(|rest| rest.strip_prefix(" (file: "))
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("the entry is not `<description> (file: …)`: {entry}"));
    let (alias, rel) = file.split_once('/').expect("an aliased path");
    let alias_root = text
        .lines()
        .find_map(|l| l.strip_prefix(&format!("- `{alias}` = `")))
        .and_then(|rest| rest.strip_suffix('`'))
        .unwrap_or_else(|| panic!("no skill root {alias}\n{text}"));
    let skill_md = Path::new(alias_root).join(rel);
    assert_eq!(skill_md, root.join("skills/peer/SKILL.md"));
    // The skill's own rule for the shim (../../bin/baton from its folder)
    // lands on the copy checked above.
    assert!(skill_md.parent().unwrap().join("../../bin/baton").is_file());
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn pi_installs_the_package_and_a_session_sees_the_skill() {
    let p = Peer::new(Agent::Pi, "plugin-install");
    let repo = plugin_repo(&p);
    let r = run(&p, "install", arg(cmd(&p, "pi", ["install"]), &repo), None).ok();
    assert!(r.stdout.contains("Installed"), "{}", r.dump());
    let r = run(&p, "list", cmd(&p, "pi", ["list"]), None).ok();
    assert!(
        r.stdout.lines().any(|l| l.trim() == repo.to_str().unwrap()),
        "pi list does not show {}\n{}",
        repo.display(),
        r.dump()
    );

    // pi lists skills in its system prompt, each with name, description and
    // where SKILL.md is; the model reads the file when a task matches.
    let (id, task) = p.prompt("E2E-PLAIN");
    let session = cmd(
        &p,
        "pi",
        ["-p", "--provider", "mock", "--model", "mock-model"],
    );
    let r = run(&p, "session", session, Some(&task)).ok();
    assert!(r.stdout.contains("PLAIN-ANSWER"), "{}", r.dump());
    let reqs = turns(&id);
    assert_eq!(reqs.len(), 1, "{}", r.dump());
    let system = strings(&reqs[0].body["messages"][0]);
    let (desc, _) = skill_parts(&repo);
    let skill_md = repo.join("plugin/skills/peer/SKILL.md");
    for want in [
        "<name>peer</name>".to_string(),
        format!("<description>{}</description>", xml(&desc)),
        format!("<location>{}</location>", xml(skill_md.to_str().unwrap())),
    ] {
        assert!(
            system.contains(&want),
            "pi's system prompt lacks {want}\n{system}"
        );
    }
    // The skill tells the host where the shim is: ../../bin/baton from the
    // SKILL.md folder. pi runs it from the installed path (a reference to
    // the repository copy, whose name has a space).
    let plugin_root = skill_md.parent().unwrap().join("../..");
    assert_shim_runs(&p, &plugin_root, "shim");
}

/// pi's escaping of skill fields in its system prompt.
pub(crate) fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

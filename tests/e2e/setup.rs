//! `baton setup` and the gemini extension, proven with the real CLIs:
//! - after `baton setup <host>` (the host's own config variables in the
//!   env, as a user has them), a real session of each host offers the skill
//!   `peer` to the model the way that host lists skills: claude in its
//!   `init` event and the first request, then the `Skill` call brings the
//!   written SKILL.md, which calls this baton by its absolute path; codex
//!   as `- peer: <description> (file: <alias>/peer/SKILL.md)` with the alias
//!   rooted at `$CODEX_HOME/skills`; pi and gemini in their system prompt
//!   with name, description and the SKILL.md location setup wrote.
//!   `--uninstall` then removes the file and the directories setup made.
//! - gemini: `gemini extensions validate`, `install <repo copy> --consent`
//!   and `list` accept the repository as an extension; a session lists the
//!   skill from the installed copy, and the shim the skill names
//!   (`${extensionPath}/plugin/bin/baton`) starts the committed binary.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::mock::Api;
use crate::plugin::{
    arg, assert_shim_runs, cmd, json_file, plugin_repo, run, skill_parts, strings, xml,
};
use crate::support::{Agent, BATON, Peer, turns};

const CHECKOUT: &str = env!("CARGO_MANIFEST_DIR");
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `baton setup ARGS…` with the peer's env; the one host's report.
fn setup(p: &Peer, label: &str, args: &[&str]) -> Value {
    let mut all = vec!["setup"];
    all.extend(args);
    let r = run(p, label, cmd(p, BATON, &all), None).ok();
    let v: Value =
        serde_json::from_str(r.stdout.trim()).unwrap_or_else(|e| panic!("{e}\n{}", r.dump()));
    assert_eq!(v["status"], "ok", "{v}");
    assert_eq!(v["hosts"].as_array().map(Vec::len), Some(1), "{v}");
    v["hosts"][0].clone()
}

fn one_path(v: &Value) -> PathBuf {
    let a = v.as_array().unwrap_or_else(|| panic!("not a list: {v}"));
    assert_eq!(a.len(), 1, "{v}");
    PathBuf::from(a[0].as_str().unwrap())
}

/// Install for `host`, check the file, run `session` (which asserts the
/// host offers the skill), then uninstall.
fn install_then(p: &Peer, host: &str, want: &Path, session: impl FnOnce(&Path)) {
    let rep = setup(p, "setup", &[host]);
    let written = one_path(&rep["written"]);
    assert_eq!(written, want, "{rep}");
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(
        text.contains(&format!("baton binary at `{BATON}`")),
        "{text}"
    );
    // A rerun writes nothing.
    let again = setup(p, "setup-again", &[host]);
    assert_eq!(again["written"], serde_json::json!([]), "{again}");

    session(&written);

    let rep = setup(p, "uninstall", &[host, "--uninstall"]);
    assert_eq!(one_path(&rep["removed"]), written, "{rep}");
    assert!(!written.exists());
    assert!(
        !written.parent().unwrap().exists(),
        "setup made peer/ and must remove it"
    );
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn claude_session_offers_and_loads_the_skill_setup_wrote() {
    let p = Peer::new(Agent::Claude, "setup");
    let want = p.home.join(".claude/skills/peer/SKILL.md");
    let (desc, body_line) = skill_parts(Path::new(CHECKOUT));
    install_then(&p, "claude", &want, |skill_md| {
        let (id, task) = p.prompt("E2E-SETUP-SKILL");
        let session = cmd(
            &p,
            "claude",
            ["-p", "--output-format", "stream-json", "--verbose"],
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
        assert!(
            strings(&init["skills"]).lines().any(|s| s == "peer"),
            "init.skills lacks peer: {}",
            init["skills"]
        );
        let result = events.iter().find(|e| e["type"] == "result").unwrap();
        assert_eq!(result["result"], "SETUP-SKILL-DONE", "{}", r.dump());

        let reqs: Vec<_> = turns(&id)
            .into_iter()
            .filter(|q| q.api == Api::Anthropic)
            .collect();
        let steps: Vec<usize> = reqs.iter().map(|q| q.step).collect();
        assert_eq!(steps, [0, 1], "Skill, answer\n{}", r.dump());
        let first = strings(&reqs[0].body);
        assert!(
            first.contains(&desc),
            "the first request lacks the description"
        );
        assert!(
            !first.contains(&body_line),
            "the body came before the Skill call"
        );
        let after = strings(&reqs[1].body);
        assert!(
            after.contains(&body_line),
            "the Skill call did not bring the body"
        );
        let base = format!(
            "Base directory for this skill: {}",
            skill_md.parent().unwrap().display()
        );
        assert!(after.contains(&base), "no `{base}`");
        assert!(after.contains(&format!("baton binary at `{BATON}`")));
        assert!(!after.contains("CLAUDE_PLUGIN_ROOT"));
    });
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn codex_session_lists_the_skill_setup_wrote() {
    let p = Peer::new(Agent::Codex, "setup");
    let want = p.home.join(".codex/skills/peer/SKILL.md");
    let (desc, _) = skill_parts(Path::new(CHECKOUT));
    install_then(&p, "codex", &want, |skill_md| {
        let (id, task) = p.prompt("E2E-PLAIN");
        let session = cmd(
            &p,
            "codex",
            [
                "exec",
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
        let entry = text
            .lines()
            .find_map(|l| l.strip_prefix("- peer: "))
            .unwrap_or_else(|| panic!("no skill peer offered to the model\n{text}"));
        let file = entry
            .strip_prefix(&desc)
            .and_then(|rest| rest.strip_prefix(" (file: "))
            .and_then(|rest| rest.strip_suffix(')'))
            .unwrap_or_else(|| panic!("the entry is not `<description> (file: …)`: {entry}"));
        let (alias, rel) = file.split_once('/').expect("an aliased path");
        let root = text
            .lines()
            .find_map(|l| l.strip_prefix(&format!("- `{alias}` = `")))
            .and_then(|rest| rest.strip_suffix('`'))
            .unwrap_or_else(|| panic!("no skill root {alias}\n{text}"));
        assert_eq!(Path::new(root).join(rel), skill_md);
    });
}

/// pi and gemini list skills in the system prompt as XML-ish entries.
fn assert_listed(system: &str, desc: &str, skill_md: &Path) {
    for want in [
        "<name>peer</name>".to_string(),
        format!("<description>{}</description>", xml(desc)),
        format!("<location>{}</location>", xml(skill_md.to_str().unwrap())),
    ] {
        assert!(
            system.contains(&want),
            "the system prompt lacks {want}\n{system}"
        );
    }
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn pi_session_lists_the_skill_setup_wrote() {
    let p = Peer::new(Agent::Pi, "setup");
    let want = p.home.join(".pi/agent/skills/peer/SKILL.md");
    let (desc, _) = skill_parts(Path::new(CHECKOUT));
    install_then(&p, "pi", &want, |skill_md| {
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
        assert_listed(&strings(&reqs[0].body["messages"][0]), &desc, skill_md);
    });
}

/// A headless gemini session on `task`; the main-turn request.
fn gemini_session(p: &Peer, id: &str, task: &str) -> String {
    let session = cmd(p, "gemini", ["--skip-trust", "-o", "json", "-p", task]);
    let r = run(p, "session", session, None).ok();
    assert!(r.stdout.contains("PLAIN-ANSWER"), "{}", r.dump());
    let reqs: Vec<_> = turns(id)
        .into_iter()
        .filter(|q| q.api == Api::Gemini)
        .collect();
    assert_eq!(reqs.len(), 1, "{}", r.dump());
    strings(&reqs[0].body["systemInstruction"])
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn gemini_session_lists_the_skill_setup_wrote() {
    let p = Peer::new(Agent::GeminiCli, "setup");
    let want = p.home.join(".gemini/skills/peer/SKILL.md");
    let (desc, _) = skill_parts(Path::new(CHECKOUT));
    install_then(&p, "gemini", &want, |skill_md| {
        let (id, task) = p.prompt("E2E-PLAIN");
        assert_listed(&gemini_session(&p, &id, &task), &desc, skill_md);
    });
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn gemini_installs_the_extension_and_a_session_sees_the_skill() {
    let p = Peer::new(Agent::GeminiCli, "extension");
    let repo = plugin_repo(&p);
    let r = run(
        &p,
        "validate",
        arg(cmd(&p, "gemini", ["extensions", "validate"]), &repo),
        None,
    )
    .ok();
    // gemini prints these messages on stderr or stdout, depending on the command.
    let said = |r: &crate::plugin::Ran| format!("{}{}", r.stdout, r.stderr);
    assert!(said(&r).contains("successfully validated"), "{}", r.dump());
    let mut install = arg(cmd(&p, "gemini", ["extensions", "install"]), &repo);
    // `--consent` answers the third-party question; the source folder's
    // trust is asked separately (a user answers it at the prompt).
    install.env("GEMINI_CLI_TRUST_WORKSPACE", "true");
    let r = run(&p, "install", arg(install, "--consent"), None).ok();
    assert!(
        said(&r).contains("Extension \"baton\" installed successfully"),
        "{}",
        r.dump()
    );
    let r = run(&p, "list", cmd(&p, "gemini", ["extensions", "list"]), None).ok();
    let list = said(&r);
    assert!(list.contains(&format!("baton ({VERSION})")), "{}", r.dump());
    let source = format!("Source: {} (Type: local)", repo.display());
    assert!(list.contains(&source), "{}", r.dump());
    let root = p.home.join(".gemini/extensions/baton");
    assert!(
        list.contains(&format!("Path: {}", root.display())),
        "{}",
        r.dump()
    );
    let (desc, _) = skill_parts(&repo);
    assert!(list.contains(&format!("  peer: {desc}")), "{}", r.dump());
    let manifest = json_file(&root.join("gemini-extension.json"));
    assert_eq!(manifest["version"], VERSION);

    let (id, task) = p.prompt("E2E-PLAIN");
    let skill_md = root.join("skills/peer/SKILL.md");
    assert_listed(&gemini_session(&p, &id, &task), &desc, &skill_md);
    // The skill names the shim as `${extensionPath}/plugin/bin/baton`
    // (gemini fills in the extension's path); that shim must run.
    let text = std::fs::read_to_string(&skill_md).unwrap();
    assert!(text.contains("`${extensionPath}/plugin/bin/baton`"));
    assert_shim_runs(&p, &root.join("plugin"), "extension-shim");
}

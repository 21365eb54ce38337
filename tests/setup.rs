//! `baton setup` into a temporary HOME: every host, twice (the second run
//! writes nothing), `--uninstall` restoring the tree exactly, `--dry-run`
//! touching nothing, `--force` and conflicts, updates, project scope.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use crate::support::{BATON, Env, Run};

/// Every path under `root` with its content, mode and modification time
/// (`None` for a directory, whose time changes with any entry added and
/// removed): "nothing changed" means all three.
type Tree = BTreeMap<PathBuf, (Option<Vec<u8>>, u32, Option<SystemTime>)>;

fn tree(root: &Path) -> Tree {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let m = fs::symlink_metadata(&p).unwrap();
            let (content, time) = if m.is_dir() {
                stack.push(p.clone());
                (None, None)
            } else {
                (Some(fs::read(&p).unwrap()), Some(m.modified().unwrap()))
            };
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            out.insert(rel, (content, m.permissions().mode(), time));
        }
    }
    out
}

struct Home {
    env: Env,
    home: PathBuf,
}

impl Home {
    fn new() -> Home {
        let env = Env::new();
        let home = env.tmp.path().join("home");
        fs::create_dir_all(&home).unwrap();
        Home { env, home }
    }

    /// `exe ARGS…` with HOME here and none of the hosts' own variables.
    fn baton(&self, exe: &Path, args: &[&str]) -> Run {
        let mut c = std::process::Command::new(exe);
        c.current_dir(&self.env.work)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &self.home)
            .args(args);
        // ETXTBSY: another test's child, between fork and exec, may still
        // hold a descriptor this binary was written through.
        for _ in 0..50 {
            match c.output() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                r => return Run::from(r.expect("run baton")),
            }
        }
        panic!("{} stayed busy for a second", exe.display());
    }

    fn setup(&self, args: &[&str]) -> Run {
        let mut all = vec!["setup"];
        all.extend(args);
        self.baton(Path::new(BATON), &all)
    }

    fn skill(&self, host: &str) -> PathBuf {
        self.home.join(match host {
            "claude" => ".claude/skills/peer/SKILL.md",
            "codex" => ".codex/skills/peer/SKILL.md",
            "pi" => ".pi/agent/skills/peer/SKILL.md",
            "gemini" => ".gemini/skills/peer/SKILL.md",
            _ => unreachable!(),
        })
    }
}

const HOSTS: [&str; 4] = ["claude", "codex", "pi", "gemini"];

fn host<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["host"] == name)
        .unwrap_or_else(|| panic!("no host {name} in {report}"))
}

fn paths(v: &Value) -> Vec<PathBuf> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| PathBuf::from(p.as_str().unwrap()))
        .collect()
}

fn reasons(v: &Value) -> Vec<(PathBuf, String)> {
    v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                PathBuf::from(s["path"].as_str().unwrap()),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn every_host_twice_then_uninstall_leaves_the_home_as_it_was() {
    let h = Home::new();
    // Someone else's files, which setup must leave alone.
    fs::create_dir_all(h.home.join(".claude")).unwrap();
    fs::write(h.home.join(".claude/settings.json"), "{}\n").unwrap();
    let other = h.home.join(".pi/agent/skills/other/SKILL.md");
    fs::create_dir_all(other.parent().unwrap()).unwrap();
    fs::write(&other, "---\nname: other\n---\n").unwrap();
    let before = tree(&h.home);

    let r = h.setup(&["all"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let first = r.json();
    assert_eq!(first["status"], "ok");
    assert_eq!(first["action"], "install");
    assert_eq!(first["baton"], BATON);
    for name in HOSTS {
        let rep = host(&first, name);
        assert_eq!(paths(&rep["written"]), [h.skill(name)], "{name}");
        let text = fs::read_to_string(h.skill(name)).unwrap();
        assert!(
            text.contains(&format!("baton binary at `{BATON}`")),
            "{name}"
        );
        assert!(!text.contains("CLAUDE_PLUGIN_ROOT"));
        let mode = fs::metadata(h.skill(name)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
    }
    let man = paths(&host(&first, "man")["written"]);
    let man1 = h.home.join(".local/share/man/man1");
    assert!(man.contains(&man1.join("baton.1")), "{man:?}");
    assert!(man.contains(&man1.join("baton-setup.1")), "{man:?}");
    assert!(man.iter().all(|p| p.is_file()));
    let manifest = h.home.join(".local/state/baton/setup.json");
    assert_eq!(first["manifest"], manifest.to_str().unwrap());
    let recorded: Value = serde_json::from_str(&fs::read_to_string(&manifest).unwrap()).unwrap();
    assert_eq!(recorded["files"].as_array().unwrap().len(), 4 + man.len());
    let installed = tree(&h.home);

    // Again: nothing written, not even the manifest; every file `unchanged`.
    let second = h.setup(&["all"]).json();
    for rep in second["hosts"].as_array().unwrap() {
        assert_eq!(rep["written"], serde_json::json!([]), "{rep}");
        assert!(reasons(rep).iter().all(|(_, r)| r == "unchanged"), "{rep}");
    }
    assert_eq!(tree(&h.home), installed, "the second run changed something");

    let r = h.setup(&["all", "--uninstall"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let gone = r.json();
    assert_eq!(gone["action"], "uninstall");
    for name in HOSTS {
        assert_eq!(paths(&host(&gone, name)["removed"]), [h.skill(name)]);
    }
    assert_eq!(paths(&host(&gone, "man")["removed"]).len(), man.len());
    assert_eq!(tree(&h.home), before, "uninstall did not restore the home");

    // Nothing recorded any more: a second uninstall has nothing to do.
    let again = h.setup(&["all", "--uninstall"]).json();
    for rep in again["hosts"].as_array().unwrap() {
        assert_eq!(rep["removed"], serde_json::json!([]));
    }
    assert_eq!(tree(&h.home), before);
}

#[test]
fn dry_run_lists_every_path_and_writes_nothing() {
    let h = Home::new();
    let before = tree(&h.home);
    let r = h.setup(&["claude", "gemini", "--man", "--dry-run"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["dry_run"], true);
    assert_eq!(paths(&host(&v, "claude")["written"]), [h.skill("claude")]);
    assert_eq!(paths(&host(&v, "gemini")["written"]), [h.skill("gemini")]);
    assert!(paths(&host(&v, "man")["written"]).len() > 10);
    assert_eq!(v["hosts"].as_array().unwrap().len(), 3);
    assert_eq!(tree(&h.home), before);

    // After a real install, a dry uninstall lists and keeps everything.
    assert_eq!(h.setup(&["pi"]).code, 0);
    let installed = tree(&h.home);
    let v = h.setup(&["pi", "--uninstall", "--dry-run"]).json();
    assert_eq!(paths(&host(&v, "pi")["removed"]), [h.skill("pi")]);
    assert_eq!(tree(&h.home), installed);

    let text = h.setup(&["pi", "--uninstall", "--dry-run", "--text"]);
    assert!(
        text.stdout
            .contains(&format!("would remove {}", h.skill("pi").display())),
        "{}",
        text.stdout
    );
}

#[test]
fn a_file_setup_did_not_write_is_kept_unless_force() {
    let h = Home::new();
    let mine = h.skill("codex");
    fs::create_dir_all(mine.parent().unwrap()).unwrap();
    fs::write(&mine, "my own peer skill\n").unwrap();

    let r = h.setup(&["codex"]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["status"], "conflict");
    assert!(v["hint"].as_str().unwrap().contains("--force"));
    assert_eq!(
        reasons(host(&v, "codex")),
        [(mine.clone(), "not_ours".into())]
    );
    assert_eq!(fs::read_to_string(&mine).unwrap(), "my own peer skill\n");
    // Not ours, so uninstall leaves it too.
    let v = h.setup(&["codex", "--uninstall"]).json();
    assert_eq!(v["hosts"][0]["removed"], serde_json::json!([]));
    assert!(mine.is_file());

    let r = h.setup(&["codex", "--force"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(
        paths(&r.json()["hosts"][0]["written"]),
        std::slice::from_ref(&mine)
    );
    assert!(fs::read_to_string(&mine).unwrap().contains(BATON));

    // Edited after setup wrote it: setup neither replaces nor removes it…
    fs::write(&mine, "edited\n").unwrap();
    let r = h.setup(&["codex"]);
    assert_eq!(r.code, 2);
    assert_eq!(fs::read_to_string(&mine).unwrap(), "edited\n");
    let r = h.setup(&["codex", "--uninstall"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        reasons(&r.json()["hosts"][0]),
        [(mine.clone(), "changed".into())]
    );
    assert!(mine.is_file());
    // …until --force.
    let r = h.setup(&["codex", "--uninstall", "--force"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(!mine.exists());
    // The directories that were there before setup stay.
    assert!(mine.parent().unwrap().is_dir());
}

#[test]
fn a_moved_baton_updates_the_skill_setup_wrote() {
    let h = Home::new();
    assert_eq!(h.setup(&["claude"]).code, 0);
    // The same binary elsewhere: the skill must now call that path.
    let moved = h.env.tmp.path().join("other place/baton");
    fs::create_dir_all(moved.parent().unwrap()).unwrap();
    // A hard link, not a copy: a copy is written through a descriptor that
    // any test forking at that moment inherits until its exec, and running
    // the copy then fails with ETXTBSY (it failed CI once). A link is never
    // opened for writing. Where the two paths are on different file systems,
    // copy and retry while the file is busy.
    if fs::hard_link(BATON, &moved).is_err() {
        fs::copy(BATON, &moved).unwrap();
    }
    let r = h.baton(&moved, &["setup", "claude"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(paths(&r.json()["hosts"][0]["written"]), [h.skill("claude")]);
    let text = fs::read_to_string(h.skill("claude")).unwrap();
    assert!(
        text.contains(&format!("'{}' --agent codex", moved.display())),
        "{text}"
    );
}

#[test]
fn project_scope_writes_into_the_repository() {
    let h = Home::new();
    h.env.git_init();
    let r = h.setup(&["claude", "pi", "--scope", "project"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = r.json();
    let claude = h.env.work.join(".claude/skills/peer/SKILL.md");
    let pi = h.env.work.join(".pi/skills/peer/SKILL.md");
    assert_eq!(
        paths(&host(&v, "claude")["written"]),
        std::slice::from_ref(&claude)
    );
    assert_eq!(paths(&host(&v, "pi")["written"]), std::slice::from_ref(&pi));
    assert_eq!(
        v["manifest"],
        h.env.work.join(".baton/setup.json").to_str().unwrap()
    );
    assert!(!h.home.join(".claude").exists());

    let r = h.setup(&["all", "--scope", "project", "--uninstall"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(!claude.exists() && !h.env.work.join(".claude").exists());
    assert!(!pi.exists() && !h.env.work.join(".pi").exists());
}

#[test]
fn the_hosts_own_variables_decide_where_the_skill_goes() {
    let h = Home::new();
    let codex_home = h.env.tmp.path().join("codex home");
    let mut c = std::process::Command::new(BATON);
    c.current_dir(&h.env.work)
        .env_clear()
        .env("HOME", &h.home)
        .env("CODEX_HOME", &codex_home)
        .args(["setup", "codex"]);
    let r = Run::from(c.output().unwrap());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(codex_home.join("skills/peer/SKILL.md").is_file());
    assert!(!h.home.join(".codex").exists());
}

#[test]
fn bad_requests_are_usage_errors_with_a_hint() {
    let h = Home::new();
    for args in [
        &["vim"][..],
        &[][..],
        &["pi", "--scope", "project", "--man"][..],
        &["pi", "--scope", "galaxy"][..],
    ] {
        let r = h.setup(args);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
        let v = r.json();
        assert_eq!(v["error"]["kind"], "usage", "{args:?}");
        assert!(v["error"]["hint"].is_string(), "{args:?}");
    }
    assert_eq!(tree(&h.home), BTreeMap::new());
}

#[test]
fn a_failure_midway_keeps_what_was_written_recorded() {
    let h = Home::new();
    let before = tree(&h.home);
    // `~/.pi` is a file: pi's skills directory cannot be made (as root too).
    fs::write(h.home.join(".pi"), "in the way\n").unwrap();
    let r = h.setup(&["all"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["error"]["kind"], "io", "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains(".pi"),
        "{v}"
    );
    // claude and codex came first and were written…
    assert!(h.skill("claude").is_file() && h.skill("codex").is_file());
    // …and recorded, so uninstall still finds them.
    fs::remove_file(h.home.join(".pi")).unwrap();
    let r = h.setup(&["all", "--uninstall"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(tree(&h.home), before);
}

/// A directory on the way to a file setup wrote, swapped for a symlink
/// after setup (to a directory holding a `SKILL.md` with the very same
/// content), is not followed by `--uninstall`, not even with `--force`: the
/// file the link leads to survives, and the report says which link and why.
#[test]
fn uninstall_does_not_follow_a_link_swapped_in_after_setup() {
    for (swapped, force) in [
        (".claude/skills/peer", false),
        (".claude/skills/peer", true),
        // Above the host's skills folder: caught by the real path recorded.
        (".claude", false),
    ] {
        let h = Home::new();
        let r = h.setup(&["claude"]);
        assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
        let skill = h.skill("claude");
        let content = fs::read(&skill).unwrap();

        // Someone else's directory, with a SKILL.md setup never wrote.
        let theirs = h.env.tmp.path().join("theirs");
        let rel = skill.strip_prefix(h.home.join(swapped)).unwrap();
        fs::create_dir_all(theirs.join(rel).parent().unwrap()).unwrap();
        fs::write(theirs.join(rel), &content).unwrap();
        fs::rename(h.home.join(swapped), h.env.tmp.path().join("moved-away")).unwrap();
        std::os::unix::fs::symlink(&theirs, h.home.join(swapped)).unwrap();

        let mut args = vec!["claude", "--uninstall"];
        if force {
            args.push("--force");
        }
        let r = h.setup(&args);
        assert_eq!(r.code, 2, "{swapped}: {}{}", r.stdout, r.stderr);
        let j = r.json();
        assert_eq!(j["status"], "conflict", "{j}");
        assert!(j["hint"].as_str().unwrap().contains("symlink"), "{j}");
        let rep = host(&j, "claude");
        assert_eq!(rep["removed"], serde_json::json!([]), "{swapped}: {j}");
        assert_eq!(reasons(rep), [(skill.clone(), "link".to_string())], "{j}");
        let detail = rep["skipped"][0]["detail"].as_str().unwrap();
        assert!(
            detail.contains(&format!(
                "{} is a symlink (to {})",
                h.home.join(swapped).display(),
                theirs.display()
            )),
            "{detail}"
        );
        assert!(detail.contains("did not make"), "{detail}");
        assert_eq!(
            fs::read(theirs.join(rel)).unwrap(),
            content,
            "{swapped}: the file behind the link must survive"
        );
        // The text report says it too.
        let t = h.setup(&["claude", "--uninstall", "--text"]);
        assert!(t.stdout.contains("symlink"), "{}", t.stdout);
        assert!(theirs.join(rel).is_file());
    }
}

/// A command with one output form refuses the other flag (exit 2) rather
/// than accepting it and ignoring it (issue 29 §7): `logs --json`,
/// `completions --json`, `man --json` without `--dir`, `mcp --text`.
#[test]
fn an_output_flag_a_command_cannot_honour_is_refused() {
    let env = Env::new();
    for (args, says) in [
        (&["logs", "0000000000000", "--json"][..], "`logs` prints"),
        (&["--json", "logs", "0000000000000"], "`logs` prints"),
        (
            &["completions", "bash", "--json"],
            "`completions` prints a shell script",
        ),
        (&["man", "--json"], "`man` prints a man page"),
        (&["mcp", "--text"], "`mcp` speaks JSON-RPC"),
    ] {
        let r = env.run(args);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(
            all.contains(says) && all.contains("form"),
            "{args:?}: {all}"
        );
    }
    // The form each has still works, and so does the other flag where it
    // means something.
    let r = env.run(&["completions", "bash", "--text"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("complete"), "{}", r.stdout);
    let dir = env.tmp.path().join("man1");
    let r = env.run(&["man", "--dir", dir.to_str().unwrap(), "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["status"], "ok");
    // Unknown job: the usual error, not the flag's.
    let r = env.run(&["logs", "0000000000000", "--text"]);
    assert_eq!(r.code, 4, "{}{}", r.stdout, r.stderr);
}

/// `setup --man`'s help names where the pages really go.
#[test]
fn setup_man_help_names_xdg_data_home() {
    let r = Env::new().run(&["setup", "--help"]);
    assert!(r.stdout.contains("$XDG_DATA_HOME/man/man1"), "{}", r.stdout);
}

//! `baton run --worktree` against the real codex and claude (issue 7): the
//! peer writes in `.baton/worktrees/<id>` on `baton/<id>`, baton commits
//! what it left, the result describes the branch, and the user's checkout
//! (files, index, HEAD, branches) is byte for byte what it was. A peer that
//! commits by itself inside its sandbox proves the git grants baton passes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::support::{Agent, Outcome, Peer, turns};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        // Never refresh the index as a side effect of looking at it.
        .arg("--no-optional-locks")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Everything of the user's checkout baton must not touch: every file's
/// bytes outside `.git` and `.baton`, the index file, HEAD, the branches
/// other than baton's, and `git status`.
fn checkout_state(work: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut m = BTreeMap::new();
    fn walk(root: &Path, dir: &Path, m: &mut BTreeMap<String, Vec<u8>>) {
        for e in fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            if rel == ".git" || rel == ".baton" {
                continue;
            }
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                walk(root, &p, m);
            } else {
                m.insert(rel, fs::read(&p).unwrap());
            }
        }
    }
    walk(work, work, &mut m);
    let git_dir = work.join(".git");
    m.insert(
        ".git/index".into(),
        fs::read(git_dir.join("index")).unwrap(),
    );
    m.insert(".git/HEAD".into(), fs::read(git_dir.join("HEAD")).unwrap());
    let branches: String = git(
        work,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/heads",
        ],
    )
    .lines()
    .filter(|l| !l.starts_with("refs/heads/baton/"))
    .map(|l| format!("{l}\n"))
    .collect();
    m.insert("git branches".into(), branches.into_bytes());
    m.insert(
        "git status".into(),
        git(work, &["status", "--porcelain=v1", "--untracked-files=all"]).into_bytes(),
    );
    m
}

fn assert_unchanged(before: &BTreeMap<String, Vec<u8>>, work: &Path, o: &Outcome) {
    let after = checkout_state(work);
    for (k, v) in before {
        assert_eq!(
            after.get(k),
            Some(v),
            "the user's checkout changed: {k}\n{}",
            o.dump()
        );
    }
    let new: Vec<_> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    assert!(new.is_empty(), "new files in the user's checkout: {new:?}");
}

/// The user has work in progress: an edited tracked file and an untracked
/// one. Without `--include-dirty` it stays theirs alone.
fn dirty_user(p: &Peer) {
    fs::write(
        p.work.join("README.md"),
        "e2e work dir\nuser edit, unsaved\n",
    )
    .unwrap();
    fs::write(p.work.join("notes.txt"), "the user's own notes\n").unwrap();
}

/// The `worktree` object, checked against git itself: path and branch named
/// after the run, the branch checked out there, base = the user's HEAD,
/// and diffstat = `git diff --shortstat base..branch`.
fn check_worktree(p: &Peer, o: &Outcome) -> (PathBuf, String, Value) {
    let w = o.json["worktree"].clone();
    assert!(w.is_object(), "no worktree object\n{}", o.dump());
    assert!(w.get("error").is_none(), "{}", o.dump());
    let id = w["id"].as_str().expect("worktree.id").to_string();
    let path = PathBuf::from(w["path"].as_str().unwrap());
    assert_eq!(
        fs::canonicalize(&path).unwrap(),
        fs::canonicalize(p.work.join(".baton/worktrees").join(&id)).unwrap()
    );
    let branch = format!("baton/{id}");
    assert_eq!(w["branch"], branch.as_str());
    // The imported commit, by its sha (issue 31).
    assert_eq!(w["commit"], w["head"], "{}", o.dump());
    assert_eq!(
        w["merge_hint"],
        format!("git merge {}", w["commit"].as_str().unwrap())
    );
    assert_eq!(
        git(&path, &["symbolic-ref", "HEAD"]).trim(),
        format!("refs/heads/{branch}")
    );
    let base = git(&p.work, &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(w["base"], base.as_str());
    assert_eq!(
        w["head"].as_str(),
        Some(git(&path, &["rev-parse", "HEAD"]).trim())
    );
    // Nothing is left uncommitted in the worktree.
    assert_eq!(git(&path, &["status", "--porcelain"]), "", "{}", o.dump());
    let d = &w["diffstat"];
    let stat = git(&p.work, &["diff", "--shortstat", &base, &branch]);
    let n = |word: &str| -> u64 {
        stat.split(',')
            .find(|s| s.contains(word))
            .and_then(|s| s.split_whitespace().next())
            .and_then(|x| x.parse().ok())
            .unwrap_or(0)
    };
    assert_eq!(
        (
            d["files"].as_u64(),
            d["insertions"].as_u64(),
            d["deletions"].as_u64()
        ),
        (
            Some(n("changed")),
            Some(n("insertion")),
            Some(n("deletion"))
        ),
        "diffstat vs `{}`",
        stat.trim()
    );
    (path, branch, w)
}

fn subjects(w: &Value) -> Vec<String> {
    w["commits"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c["subject"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// One real write task in a worktree: the file lands in the worktree, on
/// the branch, in baton's commit; the user's checkout is untouched.
fn write_task(agent: Agent) {
    let p = Peer::new(agent, "wt-write");
    dirty_user(&p);
    let before = checkout_state(&p.work);
    let (id, task) = p.prompt("E2E-WT-WRITE");
    let o = p.baton().args(["--worktree"]).run(&task);
    assert_eq!((o.code, o.status()), (0, "success"), "{}", o.dump());
    assert!(o.message().contains("WT-DONE"), "{}", o.dump());
    let (path, branch, w) = check_worktree(&p, &o);
    // The peer worked in the worktree: baton's brief named it, the write
    // went there, and the result's cwd is there.
    assert_eq!(
        fs::canonicalize(o.json["cwd"].as_str().unwrap()).unwrap(),
        fs::canonicalize(&path).unwrap()
    );
    let t = turns(&id);
    assert!(
        t[0].prompt.contains(&path.display().to_string()),
        "the brief must name the worktree"
    );
    assert_eq!(t.len(), 2, "the write, then the final answer");
    let content = "worktree line 1\nworktree line 2\n";
    assert_eq!(
        fs::read_to_string(path.join("wt.txt")).ok().as_deref(),
        Some(content)
    );
    assert_eq!(w["changed_files"], json!(["wt.txt"]), "{}", o.dump());
    assert_eq!(
        w["diffstat"],
        json!({"files": 1, "insertions": 2, "deletions": 0})
    );
    // One commit, baton's, holding exactly the file.
    let s = subjects(&w);
    assert_eq!(s.len(), 1, "{}", o.dump());
    assert!(
        s[0].starts_with(&format!("baton: {} run", agent.name())),
        "{s:?}"
    );
    assert_eq!(
        git(&p.work, &["show", &format!("{branch}:wt.txt")]),
        content
    );
    assert_eq!(
        git(&p.work, &["show", "--format=", "--name-only", &branch]).trim(),
        "wt.txt"
    );
    // Not carried without --include-dirty, and the user's edits stay theirs.
    assert_eq!(
        fs::read_to_string(path.join("README.md")).unwrap(),
        "e2e work dir\n"
    );
    assert!(!path.join("notes.txt").exists());
    assert!(!p.work.join("wt.txt").exists());
    assert_unchanged(&before, &p.work, &o);
}

/// The peer commits by itself inside its sandbox (a linked worktree's git
/// metadata lives in the user's `.git`, outside the worktree: baton grants
/// exactly the parts a commit writes), leaves one more file that baton
/// commits on top, then tries to move the user's branch and write their
/// index, which the sandbox refuses. The peer's commit is kept.
fn peer_commits(agent: Agent) {
    let p = Peer::new(agent, "wt-commit");
    // The peer commits with the user's identity, as on a real machine (claude
    // asks approval for `git -c …`, so headless it would be denied).
    fs::write(
        p.home.join(".gitconfig"),
        "[user]\n\tname = peer\n\temail = peer@example.invalid\n",
    )
    .unwrap();
    dirty_user(&p);
    let before = checkout_state(&p.work);
    let (id, task) = p.prompt("E2E-WT-COMMIT");
    let o = p.baton().args(["--worktree"]).run(&task);
    assert_eq!((o.code, o.status()), (0, "success"), "{}", o.dump());
    assert_eq!(turns(&id).len(), 5, "two writes, commit, escape, answer");
    // The escape attempt ran (it was not merely denied permission). Its
    // `git update-ref refs/heads/main` moves the writer's own repository's
    // `main` (MAIN-MOVED, measured with codex and claude since issue 31),
    // never the user's: `assert_unchanged` below compares the user's
    // branches; the user's index stays read-only in the CLI's sandbox.
    assert!(
        o.message().contains("INDEX-KEPT") && !o.message().contains("INDEX-WRITTEN"),
        "the peer must not write the user's index\n{}",
        o.dump()
    );
    let (path, branch, w) = check_worktree(&p, &o);
    let s = subjects(&w);
    assert_eq!(s.len(), 2, "{}", o.dump());
    assert_eq!(s[0], "peer: add peer.txt");
    assert!(
        s[1].starts_with(&format!("baton: {} run", agent.name())),
        "{s:?}"
    );
    assert_eq!(
        w["changed_files"],
        json!(["left.txt", "peer.txt"]),
        "{}",
        o.dump()
    );
    // The peer's commit holds its file; baton's holds what was left.
    assert_eq!(
        git(
            &p.work,
            &["show", "--format=", "--name-only", &format!("{branch}~1")]
        )
        .trim(),
        "peer.txt"
    );
    assert_eq!(
        git(&p.work, &["show", "--format=", "--name-only", &branch]).trim(),
        "left.txt"
    );
    assert!(path.join("left.txt").exists() && path.join("peer.txt").exists());
    assert_unchanged(&before, &p.work, &o);
}

/// Issue 10 item 1: inside its real sandbox the peer points its worktree's
/// `commondir` at a config of its own with a `core.fsmonitor` command (the
/// command appends the name of the process that ran git to `PWNED`). baton
/// must never run it. codex's sandbox lets the peer write `commondir` (the
/// worktree's git directory is granted so that it can commit); claude's
/// kept it read-only in a linked worktree (measured with baton 0.3).
/// Either way an ordinary run now: the writer's repository is its own, and
/// baton's `GIT_COMMON_DIR` overrides the file (issue 31). Recorded in
/// docs/worktree.md (Safety).
fn tamper_commondir(agent: Agent) {
    let p = Peer::new(agent, "wt-tamper-commondir");
    dirty_user(&p);
    let before = checkout_state(&p.work);
    let pwned = p.root.join("PWNED");
    let (_, task) = p.prompt("E2E-WT-TAMPER-COMMONDIR");
    let o = p.baton().args(["--worktree"]).run(&task);
    let ran = fs::read_to_string(&pwned).unwrap_or_default();
    assert!(
        !ran.lines().any(|l| l.trim() == "baton"),
        "baton ran the peer's fsmonitor ({ran:?})\n{}",
        o.dump()
    );
    let written = o.message().contains("COMMONDIR-WRITTEN");
    assert!(
        written || o.message().contains("COMMONDIR-REFUSED"),
        "the exploit did not run\n{}",
        o.dump()
    );
    // Measured 2026-12-07: both codex and claude may write it in the
    // writer's own `.git`, which is theirs to commit in; baton ignores it.
    assert!(
        written,
        "what the sandbox allows changed: update docs/worktree.md (Safety)\n{}",
        o.dump()
    );
    assert_eq!((o.code, o.status()), (0, "success"), "{}", o.dump());
    let (_, _, w) = check_worktree(&p, &o);
    assert_eq!(w["changed_files"], json!(["README.md"]), "{}", o.dump());
    assert_unchanged(&before, &p.work, &o);
}

/// Issue 10 item 2: the peer removes its worktree's `.git`, then writes one
/// naming the user's git directory. Unchecked, baton's git calls would fall
/// through to the user's repository (commit their work in progress, switch
/// their branch). codex's and claude's sandboxes mount `.git` read-only
/// (so the run was an ordinary one; to be measured again with the writer's
/// own repository), and so does baton's around pi (its config and hooks
/// read-only inside the writable checkout); pi with `--sandbox off` can
/// rewire it, and baton must refuse the rewired repository.
fn tamper_git_file(agent: Agent) {
    tamper_git_file_with(agent, "on")
}

fn tamper_git_file_unconfined(agent: Agent) {
    tamper_git_file_with(agent, "off")
}

fn tamper_git_file_with(agent: Agent, sandbox: &str) {
    let p = Peer::new(agent, &format!("wt-tamper-rmgit-{sandbox}"));
    dirty_user(&p);
    let before = checkout_state(&p.work);
    let (_, task) = p.prompt("E2E-WT-TAMPER-RMGIT");
    let mut args = vec!["--worktree"];
    if sandbox == "off" {
        args.extend(["--sandbox", "off"]);
    }
    let o = p.baton().args(args).run(&task);
    // Each marker as a line of the command's output: a CLI that refuses the
    // command echoes it, markers and all (codex: "rm -f style commands are
    // not permitted").
    let m = o.message();
    let said = |w: &str| m.split(['\n', '<', '>']).any(|l| l.trim() == w);
    let (removed, written) = (said("RMGIT-DONE"), said("DOTGIT-WRITTEN"));
    if sandbox == "off" {
        // Unconfined, pi removes the writer's `.git` directory and writes a
        // `.git` file naming the user's: baton refuses the rewired repository.
        assert_eq!((removed, written), (true, true), "{}", o.dump());
        tampered(&p, &o, ".git", &before);
        return;
    }
    // Under a sandbox what each allows differs (measured 2026-12-07: codex
    // refuses `rm -rf` outright; claude's and baton's keep `.git/config` and
    // `.git/hooks` mounted, so the removal is partial and the `.git` file
    // cannot be written): either nothing was rewired and the run is an
    // ordinary one, or baton refuses what is left. Never anything else, and
    // the user's checkout is unchanged either way.
    assert!(!written, "{}", o.dump());
    if o.json["error"]["kind"] == "worktree_tampered" {
        tampered(&p, &o, ".git", &before);
    } else {
        assert_eq!((o.code, o.status()), (0, "success"), "{}", o.dump());
        check_worktree(&p, &o);
        assert_unchanged(&before, &p.work, &o);
    }
}

/// A tampered run: failed with `worktree_tampered`, nothing committed, the
/// user's checkout byte for byte the same, and `worktree remove --force`
/// cleans it up without touching the checkout.
fn tampered(p: &Peer, o: &Outcome, says: &str, before: &BTreeMap<String, Vec<u8>>) {
    assert_eq!((o.code, o.status()), (1, "failed"), "{}", o.dump());
    assert_eq!(o.json["error"]["kind"], "worktree_tampered", "{}", o.dump());
    let msg = o.json["error"]["message"].as_str().unwrap();
    assert!(msg.contains(says), "{msg}");
    let w = &o.json["worktree"];
    assert_eq!(w["tampered"], true, "{}", o.dump());
    let id = w["id"].as_str().unwrap().to_string();
    let base = git(&p.work, &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(
        git(&p.work, &["rev-parse", &format!("refs/heads/baton/{id}")]).trim(),
        base,
        "baton committed"
    );
    assert_unchanged(before, &p.work, o);
    let r = p.baton_exact(&["worktree", "remove", &id, "--force"]);
    assert_eq!(r.code, 0, "{}", r.dump());
    assert!(!p.work.join(".baton/worktrees").join(&id).exists());
    assert!(!git(&p.work, &["worktree", "list", "--porcelain"]).contains(&id));
    assert_unchanged(before, &p.work, &r);
}

/// Outside worktree mode: a workspace peer tries to set `core.fsmonitor`
/// in the user's own repository config. baton's `changed_files` snapshot
/// runs `git status` there after the peer, and must not run the command
/// whatever the sandbox allowed. What it allowed is recorded in
/// docs/worktree.md (Safety).
fn workspace_git_config(agent: Agent) {
    let p = Peer::new(agent, "ws-git-config");
    let pwned = p.root.join("PWNED");
    let (_, task) = p.prompt("E2E-WS-GIT-CONFIG");
    let o = p.baton().run(&task);
    let m = o.message();
    let written = m.contains("CONFIG-WRITTEN");
    assert!(
        written || m.contains("CONFIG-REFUSED"),
        "the command did not run\n{}",
        o.dump()
    );
    assert!(
        !written,
        "the sandbox let the peer write .git/config: update docs/worktree.md (Safety)\n{}",
        o.dump()
    );
    assert_eq!((o.code, o.status()), (0, "success"), "{}", o.dump());
    assert_eq!(
        o.json["changed_files"],
        json!(["README.md"]),
        "{}",
        o.dump()
    );
    let ran = fs::read_to_string(&pwned).unwrap_or_default();
    assert!(
        !ran.lines().any(|l| l.trim() == "baton"),
        "baton ran the peer's fsmonitor ({ran:?})\n{}",
        o.dump()
    );
}

per_agent!([codex => Codex, claude => Claude] write_task, peer_commits, tamper_commondir, workspace_git_config);
per_agent!([codex => Codex, claude => Claude, pi => Pi] tamper_git_file);
per_agent!([pi => Pi] tamper_git_file_unconfined);

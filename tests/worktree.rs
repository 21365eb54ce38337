//! `baton run --worktree` and `baton worktree` against fake peers that edit,
//! create, delete and rename files, commit on their own, or write outside
//! `--allow`, with real git. Every test that runs a peer also proves the
//! user's checkout is byte-for-byte unchanged.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::support::{Env, Run, fixture, record, wait_for};

const OK: &str = "codex/codex-exec-basic.jsonl";

/// git as the tests run it: no global or system config (so rename
/// detection and identity are the same for baton and for the checks).
/// Lower-case hex (sha2 0.11's digest has no `{:x}`).
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn git_cmd(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.arg("-C")
        .arg(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C")
        .env("GIT_AUTHOR_NAME", "Tess")
        .env("GIT_AUTHOR_EMAIL", "tess@example.com")
        .env("GIT_COMMITTER_NAME", "Tess")
        .env("GIT_COMMITTER_EMAIL", "tess@example.com")
        .stdin(Stdio::null());
    c
}

pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_cmd(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn git_ok(dir: &Path, args: &[&str]) -> bool {
    git_cmd(dir)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// A repository with a few files (one binary, one executable) and one commit.
pub(crate) fn repo(env: &Env) -> PathBuf {
    let w = env.work.clone();
    git(&w, &["init", "-q", "-b", "main"]);
    write(&w, "README.md", "# demo\n\nline two\n");
    write(&w, "src/lib.rs", "pub fn one() -> u32 {\n    1\n}\n");
    write(&w, "src/old.txt", "old\nfile\n");
    write(&w, "docs/a.md", "alpha\nbeta\ngamma\n");
    write(&w, "Cargo.toml", "[package]\nname = \"demo\"\n");
    write(&w, "LICENSE", "MIT\n");
    write(&w, "build.rs", "fn main() {}\n");
    write(&w, ".gitignore", "*.log\n/target/\n");
    fs::write(w.join("logo.bin"), [0u8, 159, 146, 150, 0, 1, 2]).unwrap();
    write(&w, "run.sh", "#!/bin/sh\necho run\n");
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(w.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    git(&w, &["add", "."]);
    git(&w, &["commit", "-qm", "init"]);
    w
}

pub(crate) fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// A fake codex that records argv/stdin/pwd, runs `body` in its cwd (the
/// worktree), then prints a successful transcript.
fn peer(env: &Env, body: &str) {
    peer_with(env, body, OK, 0);
}

fn peer_with(env: &Env, body: &str, transcript: &str, code: i32) {
    let f = fixture(transcript);
    env.fake(
        "codex",
        &format!(
            "{}\npwd > \"$FAKE_DIR/codex.pwd\"\n\
             export GIT_AUTHOR_NAME=Peer GIT_AUTHOR_EMAIL=peer@example.com \
             GIT_COMMITTER_NAME=Peer GIT_COMMITTER_EMAIL=peer@example.com\n\
             {body}\ncat '{}'\nexit {code}",
            record("codex"),
            f.display()
        ),
    );
}

pub(crate) fn baton_cmd(env: &Env, args: &[&str]) -> Command {
    let mut c = env.baton();
    c.args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", env.tmp.path())
        .env_remove("GIT_AUTHOR_NAME")
        .env_remove("GIT_AUTHOR_EMAIL")
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .env_remove("EMAIL");
    c
}

pub(crate) fn baton(env: &Env, args: &[&str]) -> Run {
    Run::from(baton_cmd(env, args).output().unwrap())
}

fn wt_run(env: &Env, extra: &[&str]) -> (Run, Value) {
    let mut args = vec!["run", "--agent", "codex", "--worktree"];
    args.extend_from_slice(extra);
    args.push("do the task");
    let r = baton(env, &args);
    let j = r.json();
    (r, j)
}

/// Every byte of the user's checkout that baton must not touch: the files
/// (content, symlink target, mode) outside `.git` and `.baton`, the index,
/// HEAD, config, every ref but baton's own branches, and what `git status`
/// and `git stash list` say.
pub(crate) fn fingerprint(work: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, skip_top: &[&str], out: &mut BTreeMap<String, String>) {
        let mut entries: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap()).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            if dir == root && skip_top.contains(&rel.as_str()) {
                continue;
            }
            let meta = fs::symlink_metadata(&p).unwrap();
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode();
            if meta.file_type().is_symlink() {
                out.insert(rel, format!("link {:?}", fs::read_link(&p).unwrap()));
            } else if meta.is_dir() {
                out.insert(format!("{rel}/"), format!("dir {mode:o}"));
                walk(root, &p, skip_top, out);
            } else {
                let h = hex(&Sha256::digest(fs::read(&p).unwrap()));
                out.insert(rel, format!("{mode:o} {h}"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(work, work, &[".git", ".baton"], &mut out);
    let gitdir = work.join(".git");
    for f in [
        "index",
        "HEAD",
        "config",
        "logs/HEAD",
        "packed-refs",
        "ORIG_HEAD",
    ] {
        let p = gitdir.join(f);
        if p.exists() {
            let h = hex(&Sha256::digest(fs::read(&p).unwrap()));
            out.insert(format!(".git/{f}"), h);
        }
    }
    let mut refs = BTreeMap::new();
    walk(&gitdir.join("refs"), &gitdir.join("refs"), &[], &mut refs);
    for (k, v) in refs {
        if !k.starts_with("heads/baton") {
            out.insert(format!(".git/refs/{k}"), v);
        }
    }
    out.insert(
        "status".into(),
        git(work, &["status", "--porcelain=v1", "-uall"]),
    );
    out.insert("stash".into(), git(work, &["stash", "list"]));
    out.insert(
        "branches".into(),
        git(
            work,
            &[
                "for-each-ref",
                "--format=%(refname) %(objectname)",
                "--exclude=refs/heads/baton/*",
            ],
        ),
    );
    out
}

/// `git diff --stat base..branch`'s summary line as numbers.
fn git_stat(dir: &Path, base: &str, branch: &str) -> (u64, u64, u64) {
    let out = git(dir, &["diff", "--stat", &format!("{base}..{branch}")]);
    let last = out.lines().last().unwrap_or("");
    let num = |word: &str| {
        last.split(',')
            .find(|p| p.contains(word))
            .and_then(|p| p.trim().split(' ').next())
            .map_or(0, |n| n.parse().unwrap())
    };
    (num("changed"), num("insertion"), num("deletion"))
}

fn assert_diffstat_matches_git(work: &Path, w: &Value) {
    let stat = git_stat(
        work,
        w["base"].as_str().unwrap(),
        w["branch"].as_str().unwrap(),
    );
    let d = &w["diffstat"];
    assert_eq!(
        (
            d["files"].as_u64().unwrap(),
            d["insertions"].as_u64().unwrap(),
            d["deletions"].as_u64().unwrap()
        ),
        stat,
        "worktree.diffstat differs from git diff --stat: {w}"
    );
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn subjects(w: &Value) -> Vec<String> {
    w["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["subject"].as_str().unwrap().to_string())
        .collect()
}

fn nothing_created(env: &Env, before: &BTreeMap<String, String>) {
    let w = &env.work;
    assert!(!w.join(".baton").exists(), ".baton was created");
    assert!(!env.called("codex"), "the peer was started");
    if w.join(".git").exists() {
        assert_eq!(
            git(w, &["worktree", "list", "--porcelain"])
                .matches("worktree ")
                .count(),
            1
        );
        assert_eq!(git(w, &["branch", "--list", "baton/*"]), "");
        assert_eq!(&fingerprint(w), before);
    }
}

#[test]
fn peer_edits_creates_deletes_and_renames_in_the_worktree_only() {
    let env = Env::new();
    let w = repo(&env);
    // The user has work in progress of their own; it must survive untouched.
    write(&w, "README.md", "# demo\n\nuser's own edit\n");
    write(&w, "scratch.txt", "user's untracked notes\n");
    git(&w, &["add", "scratch.txt"]);
    write(&w, "debug.log", "ignored\n");
    let before = fingerprint(&w);
    let head = git(&w, &["rev-parse", "HEAD"]).trim().to_string();
    peer(
        &env,
        "printf '# demo\\n\\nline two, edited by the peer\\n' > README.md\n\
         mkdir -p new/dir && printf 'brand new\\n' > new/dir/file.txt\n\
         rm src/old.txt\n\
         mv docs/a.md docs/b.md\n\
         printf '\\001\\002\\003' > logo.bin\n\
         chmod -x run.sh",
    );
    let (r, j) = wt_run(&env, &[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(j["status"], "success");
    let wt = &j["worktree"];
    let id = wt["id"].as_str().unwrap();
    let path = PathBuf::from(wt["path"].as_str().unwrap());
    assert_eq!(
        path,
        w.canonicalize().unwrap().join(".baton/worktrees").join(id)
    );
    assert_eq!(wt["branch"], format!("baton/{id}"));
    assert_eq!(wt["base"], head);
    // The imported commit, named by its sha (issue 31: a branch can move).
    assert_eq!(wt["commit"], wt["head"]);
    assert_eq!(
        wt["merge_hint"],
        format!("git merge {}", wt["head"].as_str().unwrap())
    );
    assert_eq!(
        git(&w, &["rev-parse", &format!("refs/heads/baton/{id}")]).trim(),
        wt["commit"].as_str().unwrap()
    );
    assert_eq!(j["cwd"], path.display().to_string());
    // The peer ran in the worktree, not in the user's checkout.
    assert_eq!(
        fs::read_to_string(env.fake_dir.join("codex.pwd"))
            .unwrap()
            .trim(),
        path.display().to_string()
    );
    // baton committed what the peer left, on the branch, with a named message.
    let tip = git(&w, &["rev-parse", &format!("baton/{id}")])
        .trim()
        .to_string();
    assert_eq!(wt["head"], tip);
    assert_eq!(subjects(wt), [format!("baton: codex run {id} (success)")]);
    let msg = git(&w, &["log", "-1", "--format=%B", &tip]);
    assert!(msg.contains(&format!("Baton-Run: {id}")), "{msg}");
    assert!(msg.contains("Baton-Agent: codex"), "{msg}");
    assert!(msg.contains("Task: do the task"), "{msg}");
    // No identity configured anywhere: baton's own.
    assert_eq!(
        git(&w, &["log", "-1", "--format=%an <%ae>|%cn <%ce>", &tip]).trim(),
        "baton <baton@localhost>|baton <baton@localhost>"
    );
    assert_eq!(
        git(&path, &["status", "--porcelain"]),
        "",
        "worktree left dirty"
    );
    assert_eq!(
        git(&w, &["show", &format!("baton/{id}:new/dir/file.txt")]),
        "brand new\n"
    );
    assert_eq!(
        git(&w, &["show", &format!("baton/{id}:README.md")]),
        "# demo\n\nline two, edited by the peer\n"
    );
    assert!(!git_ok(
        &w,
        &["cat-file", "-e", &format!("baton/{id}:src/old.txt")]
    ));
    let mut changed = strings(&wt["changed_files"]);
    changed.sort();
    assert_eq!(
        changed,
        [
            "README.md",
            "docs/a.md",
            "docs/b.md",
            "logo.bin",
            "new/dir/file.txt",
            "run.sh",
            "src/old.txt"
        ]
    );
    assert_diffstat_matches_git(&w, wt);
    // A sandboxed codex may write its own repository's git metadata, and
    // nothing of the user's `.git` (issue 31).
    let argv = env.argv("codex");
    let common = w.canonicalize().unwrap().join(".git");
    let own = path.join(".git");
    let i = argv
        .iter()
        .position(|a| *a == own.display().to_string())
        .unwrap_or_else(|| panic!("{} not in {argv:?}", own.display()));
    assert_eq!(argv[i - 1], "--add-dir");
    assert!(
        !argv
            .iter()
            .any(|a| a.contains(&common.display().to_string()))
    );
    // The brief names the worktree and its branch.
    let stdin = env.stdin("codex");
    assert!(stdin.contains(&format!("`baton/{id}`")), "{stdin}");
    assert!(stdin.contains(&path.display().to_string()));
    assert_eq!(fingerprint(&w), before, "the user's checkout changed");
}

#[test]
fn the_users_identity_is_used_when_configured() {
    let env = Env::new();
    let w = repo(&env);
    git(&w, &["config", "user.name", "Ursula"]);
    git(&w, &["config", "user.email", "ursula@example.com"]);
    peer(&env, "echo more >> README.md");
    let (r, j) = wt_run(&env, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let tip = j["worktree"]["head"].as_str().unwrap();
    assert_eq!(
        git(&w, &["log", "-1", "--format=%an <%ae>", tip]).trim(),
        "Ursula <ursula@example.com>"
    );
}

#[test]
fn the_peers_own_commits_are_kept_and_the_rest_committed_after_them() {
    let env = Env::new();
    let w = repo(&env);
    let before = fingerprint(&w);
    peer(
        &env,
        "echo 'pub fn two() {}' >> src/lib.rs\n\
         git add src/lib.rs && git commit -qm 'peer: add two'\n\
         echo 'third' > third.txt && git add third.txt && git commit -qm 'peer: third'\n\
         echo 'left over' >> docs/a.md",
    );
    let (r, j) = wt_run(&env, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let wt = &j["worktree"];
    let id = wt["id"].as_str().unwrap();
    assert_eq!(
        subjects(wt),
        [
            "peer: add two".to_string(),
            "peer: third".to_string(),
            format!("baton: codex run {id} (success)")
        ]
    );
    assert_eq!(
        git(&w, &["log", "-1", "--format=%an", &format!("baton/{id}~1")]).trim(),
        "Peer"
    );
    assert_diffstat_matches_git(&w, wt);
    assert_eq!(fingerprint(&w), before);
}

#[test]
fn a_peer_that_commits_everything_or_nothing_gets_no_baton_commit() {
    let env = Env::new();
    let w = repo(&env);
    peer(
        &env,
        "echo x >> LICENSE && git commit -qam 'peer: all of it'",
    );
    let (_, j) = wt_run(&env, &[]);
    assert_eq!(subjects(&j["worktree"]), ["peer: all of it"]);
    assert_diffstat_matches_git(&w, &j["worktree"]);

    peer(&env, "true");
    let (r, j) = wt_run(&env, &[]);
    assert_eq!(r.code, 0);
    let wt = &j["worktree"];
    assert_eq!(wt["commits"], serde_json::json!([]));
    assert_eq!(wt["head"], wt["base"]);
    assert_eq!(
        wt["diffstat"],
        serde_json::json!({"files": 0, "insertions": 0, "deletions": 0})
    );
    assert_eq!(wt["changed_files"], serde_json::json!([]));
}

#[test]
fn allow_reverts_changes_outside_it_even_committed_ones() {
    let env = Env::new();
    let w = repo(&env);
    let before = fingerprint(&w);
    peer(
        &env,
        "echo 'fn main() { println!(\"x\"); }' > build.rs && git commit -qam 'peer: touch build.rs'\n\
         echo 'pub fn two() {}' >> src/lib.rs\n\
         echo 'new' > src/new.rs\n\
         echo 'edited' >> README.md\n\
         echo '[deps]' >> Cargo.toml\n\
         mkdir -p docs && echo 'guide' > docs/guide.md\n\
         rm LICENSE",
    );
    let (r, j) = wt_run(&env, &["--allow", "src/**", "--allow", "*.md"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let wt = &j["worktree"];
    let id = wt["id"].as_str().unwrap();
    let mut reverted = strings(&wt["reverted"]);
    reverted.sort();
    assert_eq!(
        reverted,
        ["Cargo.toml", "LICENSE", "build.rs", "docs/guide.md"]
    );
    let mut changed = strings(&wt["changed_files"]);
    changed.sort();
    assert_eq!(changed, ["README.md", "src/lib.rs", "src/new.rs"]);
    // The branch's net effect is inside --allow; the peer's commit is kept
    // in history and undone by baton's.
    let b = format!("baton/{id}");
    assert_eq!(
        git(&w, &["show", &format!("{b}:build.rs")]),
        "fn main() {}\n"
    );
    assert_eq!(
        git(&w, &["show", &format!("{b}:Cargo.toml")]),
        "[package]\nname = \"demo\"\n"
    );
    assert_eq!(git(&w, &["show", &format!("{b}:LICENSE")]), "MIT\n");
    assert!(!git_ok(
        &w,
        &["cat-file", "-e", &format!("{b}:docs/guide.md")]
    ));
    assert_eq!(git(&w, &["show", &format!("{b}:src/new.rs")]), "new\n");
    assert_eq!(subjects(wt)[0], "peer: touch build.rs");
    let msg = git(&w, &["log", "-1", "--format=%B", &b]);
    assert!(msg.contains("Reverted outside --allow:"), "{msg}");
    // The worktree itself holds what the branch holds.
    let path = PathBuf::from(wt["path"].as_str().unwrap());
    assert_eq!(git(&path, &["status", "--porcelain"]), "");
    assert!(!path.join("docs/guide.md").exists());
    assert!(path.join("LICENSE").exists());
    // The top-level changed_files no longer lists what was reverted.
    for p in strings(&j["changed_files"]) {
        assert!(!reverted.contains(&p), "{p} is listed as changed");
    }
    assert!(
        j["summary"]
            .as_str()
            .unwrap()
            .contains("4 reverted outside --allow")
    );
    assert!(
        strings(&j["warnings"])
            .iter()
            .any(|w| w.contains("outside --allow")),
        "{}",
        j["warnings"]
    );
    assert_diffstat_matches_git(&w, wt);
    assert_eq!(fingerprint(&w), before);
}

#[test]
fn include_dirty_reproduces_staged_unstaged_and_untracked_changes() {
    let env = Env::new();
    let w = repo(&env);
    write(&w, "src/lib.rs", "pub fn one() -> u32 {\n    2\n}\n");
    git(&w, &["add", "src/lib.rs"]); // staged
    write(&w, "src/lib.rs", "pub fn one() -> u32 {\n    3\n}\n"); // and unstaged on top
    write(&w, "README.md", "# demo\n\nunstaged edit\n"); // unstaged
    write(&w, "staged-new.txt", "staged new file\n");
    git(&w, &["add", "staged-new.txt"]); // staged, new
    git(&w, &["rm", "-q", "LICENSE"]); // staged deletion
    fs::remove_file(w.join("build.rs")).unwrap(); // unstaged deletion
    write(&w, "notes/todo.txt", "untracked\n"); // untracked, in a new directory
    fs::write(w.join("untracked.bin"), [0u8, 1, 2, 255]).unwrap();
    write(&w, "debug.log", "ignored, must not travel\n");
    let before = fingerprint(&w);
    let user_status = git(&w, &["status", "--porcelain=v1", "-uall"]);
    let user_cached = git(&w, &["diff", "--cached"]);
    let user_unstaged = git(&w, &["diff"]);
    // The peer reports what it sees, then makes one change of its own.
    peer(
        &env,
        "GIT_OPTIONAL_LOCKS=0 git status --porcelain=v1 -uall > \"$FAKE_DIR/status\"\n\
         git diff --cached > \"$FAKE_DIR/cached\"\n\
         git diff > \"$FAKE_DIR/unstaged\"\n\
         if [ -e debug.log ]; then echo yes > \"$FAKE_DIR/ignored-travelled\"; fi\n\
         echo 'peer line' >> README.md",
    );
    let (r, j) = wt_run(&env, &["--include-dirty"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let read = |n: &str| fs::read_to_string(env.fake_dir.join(n)).unwrap();
    assert_eq!(read("status"), user_status);
    assert_eq!(read("cached"), user_cached);
    assert_eq!(read("unstaged"), user_unstaged);
    assert!(!env.fake_dir.join("ignored-travelled").exists());

    let wt = &j["worktree"];
    let id = wt["id"].as_str().unwrap();
    let mut carried = strings(&wt["carried"]);
    carried.sort();
    assert_eq!(
        carried,
        [
            "LICENSE",
            "README.md",
            "build.rs",
            "notes/todo.txt",
            "src/lib.rs",
            "staged-new.txt",
            "untracked.bin"
        ]
    );
    // The carried state has its own commit, so the peer's work is separable.
    assert_eq!(
        subjects(wt),
        [
            "baton: uncommitted changes carried from `main` (--include-dirty)".to_string(),
            format!("baton: codex run {id} (success)")
        ]
    );
    let b = format!("baton/{id}");
    assert_eq!(
        git(&w, &["diff", "--name-only", &format!("{b}~1"), &b]),
        "README.md\n"
    );
    assert_eq!(
        git(&w, &["show", &format!("{b}:README.md")]),
        "# demo\n\nunstaged edit\npeer line\n"
    );
    assert!(
        strings(&j["warnings"])
            .iter()
            .any(|w| w.contains("carried 7"))
    );
    assert_diffstat_matches_git(&w, wt);
    assert_eq!(
        fingerprint(&w),
        before,
        "the user's checkout or index changed"
    );
}

#[test]
fn include_dirty_with_a_clean_checkout_is_a_plain_worktree() {
    let env = Env::new();
    let w = repo(&env);
    peer(&env, "echo x >> LICENSE");
    let (r, j) = wt_run(&env, &["--include-dirty"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(j["worktree"].get("carried").is_none());
    assert_eq!(subjects(&j["worktree"]).len(), 1);
    assert!(
        strings(&j["warnings"])
            .iter()
            .any(|w| w.contains("no uncommitted changes"))
    );
    assert_diffstat_matches_git(&w, &j["worktree"]);
}

#[test]
fn base_picks_the_starting_commit() {
    let env = Env::new();
    let w = repo(&env);
    let first = git(&w, &["rev-parse", "HEAD"]).trim().to_string();
    write(&w, "later.txt", "later\n");
    git(&w, &["add", "later.txt"]);
    git(&w, &["commit", "-qm", "later"]);
    git(&w, &["tag", "v1", &first]);
    peer(&env, "ls > \"$FAKE_DIR/ls\"; echo x >> LICENSE");
    let (r, j) = wt_run(&env, &["--base", "v1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(j["worktree"]["base"], first);
    assert!(
        !fs::read_to_string(env.fake_dir.join("ls"))
            .unwrap()
            .contains("later.txt")
    );
    assert_diffstat_matches_git(&w, &j["worktree"]);
    assert_eq!(
        git(
            &w,
            &[
                "merge-base",
                "HEAD",
                j["worktree"]["branch"].as_str().unwrap()
            ]
        )
        .trim(),
        first
    );
}

#[test]
fn the_peer_starts_in_the_same_subdirectory() {
    let env = Env::new();
    let w = repo(&env);
    peer(&env, "echo 'in src' > here.txt");
    let r = Run::from(
        baton_cmd(
            &env,
            &[
                "run",
                "--agent",
                "codex",
                "--worktree",
                "--cwd",
                "src",
                "go",
            ],
        )
        .output()
        .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    let wt = &j["worktree"];
    let path = PathBuf::from(wt["path"].as_str().unwrap());
    assert_eq!(
        fs::read_to_string(env.fake_dir.join("codex.pwd"))
            .unwrap()
            .trim(),
        path.join("src").display().to_string()
    );
    assert_eq!(strings(&wt["changed_files"]), ["src/here.txt"]);
    // .baton lives at the repository top, not in the subdirectory.
    assert!(w.join(".baton/worktrees").is_dir());
    assert!(!w.join("src/.baton").exists());
}

#[test]
fn test_cmd_passes_in_a_fresh_checkout_of_the_commit() {
    let env = Env::new();
    let w = repo(&env);
    peer(&env, "echo 'new' > new.txt");
    let (r, j) = wt_run(
        &env,
        &[
            "--test-cmd",
            "pwd > \"$FAKE_DIR/test.pwd\"; test -f new.txt && git status --porcelain | wc -l \
             | tr -d ' ' && git log -1 --format=%s && echo \"branch=$BATON_BRANCH\" && \
             test \"$(git rev-parse HEAD)\" = \"$BATON_COMMIT\" && \
             test \"$(pwd)\" = \"$BATON_WORKTREE\"",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = &j["verification"];
    assert_eq!(v["passed"], true, "{v}");
    assert_eq!(v["exit_code"], 0);
    // The commit tested is the branch's tip, in a checkout of it.
    assert_eq!(v["commit"], j["worktree"]["head"], "{j}");
    let id = j["worktree"]["id"].as_str().unwrap();
    let tail = v["output_tail"].as_str().unwrap();
    // A clean checkout with baton's commit on top.
    assert!(tail.starts_with("0\nbaton: codex run"), "{tail}");
    assert!(tail.contains(&format!("branch=baton/{id}")), "{tail}");
    // Not the peer's worktree, and gone after the check, registration too.
    let ran_in = fs::read_to_string(env.fake_dir.join("test.pwd")).unwrap();
    let ran_in = Path::new(ran_in.trim());
    assert_ne!(ran_in, Path::new(j["worktree"]["path"].as_str().unwrap()));
    assert!(!ran_in.exists(), "{} stays", ran_in.display());
    assert!(!git(&w, &["worktree", "list", "--porcelain"]).contains(&ran_in.display().to_string()));
    assert!(j["summary"].as_str().unwrap().contains("test-cmd passed"));
    assert_eq!(
        j["worktree"]["merge_hint"],
        format!("git merge {}", j["worktree"]["commit"].as_str().unwrap())
    );
    // The full output is kept beside the run's logs.
    let log = PathBuf::from(j["log_path"].as_str().unwrap()).with_file_name("test.log");
    assert!(fs::read_to_string(log).unwrap().contains("branch=baton/"));
}

#[test]
fn test_cmd_failure_exits_5_with_no_merge_hint() {
    let env = Env::new();
    repo(&env);
    peer(&env, "echo x >> LICENSE");
    let cmd = "echo 'assertion failed: 1 == 2' >&2; exit 3";
    let (r, j) = wt_run(&env, &["--test-cmd", cmd]);
    // `status` is the peer's outcome; the exit code says the check failed.
    assert_eq!(r.code, 5, "{}", r.stderr);
    assert_eq!(j["status"], "success");
    let v = &j["verification"];
    assert_eq!(v["passed"], false);
    assert_eq!(v["exit_code"], 3);
    assert_eq!(v["command"], cmd);
    assert!(
        v["output_tail"]
            .as_str()
            .unwrap()
            .contains("assertion failed: 1 == 2")
    );
    assert!(
        j["summary"]
            .as_str()
            .unwrap()
            .contains("test-cmd FAILED (exit 3)")
    );
    // Nothing to merge: the field is there, null.
    assert_eq!(j["worktree"]["merge_hint"], Value::Null, "{j}");
    assert!(j["worktree"]["branch"].is_string());
    // For people: the failing tail where the merge line would be.
    let (r, _) = {
        let r = baton(
            &env,
            &[
                "run",
                "--agent",
                "codex",
                "--worktree",
                "--text",
                "--test-cmd",
                cmd,
                "again",
            ],
        );
        (r, ())
    };
    assert_eq!(r.code, 5, "{}", r.stderr);
    assert!(
        r.stdout.contains("check:    FAILED (exit 3)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("  | assertion failed: 1 == 2"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("merge:"), "{}", r.stdout);
}

/// Issue 29 §3: an ignored file the peer left in its worktree (a stale
/// `.pyc`, a build artifact) made a wrong answer pass; the check runs in a
/// fresh checkout of the commit, where that file is not.
#[test]
fn an_ignored_file_the_peer_left_cannot_make_the_check_pass() {
    let env = Env::new();
    repo(&env);
    // `*.log` is ignored: `cache.log` is never committed.
    peer(&env, "echo wrong > answer.txt\necho right > cache.log");
    let (r, j) = wt_run(
        &env,
        &[
            "--test-cmd",
            "if [ -f cache.log ]; then cat cache.log; else cat answer.txt; fi | grep -qx right",
        ],
    );
    assert_eq!(j["status"], "success", "{j}");
    assert_eq!(j["verification"]["passed"], false, "{j}");
    assert_eq!(r.code, 5, "{}", r.stderr);
    assert_eq!(j["verification"]["commit"], j["worktree"]["head"], "{j}");
    assert_eq!(strings(&j["worktree"]["changed_files"]), ["answer.txt"]);
}

/// Issue 29 §3: a process the peer left running, out of its group and with
/// its environment cleared (so no orphan scan can tell it is the peer's),
/// rewrote a file after baton's commit and before the tests. The check
/// tests the commit, not the worktree that process writes.
#[test]
fn a_process_the_peer_left_cannot_change_what_is_tested() {
    let env = Env::new();
    repo(&env);
    peer(
        &env,
        // The peer ends once the process runs with its environment
        // cleared (before, the orphan scan could still see the token).
        "echo wrong > answer.txt\n\
         env -i setsid sh -c 'start=$(git -C \"$1\" rev-parse HEAD); touch \"$2/started\"; n=0; \
           while [ \"$(git -C \"$1\" rev-parse HEAD)\" = \"$start\" ] && [ $n -lt 1000 ]; do \
             sleep 0.02; n=$((n+1)); done; \
           echo right > \"$1/answer.txt\"; touch \"$2/rewritten\"' sh \"$(pwd)\" \"$FAKE_DIR\" \
           >/dev/null 2>&1 < /dev/null &\n\
         n=0; while [ ! -e \"$FAKE_DIR/started\" ] && [ $n -lt 500 ]; do sleep 0.01; n=$((n+1)); done",
    );
    let (r, j) = wt_run(
        &env,
        &[
            "--test-cmd",
            // Waits for the leftover's rewrite, so that it lands before the
            // test reads the file whatever the timing.
            "n=0; while [ ! -e \"$FAKE_DIR/rewritten\" ] && [ $n -lt 500 ]; do sleep 0.02; \
             n=$((n+1)); done; test -e \"$FAKE_DIR/rewritten\" && grep -qx right answer.txt",
        ],
    );
    assert!(env.fake_dir.join("rewritten").exists(), "{j}");
    assert_eq!(j["status"], "success", "{j}");
    assert_eq!(j["verification"]["passed"], false, "{j}");
    assert_eq!(r.code, 5, "{}", r.stderr);
    let head = j["worktree"]["head"].as_str().unwrap();
    assert_eq!(j["verification"]["commit"], head);
    // What was tested is what the branch holds.
    assert_eq!(
        git(&env.work, &["show", &format!("{head}:answer.txt")]),
        "wrong\n"
    );
}

/// Issue 29 §3: a last line of 4 KiB or more left `output_tail` as "…",
/// and the repair prompt is built from it: the end of the line is kept.
#[test]
fn the_end_of_a_long_last_line_is_in_the_output_tail() {
    let env = Env::new();
    repo(&env);
    peer(&env, "echo x >> LICENSE");
    let (r, j) = wt_run(
        &env,
        &[
            "--test-cmd",
            "printf 'first\\n'; head -c 10000 /dev/zero | tr '\\0' y; \
             echo ' assertion failed: left == right'; exit 1",
        ],
    );
    let tail = j["verification"]["output_tail"].as_str().unwrap();
    assert!(tail.starts_with("…y"), "{tail}");
    assert!(
        tail.ends_with("yyy assertion failed: left == right"),
        "{tail}"
    );
    assert!(tail.len() > 4000, "{}", tail.len());
    assert_eq!(r.code, 5, "{}", r.stderr);
}

/// A baton that died while its check ran leaves the checkout (a linked
/// worktree in the state directory): removing the worktree takes it too,
/// registration and all.
#[test]
fn a_checkout_left_by_a_dead_baton_goes_with_its_worktree() {
    let env = Env::new();
    let w = repo(&env);
    peer(&env, "echo x >> LICENSE");
    let (r, j) = wt_run(&env, &["--test-cmd", "true"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let id = j["worktree"]["id"].as_str().unwrap();
    let project = fs::read_dir(env.state.join("repos"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let left = project.join("checks").join(id);
    assert!(!left.exists(), "the check's checkout stays");
    // What a dead baton leaves: the checkout, registered, with output in it.
    git(
        &w,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            left.to_str().unwrap(),
            "HEAD",
        ],
    );
    write(&left, "target/out.bin", "x");
    let r = baton(&env, &["worktree", "remove", id, "--branch"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!left.exists(), "{}", left.display());
    assert!(
        !git(&w, &["worktree", "list", "--porcelain"]).contains(left.to_str().unwrap()),
        "still registered"
    );
}

/// Issue 29 §3: a test command that prints without end fills no disk:
/// `test.log` keeps the end of the output (the start dropped, with a
/// warning), and baton's memory stays flat.
#[test]
fn a_test_command_that_prints_without_end_keeps_its_log_and_memory_bounded() {
    const MB: u64 = 120;
    let env = Env::new();
    repo(&env);
    peer(&env, "echo x >> LICENSE");
    let child = baton_cmd(
        &env,
        &[
            "run",
            "--agent",
            "codex",
            "--worktree",
            "--test-cmd",
            &format!(
                "head -c {} /dev/zero | tr '\\0' x; echo; echo the end of it; exit 1",
                MB << 20
            ),
            "go",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let pid = child.id();
    let mut child = child;
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        if let Some(kb) = crate::support::vm_hwm_kb(pid) {
            peak = peak.max(kb);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let r = Run::from(child.wait_with_output().unwrap());
    assert_eq!(r.code, 5, "{}", r.stderr);
    let j = r.json();
    let log = PathBuf::from(j["log_path"].as_str().unwrap()).with_file_name("test.log");
    let len = fs::metadata(&log).unwrap().len();
    assert!(len <= 16 << 20, "test.log has {len} bytes");
    let tail = j["verification"]["output_tail"].as_str().unwrap();
    assert!(
        tail.ends_with("x\nthe end of it"),
        "{}",
        &tail[tail.len() - 50..]
    );
    assert!(
        strings(&j["warnings"])
            .iter()
            .any(|w| w.contains("test.log keeps the end") && w.contains(&log.display().to_string())),
        "{j}"
    );
    assert!(peak > 0, "never sampled VmHWM");
    assert!(
        peak < 64 * 1024,
        "peak RSS {peak} kB for {MB} MB of test output"
    );
    eprintln!("peak RSS {peak} kB for {MB} MB of test output");
}

#[test]
fn test_cmd_is_stopped_at_the_timeout_with_its_group() {
    let env = Env::new();
    repo(&env);
    peer(&env, "echo x >> LICENSE");
    let (r, j) = wt_run(
        &env,
        &[
            "--timeout",
            "2s",
            "--test-cmd",
            "sleep 60 & echo $! > \"$FAKE_DIR/grandchild\"; echo started; wait",
        ],
    );
    assert_eq!(r.code, 5, "{}", r.stderr);
    let v = &j["verification"];
    assert_eq!(v["passed"], false);
    assert_eq!(v["exit_code"], Value::Null);
    let tail = v["output_tail"].as_str().unwrap();
    assert!(tail.starts_with("started"), "{tail}");
    assert!(tail.contains("did not finish within 2s"), "{tail}");
    let pid: i32 = fs::read_to_string(env.fake_dir.join("grandchild"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        wait_for(Duration::from_secs(5), || !crate::support::pid_alive(pid)),
        "the check's background process survived"
    );
}

#[test]
fn test_cmd_is_skipped_when_the_peer_failed_but_its_work_is_committed() {
    let env = Env::new();
    let w = repo(&env);
    peer_with(
        &env,
        "echo half > half-done.txt",
        "codex/codex-exec-error.jsonl",
        1,
    );
    let (r, j) = wt_run(&env, &["--test-cmd", "touch \"$FAKE_DIR/tested\""]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(j["status"], "failed");
    assert_eq!(j["verification"], Value::Null);
    assert!(!env.fake_dir.join("tested").exists());
    assert!(
        strings(&j["warnings"])
            .iter()
            .any(|w| w.contains("--test-cmd was not run"))
    );
    let wt = &j["worktree"];
    assert_eq!(strings(&wt["changed_files"]), ["half-done.txt"]);
    assert!(subjects(wt)[0].ends_with("(failed)"));
    assert_diffstat_matches_git(&w, wt);
}

#[test]
fn a_cancelled_run_still_commits_what_the_peer_left() {
    let env = Env::new();
    let w = repo(&env);
    let before = fingerprint(&w);
    peer(
        &env,
        "echo partial > partial.txt\ntouch \"$FAKE_DIR/started\"\nwhile :; do sleep 0.05; done",
    );
    let child = baton_cmd(&env, &["run", "--agent", "codex", "--worktree", "go"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_for(Duration::from_secs(20), || env
        .fake_dir
        .join("started")
        .exists()));
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let r = Run::from(child.wait_with_output().unwrap());
    assert_eq!(r.code, 130, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "cancelled");
    let wt = &j["worktree"];
    assert_eq!(strings(&wt["changed_files"]), ["partial.txt"]);
    assert!(subjects(wt)[0].ends_with("(cancelled)"));
    assert_eq!(fingerprint(&w), before);
}

#[test]
fn two_worktree_runs_at_once_on_the_same_repository() {
    let env = Env::new();
    let w = repo(&env);
    let before = fingerprint(&w);
    peer(
        &env,
        "echo \"$$\" > \"peer-$$.txt\"\ntouch \"$FAKE_DIR/started.$$\"\n\
         while [ ! -e \"$FAKE_DIR/gate\" ]; do sleep 0.02; done",
    );
    let spawn = || {
        baton_cmd(&env, &["run", "--agent", "codex", "--worktree", "go"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let started = || {
        fs::read_dir(&env.fake_dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("started.")
            })
            .count()
    };
    assert!(
        wait_for(Duration::from_secs(30), || started() == 2),
        "both peers should be running at once"
    );
    fs::write(env.fake_dir.join("gate"), "").unwrap();
    let ra = Run::from(a.wait_with_output().unwrap());
    let rb = Run::from(b.wait_with_output().unwrap());
    assert_eq!((ra.code, rb.code), (0, 0), "{}\n{}", ra.stderr, rb.stderr);
    let (ja, jb) = (ra.json(), rb.json());
    let (wa, wb) = (&ja["worktree"], &jb["worktree"]);
    assert_ne!(wa["id"], wb["id"]);
    assert_ne!(wa["path"], wb["path"]);
    for wt in [wa, wb] {
        let files = strings(&wt["changed_files"]);
        assert_eq!(files.len(), 1, "{files:?}");
        assert!(files[0].starts_with("peer-"));
        assert_diffstat_matches_git(&w, wt);
    }
    assert_ne!(wa["changed_files"], wb["changed_files"]);
    // Writers have repositories of their own: none is a linked worktree.
    assert_eq!(
        git(&w, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
    assert_eq!(fingerprint(&w), before);
}

#[test]
fn errors_exit_2_and_create_nothing() {
    // Not a git repository.
    let env = Env::new();
    peer(&env, "true");
    let r = baton(&env, &["run", "--worktree", "x"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["error"]["kind"], "usage");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("needs a git repository")
    );
    nothing_created(&env, &BTreeMap::new());

    // A repository with no commits (with and without --base).
    let env = Env::new();
    peer(&env, "true");
    git(&env.work, &["init", "-q"]);
    write(&env.work, "a.txt", "a\n");
    let before = fingerprint(&env.work);
    for extra in [&[][..], &["--base", "main"][..]] {
        let mut args = vec!["run", "--worktree"];
        args.extend_from_slice(extra);
        args.push("x");
        let r = baton(&env, &args);
        assert_eq!(r.code, 2, "{}", r.stdout);
        assert!(
            r.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains("no commits yet")
        );
        nothing_created(&env, &before);
    }

    let env = Env::new();
    peer(&env, "true");
    let w = repo(&env);
    write(&w, "second.txt", "2\n");
    git(&w, &["add", "second.txt"]);
    git(&w, &["commit", "-qm", "second"]);
    write(&w, "dirty.txt", "d\n");
    let before = fingerprint(&w);
    let cases: &[(&[&str], &str)] = &[
        (&["--base", "no-such-branch"], "is not a commit"),
        (&["--base=-rf"], "is not a commit"),
        (&["--base", "HEAD^{tree}"], "is not a commit"),
        (&["--read-only"], "read-only"),
        (&["--access", "read-only"], "read-only"),
        (&["--allow", "src/["], "not a valid glob"),
        (&["--allow", "../outside"], "leaves the repository"),
        (&["--test-cmd", "  "], "--test-cmd is empty"),
        (
            &["--include-dirty", "--base", "HEAD~1"],
            "--base must be HEAD",
        ),
    ];
    for (extra, want) in cases {
        let mut args = vec!["run", "--agent", "codex", "--worktree"];
        args.extend_from_slice(extra);
        args.push("x");
        let r = baton(&env, &args);
        assert_eq!(r.code, 2, "{extra:?}: {}", r.stdout);
        let msg = r.json()["error"]["message"].as_str().unwrap().to_string();
        assert!(msg.contains(want), "{extra:?}: {msg}");
        nothing_created(&env, &before);
    }
    // Worktree options without --worktree are usage errors too.
    for extra in [
        &["--allow", "src"][..],
        &["--include-dirty"],
        &["--test-cmd", "true"],
        &["--base", "HEAD"],
    ] {
        let mut args = vec!["run"];
        args.extend_from_slice(extra);
        args.push("x");
        let r = baton(&env, &args);
        assert_eq!(r.code, 2, "{extra:?}");
        nothing_created(&env, &before);
    }
}

#[test]
fn dry_run_shows_the_worktree_run_and_creates_nothing() {
    let env = Env::new();
    peer(&env, "true");
    let w = repo(&env);
    let before = fingerprint(&w);
    let r = baton(
        &env,
        &[
            "run",
            "--agent",
            "claude",
            "--worktree",
            "--allow",
            "src/**",
            "--dry-run",
            "x",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["dry_run"], true);
    let path = j["worktree"]["path"].as_str().unwrap();
    assert_eq!(j["cwd"], path);
    assert!(j["prompt"].as_str().unwrap().contains("`src/**`"));
    let argv = strings(&j["argv"]);
    assert!(argv.contains(&"--add-dir".to_string()), "{argv:?}");
    nothing_created(&env, &before);
}

#[test]
fn claude_gets_its_own_repository_s_git_dir_as_an_add_dir() {
    let env = Env::new();
    let w = repo(&env);
    env.fake(
        "claude",
        &format!(
            "{}\necho from-claude > c.txt\ncat '{}'",
            record("claude"),
            fixture("claude/claude-stream.jsonl").display()
        ),
    );
    let r = baton(&env, &["run", "--agent", "claude", "--worktree", "go"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    let id = j["worktree"]["id"].as_str().unwrap();
    let argv = env.argv("claude");
    // Its own repository's git dir, under the worktree: not the user's.
    let gitdir = w
        .canonicalize()
        .unwrap()
        .join(".baton/worktrees")
        .join(id)
        .join(".git");
    let i = argv
        .iter()
        .position(|a| *a == gitdir.display().to_string())
        .unwrap();
    assert_eq!(argv[i - 1], "--add-dir");
    assert_eq!(strings(&j["worktree"]["changed_files"]), ["c.txt"]);
}

#[test]
fn worktree_list_and_remove() {
    let env = Env::new();
    let w = repo(&env);
    peer(&env, "echo one >> LICENSE\necho two > two.txt");
    let (_, j) = wt_run(&env, &[]);
    let wt = j["worktree"].clone();
    let id = wt["id"].as_str().unwrap().to_string();
    let path = PathBuf::from(wt["path"].as_str().unwrap());

    let r = baton(&env, &["worktree", "list"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let l = r.json();
    let list = l["worktrees"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{l}");
    let e = &list[0];
    assert_eq!(e["id"], id.as_str());
    // A foreground run's worktree has no job: the key is there, null.
    assert_eq!(e.get("job_id"), Some(&Value::Null), "{e}");
    assert_eq!(e["branch"], format!("baton/{id}"));
    assert_eq!(e["state"], "finished");
    assert_eq!(e["status"], "success");
    assert_eq!(e["agent"], "codex");
    assert_eq!(e["task"], "do the task");
    assert_eq!(e["present"], true);
    assert_eq!(e["diffstat"], wt["diffstat"]);
    assert_eq!(e["head"], wt["head"]);
    assert!(e["age_secs"].as_u64().unwrap() < 600);

    // The same from inside the worktree, and for people.
    let r = Run::from(
        baton_cmd(&env, &["worktree", "list", "--text"])
            .current_dir(&path)
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.contains(&id) && r.stdout.contains(&format!("baton/{id}")),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("2 file(s) +2 -0"), "{}", r.stdout);

    // Uncommitted changes made later are not thrown away silently.
    write(&path, "later.txt", "later\n");
    let r = baton(&env, &["worktree", "remove", &id]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("later.txt")
    );
    assert!(path.exists());

    let r = baton(&env, &["worktree", "remove", &id, "--force"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rm = &r.json()["removed"];
    assert_eq!(rm["worktree_removed"], true);
    assert_eq!(rm["branch_deleted"], false);
    assert!(!path.exists());
    assert!(
        git_ok(&w, &["rev-parse", "--verify", &format!("baton/{id}")]),
        "branch kept"
    );
    assert_eq!(
        baton(&env, &["worktree", "list"]).json()["worktrees"],
        serde_json::json!([])
    );
    assert_eq!(
        git(&w, &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );

    let r = baton(&env, &["worktree", "remove", &id, "--branch"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.json()["removed"]["branch_deleted"], true);
    assert!(!git_ok(
        &w,
        &["rev-parse", "--verify", &format!("baton/{id}")]
    ));

    // Unknown and malformed ids. An unknown one is a worktree, not a job.
    let r = baton(&env, &["worktree", "remove", &id]);
    assert_eq!(r.code, 4, "{}", r.stdout);
    let e = &r.json()["error"];
    assert_eq!(e["kind"], "worktree_not_found", "{e}");
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("worktree") && !msg.contains("job"), "{msg}");
    assert!(
        e["hint"].as_str().unwrap().contains("baton worktree list"),
        "{e}"
    );
    let r = baton(&env, &["worktree", "remove", "../../etc"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.json()["error"]["kind"], "invalid_job_id");
}

/// Issue 29 §7: `worktree remove --merged|--finished|--all` and the list's
/// header; §5: a task's control characters shown escaped in the list.
#[test]
fn worktrees_removed_many_at_once_by_merged_finished_and_all() {
    let env = Env::new();
    let w = repo(&env);
    peer(&env, "echo x > \"f-$$.txt\"");
    let mut ids = Vec::new();
    for _ in 0..2 {
        let (r, j) = wt_run(&env, &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        ids.push(j["worktree"]["id"].as_str().unwrap().to_string());
    }
    let (a, b) = (ids[0].clone(), ids[1].clone());
    git(&w, &["merge", "-q", "--no-edit", &format!("baton/{b}")]);

    let r = baton(&env, &["worktree", "list", "--text"]);
    let head = r.stdout.lines().next().unwrap();
    assert!(
        head.starts_with("ID ") && head.contains("STATE") && head.ends_with("TASK"),
        "{}",
        r.stdout
    );

    // --merged: b only, its branch with it (merged, so nothing is lost).
    let r = baton(&env, &["worktree", "remove", "--merged", "--branch"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    let removed: Vec<&str> = j["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(removed, [b.as_str()], "{j}");
    assert_eq!(j["removed"][0]["branch_deleted"], true);
    assert_eq!(j["skipped"], serde_json::json!([]));
    assert!(git_ok(
        &w,
        &["rev-parse", "--verify", &format!("baton/{a}")]
    ));

    // --finished: a goes; c, with changes made after baton's commit, stays.
    let (_, j) = wt_run(&env, &[]);
    let c = j["worktree"]["id"].as_str().unwrap().to_string();
    let c_path = PathBuf::from(j["worktree"]["path"].as_str().unwrap());
    write(&c_path, "later.txt", "later\n");
    let r = baton(&env, &["worktree", "remove", "--finished", "--text"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains(&format!("skipped {c}: ")), "{}", r.stdout);
    assert!(r.stdout.contains("later.txt"), "{}", r.stdout);
    let left: Vec<String> = baton(&env, &["worktree", "list"]).json()["worktrees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(left, std::slice::from_ref(&c));

    // A task's control characters, escaped in the list.
    let task = format!("do it {}", crate::text_safety::HOSTILE);
    let r = baton(&env, &["run", "--agent", "codex", "--worktree", &task]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = baton(&env, &["worktree", "list", "--text"]);
    let mut checks = crate::text_safety::Checks::default();
    checks.clean("worktree list --text", &r.stdout, true);
    checks.done();

    // --all --force: everything; then nothing is left to remove.
    let r = baton(&env, &["worktree", "remove", "--all", "--force"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.json()["removed"].as_array().unwrap().len(), 2);
    assert!(!c_path.exists());
    let r = baton(&env, &["worktree", "remove", "--all", "--text"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "no worktree to remove\n"));

    // An id or a selection, not both, and not neither.
    for args in [
        &["worktree", "remove"][..],
        &["worktree", "remove", &a, "--all"][..],
    ] {
        assert_eq!(baton(&env, args).code, 2, "{args:?}");
    }
}

#[test]
fn a_running_worktree_is_listed_as_running_and_not_removed() {
    let env = Env::new();
    repo(&env);
    peer(
        &env,
        "touch \"$FAKE_DIR/started\"\nwhile [ ! -e \"$FAKE_DIR/gate\" ]; do sleep 0.02; done",
    );
    let child = baton_cmd(&env, &["run", "--agent", "codex", "--worktree", "go"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_for(Duration::from_secs(20), || env
        .fake_dir
        .join("started")
        .exists()));
    let l = baton(&env, &["worktree", "list"]).json();
    let e = &l["worktrees"][0];
    assert_eq!(e["state"], "running", "{l}");
    let id = e["id"].as_str().unwrap().to_string();
    let r = baton(&env, &["worktree", "remove", &id, "--force"]);
    assert_eq!(r.code, 2);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("in use")
    );
    fs::write(env.fake_dir.join("gate"), "").unwrap();
    let r = Run::from(child.wait_with_output().unwrap());
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        baton(&env, &["worktree", "list"]).json()["worktrees"][0]["state"],
        "finished"
    );
}

#[test]
fn the_users_hooks_do_not_run_for_batons_own_git_calls() {
    let env = Env::new();
    let w = repo(&env);
    for hook in [
        "post-checkout",
        "pre-commit",
        "commit-msg",
        "post-commit",
        "reference-transaction",
    ] {
        write(
            &w,
            &format!(".git/hooks/{hook}"),
            &format!("#!/bin/sh\ntouch \"$FAKE_DIR/hook-{hook}\"\nexit 1\n"),
        );
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(
            w.join(".git/hooks").join(hook),
            fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    peer(&env, "echo x >> LICENSE");
    let (r, j) = wt_run(&env, &["--include-dirty"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(subjects(&j["worktree"]).len(), 1, "{}", j["worktree"]);
    let ran: Vec<String> = fs::read_dir(&env.fake_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("hook-"))
        .collect();
    assert!(ran.is_empty(), "hooks ran: {ran:?}");
}

#[test]
fn ctrl_c_during_test_cmd_stops_it_and_reports_cancelled() {
    let env = Env::new();
    repo(&env);
    peer(&env, "echo x >> LICENSE");
    let child = baton_cmd(
        &env,
        &[
            "run",
            "--agent",
            "codex",
            "--worktree",
            "--test-cmd",
            "echo checking; touch \"$FAKE_DIR/testing\"; while :; do sleep 0.05; done",
            "go",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    assert!(wait_for(Duration::from_secs(20), || env
        .fake_dir
        .join("testing")
        .exists()));
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let r = Run::from(child.wait_with_output().unwrap());
    assert_eq!(r.code, 130, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "cancelled");
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("while --test-cmd ran")
    );
    let v = &j["verification"];
    assert_eq!(v["passed"], false);
    let tail = v["output_tail"].as_str().unwrap();
    assert!(
        tail.starts_with("checking") && tail.contains("stopped by SIGINT"),
        "{tail}"
    );
    // The peer's work was committed before the check started.
    assert_eq!(strings(&j["worktree"]["changed_files"]), ["LICENSE"]);
}

// Issue 10, items 1 and 2: a peer may write its worktree and the worktree's
// git directory (`.git/worktrees/<id>/`); nothing it writes there may make
// baton's own, unsandboxed git calls run a command or act on the user's
// checkout. Tampering with the files that tie the worktree to the
// repository fails the run, commits nothing, and `worktree remove` still
// cleans up. These tests never run git inside the worktree themselves: a
// planted fsmonitor would fire for the test instead of for baton.

/// The branch tip of `baton/<id>` as the user's repository sees it.
fn branch_tip(w: &Path, id: &str) -> String {
    git(w, &["rev-parse", &format!("refs/heads/baton/{id}")])
        .trim()
        .to_string()
}

/// A tampered run: failed, `worktree_tampered`, nothing committed on the
/// branch, the user's checkout untouched. The worktree's id.
fn assert_tampered(
    w: &Path,
    r: &Run,
    j: &Value,
    before: &BTreeMap<String, String>,
    says: &str,
) -> String {
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(j["status"], "failed", "{j}");
    assert_eq!(j["error"]["kind"], "worktree_tampered", "{j}");
    let summary = j["summary"].as_str().unwrap();
    assert!(
        summary.contains("tampered") && !summary.contains("succeeded"),
        "{summary}"
    );
    let msg = j["error"]["message"].as_str().unwrap();
    assert!(msg.contains(says), "{msg}");
    assert!(
        j["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("baton worktree remove"),
        "{j}"
    );
    let id = j["worktree"]["id"]
        .as_str()
        .expect("worktree.id")
        .to_string();
    assert_eq!(j["worktree"]["tampered"], true, "{j}");
    let base = j["worktree"]["base"].as_str().unwrap();
    assert_eq!(branch_tip(w, &id), base, "baton committed on the branch");
    assert_eq!(&fingerprint(w), before, "the user's checkout changed");
    assert_eq!(
        git(w, &["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/main",
        "the user's checkout was switched"
    );
    id
}

/// `worktree remove --force` cleans up a tampered worktree: directory and
/// registration gone, the user's checkout untouched.
fn remove_tampered(env: &Env, id: &str, before: &BTreeMap<String, String>) {
    let w = &env.work;
    let path = w.join(".baton/worktrees").join(id);
    let r = baton(env, &["worktree", "remove", id, "--force"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.json()["removed"]["worktree_removed"], true);
    assert!(!path.exists(), "the worktree directory is still there");
    let list = git(w, &["worktree", "list", "--porcelain"]);
    assert!(
        !list.contains(id),
        "the worktree is still registered: {list}"
    );
    assert_eq!(
        &fingerprint(w),
        before,
        "remove touched the user's checkout"
    );
}

#[test]
fn a_peer_that_redirects_commondir_cannot_make_baton_run_commands() {
    let env = Env::new();
    let w = repo(&env);
    write(&w, "README.md", "# demo\n\nthe user's own edit\n");
    let before = fingerprint(&w);
    let pwned = env.fake_dir.join("PWNED");
    // The tester's exploit against a linked worktree: a common dir of the
    // peer's making whose config sets core.fsmonitor, which every `git
    // status/add/write-tree` runs. In a repository of its own the file is
    // ignored (baton names GIT_COMMON_DIR); the run goes on.
    peer(
        &env,
        r#"G=$(git rev-parse --absolute-git-dir)
C=$(git rev-parse --path-format=absolute --git-common-dir)
mkdir "$G/c"; cp "$C/config" "$G/c/"; ln -s "$C/objects" "$C/refs" "$G/c/"
git config -f "$G/c/config" core.fsmonitor "echo x >> '$FAKE_DIR/PWNED'; false"
echo "$G/c" > "$G/commondir"
echo edit >> LICENSE"#,
    );
    let (r, j) = wt_run(&env, &[]);
    assert!(!pwned.exists(), "baton ran the peer's fsmonitor command");
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(strings(&j["worktree"]["changed_files"]), ["LICENSE"]);
    assert_eq!(fingerprint(&w), before);
    let id = j["worktree"]["id"].as_str().unwrap();
    let r = baton(&env, &["worktree", "remove", id, "--force"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(!pwned.exists(), "remove ran the peer's fsmonitor command");
}

/// Issue 31 §1: the writer's repository is the peer's, configuration and
/// hooks included. A `core.fsmonitor` (or any key that is not `user.*`,
/// `branch.*` and the like) is tampering: nothing is committed or imported.
/// Hooks never run: not in baton's own git calls, not in the import.
#[test]
fn a_writer_repo_s_config_and_hooks_never_run() {
    let env = Env::new();
    let w = repo(&env);
    let before = fingerprint(&w);
    let pwned = env.fake_dir.join("PWNED");
    peer(
        &env,
        r#"git config core.fsmonitor "echo x >> '$FAKE_DIR/PWNED'; false"
git config user.name "a peer"
echo edit >> LICENSE"#,
    );
    let (r, j) = wt_run(&env, &[]);
    assert!(!pwned.exists(), "baton ran the peer's fsmonitor command");
    let id = assert_tampered(&w, &r, &j, &before, ".git/config");
    remove_tampered(&env, &id, &before);
    assert!(!pwned.exists(), "remove ran the peer's fsmonitor command");

    // Hooks of every kind a fetch, a ref update or a checkout could run.
    let mut body = String::new();
    for hook in [
        "reference-transaction",
        "post-checkout",
        "pre-commit",
        "post-commit",
        "pre-auto-gc",
        "post-index-change",
        "fsmonitor-watchman",
    ] {
        body.push_str(&format!(
            "printf '#!/bin/sh\\necho {hook} >> \"%s\"\\n' \"$FAKE_DIR/PWNED\" > .git/hooks/{hook}\n\
             chmod +x .git/hooks/{hook}\n"
        ));
    }
    // A peer may set its identity: that is no tampering.
    body.push_str("git config user.email peer@example.com\necho edit >> LICENSE\n");
    peer(&env, &body);
    let (r, j) = wt_run(&env, &[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        !pwned.exists(),
        "a hook of the writer's repository ran: {}",
        fs::read_to_string(&pwned).unwrap_or_default()
    );
    let commit = j["worktree"]["commit"].as_str().unwrap();
    let id = j["worktree"]["id"].as_str().unwrap();
    assert_eq!(branch_tip(&w, id), commit);
    assert_eq!(fingerprint(&w), before);
}

#[test]
fn a_peer_that_removes_or_redirects_the_git_dir_cannot_touch_the_users_checkout() {
    let env = Env::new();
    let w = repo(&env);
    // The user's work in progress: must not be committed, switched or lost.
    write(&w, "README.md", "# demo\n\nmy wip\n");
    write(&w, "notes.txt", "notes\n");
    let before = fingerprint(&w);
    for (body, says) in [
        // Without a `.git`, `git -C <worktree>` finds the user's repository.
        ("rm -rf .git\necho peer > peer.txt", ".git"),
        // A `.git` file naming the user's git directory.
        (
            "C=\"$(cd ../../.. && pwd)/.git\"; rm -rf .git; printf 'gitdir: %s\\n' \"$C\" > .git\n\
             echo peer > peer.txt",
            ".git",
        ),
        // A link to it.
        (
            "C=\"$(cd ../../.. && pwd)/.git\"; rm -rf .git; ln -s \"$C\" .git\n\
             echo peer > peer.txt",
            ".git",
        ),
    ] {
        peer(&env, body);
        let (r, j) = wt_run(&env, &[]);
        let id = assert_tampered(&w, &r, &j, &before, says);
        assert!(!w.join("peer.txt").exists());
        assert_eq!(&fingerprint(&w), &before);
        remove_tampered(&env, &id, &before);
    }
    // A repository of the peer's own in place of baton's: its history is
    // its own (no base), which baton says; the user's checkout is untouched.
    peer(
        &env,
        "rm -rf .git && git init -q . && echo peer > peer.txt && git add -A && \
         git -c user.name=p -c user.email=p@p commit -qm mine",
    );
    let (r, j) = wt_run(&env, &[]);
    assert_eq!(&fingerprint(&w), &before);
    assert!(!w.join("peer.txt").exists());
    if r.code == 0 {
        assert!(j["warnings"].to_string().contains("rewrote history"), "{j}");
    } else {
        assert_eq!(j["error"]["kind"], "worktree_commit_failed", "{j}");
    }
    assert_eq!(git(&w, &["symbolic-ref", "HEAD"]).trim(), "refs/heads/main");
}

#[test]
fn a_peers_gitattributes_and_worktree_config_cannot_make_baton_run_filters() {
    let env = Env::new();
    let w = repo(&env);
    // A filter driver the user configured (think git-lfs): their committed
    // attributes do not use it, so baton's git calls must not run it
    // either, whatever `.gitattributes` the peer writes. Pinning attributes
    // to the start tree needs git >= 2.40 (GIT_ATTR_SOURCE); older git is
    // documented as the degraded case.
    let filtered = env.fake_dir.join("FILTERED");
    git(
        &w,
        &[
            "config",
            "filter.rec.clean",
            &format!("touch '{}'; cat", filtered.display()),
        ],
    );
    let before = fingerprint(&w);
    peer(
        &env,
        "printf '* filter=rec\\n' > .gitattributes\necho more >> LICENSE",
    );
    let (r, j) = wt_run(&env, &[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let mut changed = strings(&j["worktree"]["changed_files"]);
    changed.sort();
    assert_eq!(changed, [".gitattributes", "LICENSE"]);
    let warned = j["warnings"].to_string().contains(".gitattributes");
    if git_at_least(2, 40) {
        assert!(!filtered.exists(), "baton ran a filter the peer selected");
        assert!(!warned, "{j}");
    } else {
        // The documented degraded case: said, not hidden.
        assert!(warned, "{j}");
    }
    assert_eq!(fingerprint(&w), before);

    // With per-worktree config enabled by the user, the peer can write
    // config git reads (`config.worktree` in its git dir): a filter driver
    // of its own and an fsmonitor. That is tampering.
    git(&w, &["config", "core.repositoryformatversion", "1"]);
    git(&w, &["config", "extensions.worktreeConfig", "true"]);
    let before = fingerprint(&w);
    let pwned = env.fake_dir.join("PWNED");
    peer(
        &env,
        r#"git config --worktree filter.evil.clean "touch '$FAKE_DIR/PWNED'; cat"
git config --worktree core.fsmonitor "touch '$FAKE_DIR/PWNED'; false"
printf '* filter=evil\n' > .gitattributes
echo more >> LICENSE"#,
    );
    let (r, j) = wt_run(&env, &[]);
    assert!(!pwned.exists(), "baton ran the peer's worktree config");
    let id = assert_tampered(&w, &r, &j, &before, ".git/config");
    remove_tampered(&env, &id, &before);
    assert!(!pwned.exists(), "remove ran the peer's worktree config");
}

/// Whether the `git` on PATH is at least `major.minor`.
fn git_at_least(major: u32, minor: u32) -> bool {
    let v = String::from_utf8(
        Command::new("git")
            .arg("--version")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let mut nums = v
        .split_whitespace()
        .nth(2)
        .unwrap_or("")
        .split('.')
        .map(|n| n.parse::<u32>().unwrap_or(0));
    (nums.next().unwrap_or(0), nums.next().unwrap_or(0)) >= (major, minor)
}

// Issue 20, item 5: the worktree's index is the peer's. It can mark files
// skip-worktree or assume-unchanged, stage entries that are not on disk,
// untrack files or write garbage there; none of it may change what baton
// reports, reverts or commits. Those are derived from the files on disk
// against the tree baton commits on, through an index of baton's own.

/// What the branch holds at `rel` (`None`: no such path).
fn on_branch(w: &Path, id: &str, rel: &str) -> Option<String> {
    let spec = format!("baton/{id}:{rel}");
    git_ok(w, &["cat-file", "-e", &spec]).then(|| git(w, &["show", &spec]))
}

/// The summary's "N file(s) changed", as a number (0 when it names none).
fn summary_count(j: &Value) -> usize {
    let s = j["summary"].as_str().unwrap();
    let head = s.split(':').next().unwrap();
    if head.contains(", 1 file changed") {
        return 1;
    }
    head.split(", ")
        .find_map(|p| p.strip_suffix(" files changed"))
        .map_or(0, |n| n.parse().unwrap())
}

#[test]
fn a_peer_that_games_its_own_index_cannot_hide_or_smuggle_changes() {
    let env = Env::new();
    let w = repo(&env);
    // A tracked file that .gitignore matches: `git add -A` leaves such a
    // file alone only while the index tracks it.
    write(&w, "keep.log", "kept\n");
    git(&w, &["add", "-f", "keep.log"]);
    git(&w, &["commit", "-qm", "a tracked ignored file"]);
    let before = fingerprint(&w);
    let two = "pub fn one() -> u32 {\n    1\n}\npub fn two() {}\n";
    struct Case {
        name: &'static str,
        body: &'static str,
        allow: &'static [&'static str],
        changed: &'static [&'static str],
        reverted: &'static [&'static str],
    }
    let cases = [
        Case {
            name: "skip-worktree on tracked files, then edited",
            body: "git update-index --skip-worktree src/lib.rs build.rs\n\
                   echo 'pub fn two() {}' >> src/lib.rs\necho evil > build.rs",
            allow: &["src/**"],
            changed: &["src/lib.rs"],
            reverted: &["build.rs"],
        },
        Case {
            name: "index entries that are not on disk, outside --allow",
            body: "b=$(echo evil | git hash-object -w --stdin)\n\
                   git update-index --add --cacheinfo 100644,$b,secret/evil.txt\n\
                   git update-index --skip-worktree secret/evil.txt\n\
                   git update-index --cacheinfo 100644,$b,Cargo.toml\n\
                   echo 'pub fn two() {}' >> src/lib.rs\necho x >> LICENSE",
            allow: &["src/**"],
            changed: &["src/lib.rs"],
            reverted: &["LICENSE"],
        },
        Case {
            name: "index entries that are not on disk, no --allow",
            body: "b=$(echo evil | git hash-object -w --stdin)\n\
                   git update-index --add --cacheinfo 100644,$b,secret/evil.txt\n\
                   git update-index --skip-worktree secret/evil.txt\n\
                   echo 'pub fn two() {}' >> src/lib.rs",
            allow: &[],
            changed: &["src/lib.rs"],
            reverted: &[],
        },
        Case {
            name: "git rm --cached",
            body: "git rm -q --cached keep.log LICENSE\necho 'pub fn two() {}' >> src/lib.rs",
            allow: &[],
            changed: &["src/lib.rs"],
            reverted: &[],
        },
        Case {
            name: "assume-unchanged, then edited",
            body: "git update-index --assume-unchanged src/lib.rs build.rs\n\
                   echo 'pub fn two() {}' >> src/lib.rs\necho evil > build.rs",
            allow: &["src/**"],
            changed: &["src/lib.rs"],
            reverted: &["build.rs"],
        },
        Case {
            name: "an index of garbage",
            body: "echo 'pub fn two() {}' >> src/lib.rs\n\
                   printf garbage > \"$(git rev-parse --git-path index)\"",
            allow: &[],
            changed: &["src/lib.rs"],
            reverted: &[],
        },
    ];
    for c in cases {
        peer(&env, c.body);
        let mut extra = Vec::new();
        for a in c.allow {
            extra.extend(["--allow", a]);
        }
        let (r, j) = wt_run(&env, &extra);
        let name = c.name;
        assert_eq!(r.code, 0, "{name}: {}\n{}", r.stdout, r.stderr);
        assert_eq!(j["status"], "success", "{name}: {j}");
        let wt = &j["worktree"];
        assert!(wt.get("error").is_none(), "{name}: {wt}");
        let id = wt["id"].as_str().unwrap();
        // What changed is what is on disk, reverted paths left out, and the
        // summary counts the same list.
        let mut changed = strings(&j["changed_files"]);
        changed.sort();
        assert_eq!(changed, c.changed, "{name}: {j}");
        assert_eq!(summary_count(&j), changed.len(), "{name}: {}", j["summary"]);
        let mut reverted = match wt.get("reverted") {
            Some(v) => strings(v),
            None => Vec::new(),
        };
        reverted.sort();
        assert_eq!(reverted, c.reverted, "{name}: {wt}");
        // The commit holds exactly the allowed change and what the base had.
        assert_eq!(
            strings(&wt["changed_files"]),
            ["src/lib.rs"],
            "{name}: {wt}"
        );
        assert_eq!(
            on_branch(&w, id, "src/lib.rs").as_deref(),
            Some(two),
            "{name}"
        );
        assert_eq!(on_branch(&w, id, "secret/evil.txt"), None, "{name}");
        assert_eq!(
            on_branch(&w, id, "Cargo.toml").as_deref(),
            Some("[package]\nname = \"demo\"\n"),
            "{name}"
        );
        assert_eq!(
            on_branch(&w, id, "build.rs").as_deref(),
            Some("fn main() {}\n")
        );
        assert_eq!(
            on_branch(&w, id, "LICENSE").as_deref(),
            Some("MIT\n"),
            "{name}"
        );
        assert_eq!(
            on_branch(&w, id, "keep.log").as_deref(),
            Some("kept\n"),
            "{name}"
        );
        // Reverted on disk too, and the worktree's own index agrees with
        // the branch again.
        let path = PathBuf::from(wt["path"].as_str().unwrap());
        assert_eq!(
            fs::read_to_string(path.join("build.rs")).unwrap(),
            "fn main() {}\n"
        );
        assert_eq!(fs::read_to_string(path.join("LICENSE")).unwrap(), "MIT\n");
        assert_eq!(
            git(&path, &["status", "--porcelain", "-uall"]),
            "",
            "{name}: the worktree's index does not match the branch"
        );
        assert_diffstat_matches_git(&w, wt);
        assert_eq!(
            fingerprint(&w),
            before,
            "{name}: the user's checkout changed"
        );
    }
}

#[test]
fn a_commit_that_fails_fails_the_run_and_says_what_was_left_where() {
    let env = Env::new();
    let w = repo(&env);
    let before = fingerprint(&w);
    // The peer holds the branch's ref lock: baton's update-ref cannot move it.
    peer(
        &env,
        "echo x >> LICENSE\necho new > fresh.txt\n\
         touch \"$(git rev-parse --path-format=absolute --git-common-dir)/refs/heads/$(git symbolic-ref --short HEAD).lock\"",
    );
    let (r, j) = wt_run(&env, &[]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(j["status"], "failed", "{j}");
    let e = &j["error"];
    assert_eq!(e["kind"], "worktree_commit_failed", "{j}");
    let wt = &j["worktree"];
    let id = wt["id"].as_str().unwrap();
    let path = wt["path"].as_str().unwrap();
    let msg = e["message"].as_str().unwrap();
    for says in [
        path,
        &format!("baton/{id}"),
        "LICENSE",
        "fresh.txt",
        ".lock",
    ] {
        assert!(msg.contains(says), "`{says}` not in: {msg}");
    }
    let hint = e["hint"].as_str().unwrap();
    assert!(
        hint.contains(&format!("baton worktree remove {id}")),
        "{hint}"
    );
    assert!(!j["summary"].as_str().unwrap().contains("succeeded"), "{j}");
    assert!(wt["error"].is_string(), "{wt}");
    let mut left = strings(&wt["uncommitted"]);
    left.sort();
    assert_eq!(left, ["LICENSE", "fresh.txt"]);
    let mut changed = strings(&j["changed_files"]);
    changed.sort();
    assert_eq!(changed, ["LICENSE", "fresh.txt"]);
    // Nothing moved, nothing lost: the branch is at its base, the files are
    // where the peer left them, the user's checkout untouched.
    assert_eq!(branch_tip(&w, id), wt["base"].as_str().unwrap());
    assert_eq!(
        fs::read_to_string(Path::new(path).join("fresh.txt")).unwrap(),
        "new\n"
    );
    assert_eq!(fingerprint(&w), before);
    let l = baton(&env, &["worktree", "list"]).json();
    assert_eq!(l["worktrees"][0]["status"], "failed", "{l}");

    // A peer that deletes its worktree: nothing to commit, and the run
    // does not say it succeeded either.
    peer(&env, "d=$PWD; cd /; rm -rf \"$d\"");
    let (r, j) = wt_run(&env, &[]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(j["error"]["kind"], "worktree_commit_failed", "{j}");
    let wt = &j["worktree"];
    let id = wt["id"].as_str().unwrap();
    let path = wt["path"].as_str().unwrap();
    let msg = j["error"]["message"].as_str().unwrap();
    assert!(msg.contains(path) && msg.contains("gone"), "{msg}");
    assert!(wt.get("uncommitted").is_none(), "{wt}");
    assert_eq!(j["changed_files"], serde_json::json!([]));
    assert!(j["summary"].as_str().unwrap().contains("gone"), "{j}");
    assert_eq!(fingerprint(&w), before);
    let r = baton(&env, &["worktree", "remove", id]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(fingerprint(&w), before);
}

#[test]
fn the_summary_counts_the_files_changed_after_the_revert() {
    let env = Env::new();
    repo(&env);
    // Only a path outside --allow: nothing changed in the end.
    peer(&env, "echo x >> LICENSE");
    let (r, j) = wt_run(&env, &["--allow", "src/**"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(j["changed_files"], serde_json::json!([]), "{j}");
    let s = j["summary"].as_str().unwrap();
    assert!(
        !s.contains("file changed") && !s.contains("files changed"),
        "{s}"
    );
    assert!(s.contains("1 reverted outside --allow"), "{s}");
    // One inside, two outside: one.
    peer(
        &env,
        "echo x >> LICENSE\necho y >> build.rs\necho 'pub fn two() {}' >> src/lib.rs",
    );
    let (_, j) = wt_run(&env, &["--allow", "src/**"]);
    assert_eq!(strings(&j["changed_files"]), ["src/lib.rs"], "{j}");
    assert_eq!(summary_count(&j), 1, "{}", j["summary"]);
}

/// `--dry-run --worktree` shows the argv the run passes (issue 29 §7: a
/// files-format repository got `--add-dir <repo>/.git/reftable` in the dry
/// run only), in both ref formats git has.
#[test]
fn the_dry_run_shows_the_grants_the_run_passes_in_either_ref_format() {
    for format in ["files", "reftable"] {
        let env = Env::new();
        let w = env.work.clone();
        let init = Command::new("git")
            .args(["init", "-q", "-b", "main", "--ref-format", format])
            .arg(&w)
            .status()
            .unwrap();
        if !init.success() {
            eprintln!("skipped: this git has no --ref-format {format}");
            continue;
        }
        write(&w, "README.md", "# demo\n");
        git(&w, &["add", "."]);
        git(&w, &["commit", "-qm", "init"]);
        peer(&env, "echo new > new.txt");
        let dry = baton(
            &env,
            &["run", "--agent", "codex", "--worktree", "--dry-run", "x"],
        );
        assert_eq!(dry.code, 0, "{format}: {}", dry.stderr);
        let d = dry.json();
        let dry_id = d["worktree"]["path"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap()
            .to_string();
        let r = baton(&env, &["run", "--agent", "codex", "--worktree", "x"]);
        assert_eq!(r.code, 0, "{format}: {}\n{}", r.stdout, r.stderr);
        let id = r.json()["worktree"]["id"].as_str().unwrap().to_string();
        // (The dry run's argv starts with the program.)
        let dry_argv: Vec<String> = strings(&d["argv"])[1..]
            .iter()
            .map(|a| a.replace(&dry_id, "ID"))
            .collect();
        let argv: Vec<String> = env
            .argv("codex")
            .iter()
            .map(|a| a.replace(&id, "ID"))
            .collect();
        assert_eq!(dry_argv, argv, "{format}");
        let grants: Vec<&String> = argv
            .iter()
            .zip(argv.iter().skip(1))
            .filter(|(f, _)| *f == "--add-dir")
            .map(|(_, d)| d)
            .collect();
        // The writer's own repository in either format (issue 31): no
        // reftable, no `baton/` ref folder, nothing of the user's `.git`.
        let own = w.canonicalize().unwrap().join(".baton/worktrees/ID/.git");
        assert_eq!(grants, [&own.display().to_string()], "{format}");
    }
}

/// Issue 31: every worktree peer was granted `<repo>/.git/objects` and
/// `<repo>/.git/refs/heads/baton` (a peer replaced a loose object of the
/// user's; a fan-out candidate moved a sibling's branch). No agent's argv
/// names any path in the user's `.git` now; claude's settings deny it.
#[test]
fn no_agent_is_granted_a_path_in_the_users_git_dir() {
    let env = Env::new();
    let w = repo(&env);
    let dot_git = w.canonicalize().unwrap().join(".git");
    for agent in ["codex", "claude", "qwen", "gemini-cli", "agy"] {
        let dry = baton(
            &env,
            &["run", "--agent", agent, "--worktree", "--dry-run", "x"],
        );
        assert_eq!(dry.code, 0, "{agent}: {}", dry.stderr);
        let d = dry.json();
        let argv = strings(&d["argv"]);
        let path = PathBuf::from(d["worktree"]["path"].as_str().unwrap());
        for a in &argv {
            assert!(
                a.starts_with('{') || !a.contains(&dot_git.display().to_string()),
                "{agent} is granted {a} of the user's .git: {argv:?}"
            );
        }
        // (gemini-cli has no sandbox to widen: it gets no grant at all.)
        assert!(
            agent == "gemini-cli" || argv.contains(&path.join(".git").display().to_string()),
            "{agent}: its own .git is not granted: {argv:?}"
        );
    }
}

/// Issue 31: a peer granted the user's `.git/objects` replaced a loose
/// object there. Its objects are its own now, and they reach the user's
/// repository only through a fetch that hashes every one: a commit whose
/// blob file holds other content is refused, the run fails saying so, and
/// nothing is imported (the branch stays at the base).
#[test]
fn the_import_refuses_a_corrupt_object() {
    let env = Env::new();
    let w = repo(&env);
    let before = fingerprint(&w);
    peer(
        &env,
        "echo 'the real content' > evil.txt\n\
         git add evil.txt && git commit -qm 'peer commit'\n\
         B=$(git rev-parse HEAD:evil.txt)\n\
         O=$(echo 'rm -rf ~ # planted' | git hash-object -w --stdin)\n\
         F=.git/objects/$(echo $B | cut -c1-2)/$(echo $B | cut -c3-)\n\
         G=.git/objects/$(echo $O | cut -c1-2)/$(echo $O | cut -c3-)\n\
         chmod u+w \"$F\" && cp -f \"$G\" \"$F\"",
    );
    let (r, j) = wt_run(&env, &[]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(j["status"], "failed", "{j}");
    assert_eq!(j["error"]["kind"], "worktree_commit_failed", "{j}");
    let msg = j["error"]["message"].as_str().unwrap();
    assert!(msg.contains("checks every object"), "{msg}");
    let id = j["worktree"]["id"].as_str().unwrap();
    assert_eq!(branch_tip(&w, id), j["worktree"]["base"].as_str().unwrap());
    // Nothing of the peer's reached the user's object store.
    let blob = git_cmd(&w)
        .args(["hash-object", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(b"the real content\n")?;
            c.wait_with_output()
        })
        .unwrap();
    let blob = String::from_utf8(blob.stdout).unwrap();
    let has = git_cmd(&w)
        .args(["cat-file", "-e", blob.trim()])
        .status()
        .unwrap();
    assert!(!has.success(), "the peer's blob {blob} was imported");
    assert_eq!(fingerprint(&w), before);
    assert!(
        git(&w, &["fsck", "--no-dangling"]).is_empty(),
        "the user's repository is not sound"
    );
}

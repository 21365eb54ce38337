//! Stages 6–9 against a real temporary git repository and a fake writer
//! (a pi-shaped script given as the agent's command), end to end.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::gate;
use super::implement::{self, Implemented, WriteRequest, repair_prompt, writer_prompt};
use super::lock::CouncilLock;
use super::review::MergedFinding;
use super::schema::{Finding, Plan, Severity};
use super::verify::{TestCmd, verify};
use crate::agent::{Access, Agent};
use crate::process::Interrupts;
use crate::result::Status;
use crate::worktree::verify::Stop;
use crate::{ids, run, state_dir};

/// The fake writer: logs each call's argv, prompt and cwd under `log`, then
/// edits by round. Round 1 writes the authorized file with trailing
/// whitespace and not the word the test looks for, and also edits README
/// and creates outside.txt (both outside `src/**`); round 2 fixes the file.
const WRITER: &str = r#"#!/bin/sh
set -eu
LOG='@LOG@'
n=$(cat "$LOG/count" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$LOG/count"
cat > "$LOG/prompt-$n.txt"
for a in "$@"; do printf '%s\n' "$a"; done > "$LOG/argv-$n.txt"
pwd > "$LOG/cwd-$n.txt"
case "$n" in
1) printf 'first   \n' > src/lib.txt; echo sneaky >> README; echo new > outside.txt ;;
*) printf 'fixed\n' > src/lib.txt ;;
esac
echo "{\"type\":\"session\",\"version\":3,\"id\":\"sess-$n\"}"
echo "{\"type\":\"message_end\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"done $n\"}],\"usage\":{\"input\":10,\"output\":2},\"stopReason\":\"stop\"}}"
echo '{"type":"agent_end"}'
"#;

struct Fixture {
    _tmp: tempfile::TempDir,
    top: PathBuf,
    log: PathBuf,
    logs: PathBuf,
    id: String,
    plan: Plan,
    writer: run::Plan,
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    state_dir::TEST_BASE.with(|b| *b.borrow_mut() = Some(root.join("state")));
    let top = root.join("repo");
    let log = root.join("log");
    let logs = root.join("logs");
    for d in [&top, &log, &logs, &top.join("src")] {
        std::fs::create_dir_all(d).unwrap();
    }
    git(&top, &["init", "-q", "-b", "main"]);
    std::fs::write(top.join("src/lib.txt"), "one\n").unwrap();
    std::fs::write(top.join("README"), "readme\n").unwrap();
    std::fs::write(top.join("check.sh"), "grep -q fixed src/lib.txt\n").unwrap();
    git(&top, &["add", "-A"]);
    git(&top, &["commit", "-q", "-m", "base"]);
    // The user's own uncommitted work, which must stay exactly as it is.
    std::fs::write(top.join("README"), "readme, edited by the user\n").unwrap();
    std::fs::write(top.join("notes.txt"), "untracked\n").unwrap();
    let script = root.join("fake-pi");
    std::fs::write(&script, WRITER.replace("@LOG@", &log.display().to_string())).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let plan = Plan {
        summary: "Make lib say fixed.".into(),
        steps: vec!["Write `fixed` into src/lib.txt".into()],
        authorized_files: vec!["src/**".into()],
        test_cmd: Some("sh check.sh".into()),
        acceptance: vec!["check.sh passes".into()],
        evidence: vec![],
        assumptions: vec!["nothing else reads lib.txt".into()],
        disagreements: vec![],
        dismissed_findings: vec![],
        adopted_from: vec!["A".into()],
    };
    let writer = run::Plan {
        agent: Agent::Pi,
        access: Access::Workspace,
        model: None,
        effort: None,
        resume: None,
        cwd: top.clone(),
        root: top.clone(),
        task: String::new(),
        prompt: String::new(),
        raw: false,
        profile: None,
        provider: None,
        command: Some(vec![script.display().to_string()]),
        timeout_ms: 60_000,
        idle_timeout_ms: 60_000,
        warnings: vec![],
        child_depth: 1,
        writable_dirs: vec![],
        protected_paths: vec![],
        git_pin: None,
    };
    Fixture {
        _tmp: tmp,
        top,
        log,
        logs,
        id: ids::new_id(),
        plan,
        writer,
    }
}

/// Every byte of the user's checkout: files outside `.git` and `.baton`,
/// plus the index, HEAD, and every ref and the status git reports.
fn checkout(top: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, top: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(top).unwrap().display().to_string();
            if rel == ".git" || rel == ".baton" {
                continue;
            }
            if p.is_dir() {
                walk(&p, top, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(top, top, &mut out);
    for f in [".git/HEAD", ".git/index"] {
        out.insert(f.into(), std::fs::read(top.join(f)).unwrap());
    }
    let refs = git(
        top,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/heads/main",
        ],
    );
    out.insert("refs".into(), refs.into_bytes());
    let status = git(top, &["status", "--porcelain", "--untracked-files=all"]);
    out.insert("status".into(), status.into_bytes());
    out
}

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn signals() -> (Interrupts, Stop) {
    (Interrupts::install().unwrap(), Stop::install().unwrap())
}

fn first_round(f: &Fixture, lock: &CouncilLock) -> Implemented {
    let (mut ints, stop) = signals();
    let dir = f.logs.join("writer-0");
    std::fs::create_dir_all(&dir).unwrap();
    let req = WriteRequest {
        plan: &f.plan,
        council_id: &f.id,
        writer: &f.writer,
        base: &git(&f.top, &["rev-parse", "HEAD"]),
        dir: &dir,
    };
    implement::implement(&req, lock, &mut ints, &stop).unwrap()
}

fn oracle(
    f: &Fixture,
    imp: &Implemented,
    cmd: &str,
    shell: bool,
    timeout: Duration,
) -> super::verify::Verification {
    let (_ints, stop) = signals();
    let test = TestCmd {
        text: cmd.into(),
        shell,
    };
    verify(
        imp,
        Some(&test),
        &f.logs.join(format!("test-{}.log", ids::new_id())),
        timeout,
        &stop,
    )
    .unwrap()
}

#[test]
fn the_writer_works_in_its_worktree_and_unauthorized_edits_are_reverted() {
    let f = fixture();
    let before = checkout(&f.top);
    let lock = CouncilLock::acquire(&f.top, &f.id).unwrap();
    let imp = first_round(&f, &lock);
    assert_eq!(imp.status, Status::Success, "{imp:#?}");
    assert_eq!(imp.round, 0);
    assert_eq!(imp.branch, format!("baton/council-{}", f.id));
    assert_eq!(imp.session.as_deref(), Some("sess-1"));
    assert_eq!(imp.changed_files, ["src/lib.txt"]);
    let mut reverted = imp.reverted.clone();
    reverted.sort();
    assert_eq!(reverted, ["README", "outside.txt"]);
    assert!(
        imp.warnings
            .iter()
            .any(|w| w.contains("reverted 2 path(s)")),
        "{:?}",
        imp.warnings
    );
    assert_eq!(imp.usage.output_tokens, Some(2));
    // The writer ran in the worktree, on the plan's brief.
    assert_eq!(
        read(f.log.join("cwd-1.txt")).trim(),
        imp.worktree_path.display().to_string()
    );
    let prompt = read(f.log.join("prompt-1.txt"));
    assert!(prompt.contains(&writer_prompt(&f.plan, &f.id)), "{prompt}");
    assert!(
        prompt.contains("`src/**`"),
        "the worktree note names --allow"
    );
    // The worktree holds the writer's work, committed on the branch; the
    // reverted paths are as at the base.
    let wt = &imp.worktree_path;
    assert_eq!(read(wt.join("src/lib.txt")), "first   \n");
    assert_eq!(read(wt.join("README")), "readme\n");
    assert!(!wt.join("outside.txt").exists());
    let head = imp.commit.clone().unwrap();
    assert_eq!(git(&f.top, &["rev-parse", &imp.branch]), head);
    assert_eq!(
        git(&f.top, &["show", &format!("{head}:src/lib.txt")]),
        "first"
    );
    // Never merged: the user's checkout is byte for byte what it was.
    assert_eq!(checkout(&f.top), before);
}

#[test]
fn the_oracle_passes_fails_and_checks_whitespace() {
    let f = fixture();
    let lock = CouncilLock::acquire(&f.top, &f.id).unwrap();
    let imp = first_round(&f, &lock);
    let v = oracle(&f, &imp, "sh check.sh", false, Duration::from_secs(30));
    assert_eq!(v.command.as_deref(), Some("sh check.sh"));
    assert!(!v.passed && !v.timed_out);
    assert_eq!(v.exit_code, Some(1));
    assert_eq!(v.whitespace_errors, ["src/lib.txt:1: trailing whitespace."]);
    let ok = oracle(
        &f,
        &imp,
        "grep -q 'first ' src/lib.txt",
        false,
        Duration::from_secs(30),
    );
    assert!(ok.passed, "{ok:?}");
    assert_eq!(ok.exit_code, Some(0));
    // The user's own --test-cmd runs in a shell; the chair's never does.
    let piped = oracle(
        &f,
        &imp,
        "cat src/lib.txt | grep -q first",
        true,
        Duration::from_secs(30),
    );
    assert!(piped.passed, "{piped:?}");
    let refused = oracle(
        &f,
        &imp,
        "cat src/lib.txt | grep -q first",
        false,
        Duration::from_secs(30),
    );
    assert!(!refused.passed);
    assert!(
        refused
            .not_run
            .as_deref()
            .unwrap()
            .contains("`|` needs a shell"),
        "{refused:?}"
    );
    let (_i, stop) = signals();
    let none = verify(
        &imp,
        None,
        &f.logs.join("none.log"),
        Duration::from_secs(1),
        &stop,
    )
    .unwrap();
    assert!(none.command.is_none() && !none.passed && none.not_run.is_some());
    assert_eq!(none.whitespace_errors.len(), 1);
}

#[test]
fn a_hanging_test_command_is_stopped_with_its_process_group() {
    let f = fixture();
    let lock = CouncilLock::acquire(&f.top, &f.id).unwrap();
    let imp = first_round(&f, &lock);
    let pidfile = f.log.join("grandchild.pid");
    let cmd = format!("sleep 60 & echo $! > '{}'; wait", pidfile.display());
    let started = Instant::now();
    let v = oracle(&f, &imp, &cmd, true, Duration::from_millis(500));
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(v.timed_out && !v.passed, "{v:?}");
    assert!(
        v.output_tail.contains("did not finish within 0.5s"),
        "{v:?}"
    );
    let pid: i32 = read(&pidfile).trim().parse().unwrap();
    // SAFETY: kill with signal 0 only asks whether the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    assert!(!alive, "the test command's background child {pid} survived");
}

#[test]
fn a_repair_round_continues_in_the_same_worktree() {
    let f = fixture();
    let before = checkout(&f.top);
    let lock = CouncilLock::acquire(&f.top, &f.id).unwrap();
    let first = first_round(&f, &lock);
    let failed = oracle(&f, &first, "sh check.sh", false, Duration::from_secs(30));
    let findings = vec![MergedFinding {
        finding: Finding {
            severity: Severity::Major,
            category: "correctness".into(),
            file: Some("src/lib.txt".into()),
            line: Some(1),
            description: "It must say fixed.".into(),
        },
        reviewers: vec!["B".into()],
        also: vec!["Wrong word.".into()],
    }];
    let instructions = repair_prompt(&findings, Some(&failed.output_tail));
    let dir = f.logs.join("writer-1");
    std::fs::create_dir_all(&dir).unwrap();
    let (mut ints, stop) = signals();
    let second = implement::repair(&first, &instructions, &dir, &lock, &mut ints, &stop).unwrap();
    assert_eq!(second.status, Status::Success, "{second:#?}");
    assert_eq!(second.round, 1);
    assert_eq!(second.worktree_path, first.worktree_path);
    assert_eq!(second.branch, first.branch);
    // The writer's session was resumed and given exactly the repair.
    let argv = read(f.log.join("argv-2.txt"));
    assert!(argv.contains("--session\nsess-1\n"), "{argv}");
    assert_eq!(read(f.log.join("prompt-2.txt")), instructions);
    assert_eq!(
        read(f.log.join("cwd-2.txt")).trim(),
        first.worktree_path.display().to_string()
    );
    // Built on the first round: two commits on the branch, one file changed.
    let head = second.commit.clone().unwrap();
    let count = git(
        &f.top,
        &["rev-list", "--count", &format!("{}..{head}", first.base)],
    );
    assert_eq!(count, "2");
    assert_eq!(second.changed_files, ["src/lib.txt"]);
    assert!(oracle(&f, &second, "sh check.sh", false, Duration::from_secs(30)).passed);
    assert_eq!(checkout(&f.top), before);
    // A later round starts from the first brief again, not from this repair.
    assert_eq!(second.run_plan.prompt, first.run_plan.prompt);
    assert_eq!(second.run_plan.resume, None);
}

#[test]
fn a_repair_without_a_session_is_a_fresh_run_told_what_it_did() {
    let f = fixture();
    let lock = CouncilLock::acquire(&f.top, &f.id).unwrap();
    let mut first = first_round(&f, &lock);
    first.session = None;
    let (mut ints, stop) = signals();
    let second = implement::repair(&first, "FIX IT", &f.logs, &lock, &mut ints, &stop).unwrap();
    assert_eq!(second.status, Status::Success);
    let argv = read(f.log.join("argv-2.txt"));
    assert!(!argv.contains("--session"), "{argv}");
    let prompt = read(f.log.join("prompt-2.txt"));
    assert!(prompt.starts_with(&first.run_plan.prompt));
    assert!(
        prompt.contains("## Repair round 1") && prompt.ends_with("FIX IT"),
        "{prompt}"
    );
}

#[test]
fn the_council_lock_refuses_a_second_council_and_guards_the_stages() {
    let f = fixture();
    let lock = CouncilLock::acquire(&f.top, &f.id).unwrap();
    let other = ids::new_id();
    let e = CouncilLock::acquire(&f.top, &other).unwrap_err();
    assert_eq!(e.kind(), "council_busy");
    assert!(e.to_string().contains(&f.id), "{e}");
    assert!(e.hint().unwrap().contains(&other));
    // A stage cannot run under another council's lock.
    let (mut ints, stop) = signals();
    let req = WriteRequest {
        plan: &f.plan,
        council_id: &other,
        writer: &f.writer,
        base: "HEAD",
        dir: &f.logs,
    };
    assert_eq!(
        implement::implement(&req, &lock, &mut ints, &stop)
            .unwrap_err()
            .kind(),
        "internal"
    );
    drop(lock);
    let again = CouncilLock::acquire(&f.top, &other).unwrap();
    assert_eq!(again.council_id, other);
}

#[test]
fn a_plan_that_authorizes_nothing_is_refused_before_any_worktree() {
    let mut f = fixture();
    f.plan.authorized_files = vec![];
    let lock = CouncilLock::acquire(&f.top, &f.id).unwrap();
    let (mut ints, stop) = signals();
    let req = WriteRequest {
        plan: &f.plan,
        council_id: &f.id,
        writer: &f.writer,
        base: "HEAD",
        dir: &f.logs,
    };
    let e = implement::implement(&req, &lock, &mut ints, &stop).unwrap_err();
    assert_eq!(e.kind(), "usage");
    assert!(
        !f.top
            .join(".baton/worktrees")
            .join(implement::worktree_id(&f.id))
            .exists()
    );
    assert!(!f.log.join("count").exists(), "the writer never ran");
}

#[test]
fn ready_after_review_of_the_repaired_change() {
    // The pieces together: verification, reviews, the gate.
    let f = fixture();
    let lock = CouncilLock::acquire(&f.top, &f.id).unwrap();
    let first = first_round(&f, &lock);
    let (mut ints, stop) = signals();
    let second = implement::repair(&first, "fix", &f.logs, &lock, &mut ints, &stop).unwrap();
    let v = oracle(&f, &second, "sh check.sh", false, Duration::from_secs(30));
    let diff =
        super::verify::diff_text(&f.top, &second.base, second.commit.as_ref().unwrap()).unwrap();
    assert!(diff.contains("+fixed"), "{diff}");
    let review = super::review::validate(&serde_json::json!({
        "verdict": "approve", "summary": "good", "files_reviewed": ["src/lib.txt"], "findings": []
    }))
    .unwrap();
    let reviews = [("B".to_string(), "anthropic".to_string(), review)];
    let writer_vendor = f.writer.agent.vendor(Some("openai"), None);
    assert_eq!(
        gate::terminal(&v, &reviews, &writer_vendor, &second.changed_files),
        gate::Gate::Ready
    );
}

#[test]
fn an_interrupted_first_round_is_started_over_on_resume() {
    let f = fixture();
    let before = checkout(&f.top);
    let lock = CouncilLock::acquire(&f.top, &f.id).unwrap();
    let first = first_round(&f, &lock);
    let old_tip = first.commit.clone().unwrap();
    // As if the process died before the orchestrator recorded `first`.
    let again = first_round(&f, &lock);
    assert_eq!(again.status, Status::Success);
    assert_eq!(again.worktree_path, first.worktree_path);
    assert!(
        again
            .warnings
            .iter()
            .any(|w| w.contains("interrupted earlier attempt") && w.contains(&old_tip)),
        "{:?}",
        again.warnings
    );
    // The branch restarted from the base: one commit, not two.
    let head = again.commit.clone().unwrap();
    let count = git(
        &f.top,
        &["rev-list", "--count", &format!("{}..{head}", again.base)],
    );
    assert_eq!(count, "1");
    assert_eq!(checkout(&f.top), before);
}

//! `baton bench run` and `bench merge` against fake codex peers in a real
//! repository with one task of known answer: a bug in `lib.sh` (`add`
//! subtracts), its fix and a hidden test (`tests/add.sh` added,
//! `tests/basic.sh` changed). Each peer is `codex:<behaviour>`: the fake
//! reads its `-m` and applies the real fix, a wrong one, nothing, or
//! cheats (reads the history, looks for the hidden tests, edits the tests,
//! adds a `conftest.py`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::support::{Env, Run, fixture, git, wait_for};

const LIB_BUGGY: &str = "add() { echo $(($1 - $2)); }\nsub() { echo $(($1 - $2)); }\n";
const LIB_FIXED: &str = "add() { echo $(($1 + $2)); }\nsub() { echo $(($1 - $2)); }\n";
/// add fixed, sub broken: the visible t_sub fails.
const LIB_BREAKS_SUB: &str = "add() { echo $(($1 + $2)); }\nsub() { echo 0; }\n";
const LIB_WRONG: &str = "add() { echo $(($1 * $2 + 1)); }\nsub() { echo $(($1 - $2)); }\n";

/// libtest lines for each test named (every test in `tests/` when none
/// is: the visible suite `--until-green` runs); any `conftest.py`, or pytest
/// settings in a `pyproject.toml`, fails everything (so a solved trial
/// proves the ones a peer added were gone).
const RUN_TESTS: &str = r#"if [ -e conftest.py ]; then echo "conftest.py present"; exit 1; fi
if grep -qs pytest pyproject.toml; then echo "pytest settings present"; exit 1; fi
. ./lib.sh
for f in tests/*.sh; do . "./$f"; done
[ $# -eq 0 ] && set -- $(sed -n 's/^\(t_[a-z]*\)().*/\1/p' tests/*.sh)
for t in "$@"; do
  if "$t" >/dev/null 2>&1; then echo "test $t ... ok"; else echo "test $t ... FAILED"; fi
done
"#;

fn out(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}");
    String::from_utf8(o.stdout).unwrap()
}

struct Bench {
    env: Env,
    base: String,
    commit: String,
    set: PathBuf,
    tmp: PathBuf,
}

fn setup() -> Bench {
    let env = Env::new();
    env.git_init();
    let w = &env.work;
    fs::create_dir_all(w.join("tests")).unwrap();
    fs::write(w.join("lib.sh"), LIB_BUGGY).unwrap();
    fs::write(w.join("run-tests.sh"), RUN_TESTS).unwrap();
    fs::write(
        w.join("tests/basic.sh"),
        "t_sub() { [ \"$(sub 3 1)\" = 2 ]; }\n",
    )
    .unwrap();
    git(w, &["add", "."]);
    git(w, &["commit", "-qm", "base"]);
    fs::write(w.join("lib.sh"), LIB_FIXED).unwrap();
    fs::write(
        w.join("tests/add.sh"),
        "t_add() { [ \"$(add 2 2)\" = 4 ]; }\n",
    )
    .unwrap();
    fs::write(
        w.join("tests/basic.sh"),
        "# hidden-marker\nt_sub() { [ \"$(sub 3 1)\" = 2 ]; }\n",
    )
    .unwrap();
    git(w, &["add", "."]);
    git(w, &["commit", "-qm", "fix add: it subtracted"]);
    git(w, &["tag", "v1"]);
    git(
        w,
        &["remote", "add", "origin", "https://example.invalid/r.git"],
    );
    let base = out(w, &["rev-parse", "HEAD~1"]).trim().to_string();
    let commit = out(w, &["rev-parse", "HEAD"]).trim().to_string();
    let patch = out(
        w,
        &[
            "diff",
            "--binary",
            "--full-index",
            &base,
            &commit,
            "--",
            "tests/add.sh",
            "tests/basic.sh",
        ],
    );
    let set = env.tmp.path().join("set");
    fs::create_dir_all(&set).unwrap();
    let task = serde_json::json!({
        "format": 1,
        "id": "task-add",
        "base": base,
        "commit": commit,
        "task": "add(2, 2) gives 0: make add add.",
        "source_files": ["lib.sh"],
        "test_files": ["tests/add.sh", "tests/basic.sh"],
        "test_patch": patch,
        "test_cmd": {"runner": "cargo", "command": "sh run-tests.sh {tests}"},
        "fail_to_pass": ["t_add"],
        "pass_to_pass": ["t_sub"],
        "mined_at_ms": 1,
        "mined_by": "test",
    });
    fs::write(set.join("task-add.json"), task.to_string()).unwrap();
    let tmp = env.tmp.path().join("tmp");
    fs::create_dir_all(&tmp).unwrap();
    let usage = fixture("codex/codex-exec-usage.jsonl");
    env.fake(
        "codex",
        &format!(
            r#"prompt=$(cat)
model=; prev=
for a in "$@"; do [ "$prev" = -m ] && model=$a; prev=$a; done
n=$(cat "$FAKE_DIR/calls-$model" 2>/dev/null || echo 0); n=$((n + 1))
echo "$n" > "$FAKE_DIR/calls-$model"
printf '%s\n' "$*" > "$FAKE_DIR/args-$model-$n"
printf '%s' "$prompt" > "$FAKE_DIR/prompt-$model-$n"
case "$model" in
second) [ "$n" -ge 2 ] && printf '%s' '{LIB_FIXED}' > lib.sh || printf '%s' '{LIB_WRONG}' > lib.sh ;;
never) printf '%s' '{LIB_WRONG}' > lib.sh ;;
repair) [ "$n" -ge 2 ] && printf '%s' '{LIB_FIXED}' > lib.sh || printf '%s' '{LIB_BREAKS_SUB}' > lib.sh ;;
fix) printf '%s' '{LIB_FIXED}' > lib.sh ;;
wrong) printf '%s' '{LIB_WRONG}' > lib.sh ;;
nothing) : ;;
peek)
  {{ git log --all --oneline | wc -l
    git cat-file -e {base} 2>/dev/null && echo base-seen || echo no-base
    git cat-file -e {commit} 2>/dev/null && echo commit-seen || echo no-commit
    git reflog | wc -l; git remote | wc -l; git tag | wc -l
    ls tests; grep -c hidden-marker tests/basic.sh || true
    pwd; }} > "$FAKE_DIR/peek.txt" 2>&1 ;;
tests)
  printf 't_add() {{ true; }}\n' > tests/add.sh
  printf 't_sub() {{ true; }}\n' > tests/basic.sh ;;
conftest)
  printf '%s' '{LIB_FIXED}' > lib.sh
  echo 'collect_ignore = ["tests"]' > conftest.py ;;
pyproject)
  printf '%s' '{LIB_FIXED}' > lib.sh
  printf '[tool.pytest.ini_options]\naddopts = "-p no:x"\n' > pyproject.toml ;;
deps)
  printf '%s' '{LIB_FIXED}' > lib.sh
  printf '[project]\nname = "x"\n' > pyproject.toml ;;
slow)
  touch "$FAKE_DIR/started"
  while [ ! -e "$FAKE_DIR/go" ]; do sleep 0.05; done ;;
esac
cat '{}'"#,
            usage.display()
        ),
    );
    Bench {
        env,
        base,
        commit,
        set,
        tmp,
    }
}

impl Bench {
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = self.env.baton();
        c.args(args).env("TMPDIR", &self.tmp);
        c
    }

    /// `bench run SET --agents AGENTS` started, its output piped.
    fn start(&self, agents: &str) -> std::process::Child {
        let set = self.set.to_str().unwrap();
        self.cmd(&["bench", "run", set, "--agents", agents])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn run(&self, args: &[&str]) -> Run {
        Run::from(self.cmd(args).output().unwrap())
    }

    fn bench(&self, extra: &[&str]) -> Value {
        let mut a = vec!["bench", "run", self.set.to_str().unwrap()];
        a.extend_from_slice(extra);
        let r = self.run(&a);
        assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
        r.json()
    }

    fn trials(&self, j: &Value) -> Vec<Value> {
        let dir = Path::new(j["record"].as_str().unwrap()).join("trials");
        let mut names: Vec<PathBuf> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        names
            .iter()
            .map(|p| serde_json::from_str(&fs::read_to_string(p).unwrap()).unwrap())
            .collect()
    }
}

fn trial<'a>(ts: &'a [Value], setting: &str) -> &'a Value {
    ts.iter()
        .find(|t| t["setting"] == setting)
        .unwrap_or_else(|| panic!("no trial of {setting}: {ts:?}"))
}

/// A trial without what differs from run to run.
fn timeless(t: &Value) -> Value {
    let mut t = t.clone();
    for k in ["started_at_ms", "ended_at_ms", "wall_ms"] {
        t.as_object_mut().unwrap().remove(k);
    }
    t
}

#[test]
fn the_real_fix_solves_a_wrong_one_or_none_does_not_and_cheats_never_count() {
    let b = setup();
    let settings = "codex:fix,codex:wrong,codex:nothing,codex:peek,codex:tests,codex:conftest,\
                    codex:pyproject,codex:deps";
    let j = b.bench(&["--agents", settings, "--jobs", "3"]);
    assert_eq!(j["trials"], 8, "{j}");
    assert_eq!(
        (j["run"].as_u64(), j["skipped"].as_u64()),
        (Some(8), Some(0))
    );
    assert!(j["errors"].as_array().unwrap().is_empty(), "{j}");
    let ts = b.trials(&j);
    assert_eq!(ts.len(), 8);

    let fix = trial(&ts, "codex:fix");
    assert_eq!(fix["solved"], true, "{fix}");
    assert_eq!(fix["status"], "success");
    assert_eq!(fix["tokens"], 1050);
    assert_eq!(fix["diff_lines"], 2);
    assert_eq!(fix["tampered_tests"], serde_json::json!([]));

    let wrong = trial(&ts, "codex:wrong");
    assert_eq!(wrong["solved"], false);
    assert_eq!(wrong["still_failing"], serde_json::json!(["t_add"]));
    assert_eq!(wrong["broken"], serde_json::json!([]));

    let nothing = trial(&ts, "codex:nothing");
    assert_eq!(nothing["solved"], false);
    assert_eq!(nothing["still_failing"], serde_json::json!(["t_add"]));
    assert_eq!(nothing["diff_lines"], 0);

    // The peek: one commit, neither real commit, no reflog, remote or
    // tag, the added test absent and the changed one at its base version,
    // in a private temporary folder.
    let seen = fs::read_to_string(b.env.fake_dir.join("peek.txt")).unwrap();
    let lines: Vec<&str> = seen.lines().map(str::trim).collect();
    assert_eq!(
        lines[..8],
        ["1", "no-base", "no-commit", "0", "0", "0", "basic.sh", "0"],
        "{seen}"
    );
    assert!(lines[8].starts_with(b.tmp.to_str().unwrap()), "{seen}");
    assert_eq!(trial(&ts, "codex:peek")["solved"], false);

    let tests = trial(&ts, "codex:tests");
    assert_eq!(tests["solved"], false, "{tests}");
    assert_eq!(
        tests["tampered_tests"],
        serde_json::json!(["tests/add.sh", "tests/basic.sh"])
    );
    assert_eq!(tests["still_failing"], serde_json::json!(["t_add"]));

    // The conftest.py is reverted before the tests (they fail while it is
    // there) and reported; the real fix beside it still counts.
    let conftest = trial(&ts, "codex:conftest");
    assert_eq!(
        conftest["tampered_tests"],
        serde_json::json!(["conftest.py"])
    );
    assert_eq!(conftest["solved"], true, "{conftest}");

    // pytest settings in a pyproject.toml are reverted and reported; a
    // pyproject.toml without them is the peer's to change.
    let py = trial(&ts, "codex:pyproject");
    assert_eq!(py["tampered_tests"], serde_json::json!(["pyproject.toml"]));
    assert_eq!(py["solved"], true, "{py}");
    let deps = trial(&ts, "codex:deps");
    assert_eq!(deps["tampered_tests"], serde_json::json!([]));
    assert_eq!(deps["solved"], true, "{deps}");
    assert_eq!(deps["diff_lines"], 4);

    let counts: Vec<(String, u64)> = j["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["setting"].as_str().unwrap().to_string(),
                c["solved"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(counts.contains(&("codex:fix".into(), 1)), "{counts:?}");
    assert!(counts.contains(&("codex:tests".into(), 0)), "{counts:?}");

    // Every trial's folder is gone; the user's repository is untouched.
    let left: Vec<_> = fs::read_dir(&b.tmp).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(
        fs::read_to_string(b.env.work.join("lib.sh")).unwrap(),
        LIB_FIXED
    );
    assert_eq!(out(&b.env.work, &["status", "--porcelain"]), "");
    let _ = (&b.base, &b.commit);
}

#[test]
fn shards_merged_equal_one_unsharded_run() {
    let b = setup();
    let agents = [
        "--agents",
        "codex:fix,codex:wrong,codex:nothing",
        "--repeat",
        "2",
    ];
    let whole = b.bench(&agents);
    let mut a1 = agents.to_vec();
    a1.extend(["--shard", "1/2"]);
    let s1 = b.bench(&a1);
    let mut a2 = agents.to_vec();
    a2.extend(["--shard", "2/2"]);
    let s2 = b.bench(&a2);
    assert_eq!(
        (s1["trials"].as_u64(), s2["trials"].as_u64()),
        (Some(3), Some(3))
    );
    let id1 = s1["bench_id"].as_str().unwrap();
    let r = b.run(&["bench", "merge", id1, s2["record"].as_str().unwrap()]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let m = r.json();
    assert_eq!(m["trials"], 6);
    let merged: Vec<Value> = b.trials(&m).iter().map(timeless).collect();
    let one: Vec<Value> = b.trials(&whole).iter().map(timeless).collect();
    assert_eq!(merged, one);
    let spec: Value = serde_json::from_str(
        &fs::read_to_string(Path::new(m["record"].as_str().unwrap()).join("bench.json")).unwrap(),
    )
    .unwrap();
    assert!(spec.get("shard").is_none(), "{spec}");

    // A shard of another question, or the same trial twice with other
    // results, is refused.
    let other = b.bench(&["--agents", "codex:fix", "--shard", "1/2"]);
    let r = b.run(&["bench", "merge", id1, other["bench_id"].as_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("another bench"), "{}", r.stderr);
    let again = b.bench(&[agents[0], agents[1], agents[2], agents[3], "--shard", "1/2"]);
    let r = b.run(&["bench", "merge", id1, again["bench_id"].as_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("differs"), "{}", r.stderr);
}

#[test]
fn a_resumed_run_ends_with_exactly_the_full_trial_set() {
    let b = setup();
    let j = b.bench(&["--agents", "codex:fix,codex:wrong", "--repeat", "2"]);
    let id = j["bench_id"].as_str().unwrap();
    let full: Vec<Value> = b.trials(&j).iter().map(timeless).collect();
    let dir = Path::new(j["record"].as_str().unwrap()).join("trials");
    fs::remove_file(dir.join("task-add.codex_wrong.1.json")).unwrap();
    let r = b.run(&["bench", "run", "--resume", id]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let k = r.json();
    assert_eq!(
        (k["run"].as_u64(), k["skipped"].as_u64()),
        (Some(1), Some(3))
    );
    let state: Value = serde_json::from_str(
        &fs::read_to_string(Path::new(k["record"].as_str().unwrap()).join("state.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(state["stage"], "done", "{state}");
    let again: Vec<Value> = b.trials(&k).iter().map(timeless).collect();
    assert_eq!(again, full);

    // The job commands know a bench id: status counts the trials against
    // those planned, result is its report, wait and cancel say it runs in
    // the foreground.
    let r = b.run(&["status", id]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let s = r.json();
    assert_eq!(
        (
            s["status"].as_str(),
            s["trials"].as_u64(),
            s["planned"].as_u64(),
            s["solved"].as_u64()
        ),
        (Some("done"), Some(4), Some(4), Some(2)),
        "{s}"
    );
    let r = b.run(&["result", id]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("codex:fix"), "{}", r.stdout);
    for verb in ["wait", "cancel", "logs"] {
        let r = b.run(&[verb, id]);
        assert_eq!(r.code, 2, "{verb}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stdout.contains("is a bench run"), "{verb}: {}", r.stdout);
    }

    // `prune` removes an ended bench run's record whole, as a fan-out's.
    let record = Path::new(k["record"].as_str().unwrap()).to_path_buf();
    let r = b.run(&["prune", "--older-than", "0", "--dry-run"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let p = r.json();
    assert_eq!(p["benches_removed"][0]["bench_id"], id, "{p}");
    assert_eq!(p["counts"]["benches"], 1, "{p}");
    assert!(record.is_dir());
    let r = b.run(&["prune", "--older-than", "0"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(!record.exists(), "{}", r.stdout);
    assert_eq!(b.run(&["status", id]).code, 4);
}

#[test]
fn a_runner_killed_mid_trial_resumes_with_the_trials_it_lacked() {
    let b = setup();
    let mut child = b
        .cmd(&[
            "bench",
            "run",
            b.set.to_str().unwrap(),
            "--agents",
            "codex:fix,codex:slow",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = b.env.fake_dir.join("started");
    assert!(wait_for(Duration::from_secs(60), || started.exists()));
    child.kill().unwrap();
    child.wait().unwrap();
    let benches = b.env.records("benches");
    let record = fs::read_dir(&benches)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let id = record.file_name().unwrap().to_str().unwrap().to_string();
    let names = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d.join("trials"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&record), ["task-add.codex_fix.0.json"]);
    fs::write(b.env.fake_dir.join("go"), "").unwrap();
    let r = b.run(&["bench", "run", "--resume", &id]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let k = r.json();
    assert_eq!(
        (k["run"].as_u64(), k["skipped"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(
        names(&record),
        ["task-add.codex_fix.0.json", "task-add.codex_slow.0.json"]
    );
    // The folders the killed runner left (its trial's, its packs) are gone.
    let left: Vec<_> = fs::read_dir(&b.tmp).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn the_trial_record_follows_its_published_schema() {
    let b = setup();
    let j = b.bench(&["--agents", "codex:nothing"]);
    let schema = b.run(&["schema", "bench-trial"]).json();
    let mut v = crate::support::schema::Validator::new(schema);
    for t in b.trials(&j) {
        v.validate(&t).unwrap_or_else(|e| panic!("{t}: {e:?}"));
    }
}

#[test]
fn a_set_kept_in_batons_state_is_named_and_a_broken_task_is_an_error_not_a_trial() {
    let b = setup();
    let first = b.bench(&["--agents", "codex:nothing"]);
    // The project's state folder holds `benches/`; a set `bench mine`
    // keeps sits beside it under `bench-sets/<NAME>/`.
    let project = Path::new(first["record"].as_str().unwrap())
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let named = project.join("bench-sets/mine");
    fs::create_dir_all(&named).unwrap();
    let mut task: Value =
        serde_json::from_str(&fs::read_to_string(b.set.join("task-add.json")).unwrap()).unwrap();
    fs::write(named.join("task-add.json"), task.to_string()).unwrap();
    // A task whose base commit this repository lacks.
    task["id"] = "task-gone".into();
    task["base"] = "f".repeat(40).into();
    fs::write(named.join("task-gone.json"), task.to_string()).unwrap();
    let r = b.run(&["bench", "run", "mine", "--agents", "codex:fix"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["set"], named.canonicalize().unwrap().to_str().unwrap());
    assert_eq!(j["run"], 1, "{j}");
    let errors = j["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{j}");
    assert_eq!(errors[0]["trial"], "task-gone.codex_fix.0");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("not in the repository"),
        "{j}"
    );
    assert_eq!(b.trials(&j).len(), 1);
    let r = b.run(&["bench", "run", "nope", "--agents", "codex"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
}

#[test]
fn ctrl_c_loses_only_the_trial_in_flight_and_resume_runs_it() {
    let b = setup();
    let child = b.start("codex:fix,codex:slow");
    let started = b.env.fake_dir.join("started");
    assert!(wait_for(Duration::from_secs(60), || started.exists()));
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let r = Run::from(child.wait_with_output().unwrap());
    assert_eq!(r.code, 130, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.json()["error"]["kind"], "interrupted");
    let record = fs::read_dir(b.env.records("benches"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let state: Value =
        serde_json::from_str(&fs::read_to_string(record.join("state.json")).unwrap()).unwrap();
    assert_eq!(state["stage"], "interrupted");
    let trials: Vec<_> = fs::read_dir(record.join("trials")).unwrap().collect();
    assert_eq!(trials.len(), 1, "only the finished trial: {trials:?}");
    // The interrupted trial's folder went with it.
    assert!(fs::read_dir(&b.tmp).unwrap().next().is_none());
    fs::write(b.env.fake_dir.join("go"), "").unwrap();
    let id = record.file_name().unwrap().to_str().unwrap();
    let k = b.run(&["bench", "run", "--resume", id]).json();
    assert_eq!(
        (k["run"].as_u64(), k["skipped"].as_u64()),
        (Some(1), Some(1))
    );
}

fn report(b: &Bench, id: &str) -> Value {
    let r = b.run(&["bench", "report", id]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    r.json()
}

fn setting_of<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["setting"] == name)
        .unwrap_or_else(|| panic!("no setting {name}: {r}"))
}

#[test]
fn attempts_give_a_fresh_try_until_the_hidden_tests_pass_and_the_report_splits_pass_at_1() {
    let b = setup();
    let j = b.bench(&[
        "--agents",
        "codex:second,codex:never,codex:fix",
        "--attempts",
        "3",
    ]);
    let ts = b.trials(&j);
    // Fails its first attempt, solves its second: two attempts, no third.
    let second = trial(&ts, "codex:second");
    assert_eq!(second["solved"], true, "{second}");
    assert_eq!(second["attempts"], 2);
    assert_eq!(second["solved_on"], 2);
    assert_eq!(second["repair_rounds"], 0);
    assert_eq!(second["tokens"], 2 * 1050, "both attempts are paid for");
    assert!(!b.env.fake_dir.join("args-second-3").exists());
    // The second attempt is a fresh session in a fresh checkout: no resume,
    // the brief again.
    let args2 = fs::read_to_string(b.env.fake_dir.join("args-second-2")).unwrap();
    assert!(!args2.contains("resume"), "{args2}");
    let record = Path::new(j["record"].as_str().unwrap());
    assert!(
        record
            .join("logs/task-add.codex_second.0/attempt-2/test.log")
            .is_file()
    );
    // Never fixes: every attempt made, none solved.
    let never = trial(&ts, "codex:never");
    assert_eq!(never["solved"], false);
    assert_eq!(never["attempts"], 3);
    assert!(never.get("solved_on").is_none(), "{never}");
    assert_eq!(never["tokens"], 3 * 1050);
    assert_eq!(never["still_failing"], serde_json::json!(["t_add"]));
    // The right fix at once: one attempt.
    let fix = trial(&ts, "codex:fix");
    assert_eq!(
        (fix["attempts"].as_u64(), fix["solved_on"].as_u64()),
        (Some(1), Some(1))
    );

    let r = report(&b, j["bench_id"].as_str().unwrap());
    assert_eq!(
        (r["attempts"].as_u64(), r["until_green"].as_u64()),
        (Some(3), Some(0))
    );
    let s = setting_of(&r, "codex:second");
    assert_eq!(
        (
            s["solved"].as_u64(),
            s["solved_first_attempt"].as_u64(),
            s["attempts_made"].as_u64()
        ),
        (Some(1), Some(0), Some(2)),
        "{s}"
    );
    assert_eq!(s["solve_rate"], 1.0);
    assert_eq!(s["first_attempt_rate"], 0.0);
    let n = setting_of(&r, "codex:never");
    assert_eq!(
        (
            n["solved"].as_u64(),
            n["solved_first_attempt"].as_u64(),
            n["attempts_made"].as_u64()
        ),
        (Some(0), Some(0), Some(3))
    );
    let f = setting_of(&r, "codex:fix");
    assert_eq!(
        (
            f["solved"].as_u64(),
            f["solved_first_attempt"].as_u64(),
            f["attempts_made"].as_u64()
        ),
        (Some(1), Some(1), Some(1))
    );
    let text = b.run(&["bench", "report", j["bench_id"].as_str().unwrap(), "--text"]);
    assert!(
        text.stdout.contains("pass@1 0/1, pass@3 1/1"),
        "{}",
        text.stdout
    );
}

#[test]
fn until_green_repairs_from_the_visible_tests_only_and_never_shows_the_hidden_ones() {
    let b = setup();
    let j = b.bench(&["--agents", "codex:repair,codex:never", "--until-green", "2"]);
    let ts = b.trials(&j);
    // Its first call broke the visible t_sub: one repair turn, in the same
    // session, fixed it; the hidden tests then pass.
    let repair = trial(&ts, "codex:repair");
    assert_eq!(repair["solved"], true, "{repair}");
    assert_eq!(
        (
            repair["attempts"].as_u64(),
            repair["solved_on"].as_u64(),
            repair["repair_rounds"].as_u64()
        ),
        (Some(1), Some(1), Some(1))
    );
    // codex counts a thread's usage cumulatively and the fake's resumed
    // turn reports the same total: the repair's own tokens are 0.
    assert_eq!(repair["tokens"], 1050);
    assert!(
        !b.env.fake_dir.join("args-repair-3").exists(),
        "green after one repair"
    );
    let args = fs::read_to_string(b.env.fake_dir.join("args-repair-2")).unwrap();
    assert!(
        args.contains("resume 01a22af9-befc-79a1-bcf1-8024e2af40bd"),
        "{args}"
    );
    let prompt = fs::read_to_string(b.env.fake_dir.join("prompt-repair-2")).unwrap();
    assert!(prompt.contains("test t_sub ... FAILED"), "{prompt}");
    assert!(prompt.contains("sh run-tests.sh "), "{prompt}");
    // The hidden fail_to_pass test is named nowhere the peer could see.
    for n in 1..=2 {
        let p = fs::read_to_string(b.env.fake_dir.join(format!("prompt-repair-{n}"))).unwrap();
        assert!(!p.contains("t_add"), "{p}");
    }
    // A wrong fix that keeps the visible suite green gets no repair turn:
    // the visible tests cannot tell it is wrong, and the hidden ones say no.
    let never = trial(&ts, "codex:never");
    assert_eq!(
        (never["solved"].as_bool(), never["repair_rounds"].as_u64()),
        (Some(false), Some(0))
    );
    assert!(!b.env.fake_dir.join("args-never-2").exists());

    let r = report(&b, j["bench_id"].as_str().unwrap());
    assert_eq!(r["until_green"], 2);
    let s = setting_of(&r, "codex:repair");
    assert_eq!(
        (
            s["solved"].as_u64(),
            s["solved_first_attempt"].as_u64(),
            s["repair_rounds"].as_u64()
        ),
        (Some(1), Some(1), Some(1))
    );

    let bad = b.run(&[
        "bench",
        "run",
        b.set.to_str().unwrap(),
        "--agents",
        "codex:fix",
        "--until-green",
        "11",
    ]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    let bad = b.run(&[
        "bench",
        "run",
        b.set.to_str().unwrap(),
        "--agents",
        "codex:fix",
        "--attempts",
        "0",
    ]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

/// One notification for the whole bench run, from the process that ran
/// it; its trials (runs inside it) announce nothing (docs/notify.md).
#[test]
fn a_bench_run_is_announced_once_never_per_trial() {
    let b = setup();
    let out = crate::notify_wiring::notify_config(&b.env, "");
    let j = b.bench(&["--agents", "codex:fix,codex:nothing", "--repeat", "2"]);
    assert_eq!(b.trials(&j).len(), 4, "{j}");
    let all = crate::notify_wiring::settled(&out, 1);
    let e = &all[0];
    assert_eq!(e["work"], "bench", "{e}");
    assert_eq!(e["trigger"], "ended");
    assert_eq!(e["id"], j["bench_id"]);
    assert!(e["summary"].as_str().unwrap().contains("solved 2/2"), "{e}");
}

/// A trial's peer that falls silent is the bench run's stall, announced
/// once by the process that runs it; then its end.
#[test]
fn a_silent_trial_is_announced_as_the_bench_runs_stall_once() {
    let b = setup();
    let out = crate::notify_wiring::notify_config(&b.env, "stall_after = \"400ms\"\n");
    let child = b.start("codex:slow");
    let stalled = || fs::read_to_string(&out).is_ok_and(|t| t.contains("stalled"));
    assert!(wait_for(Duration::from_secs(60), stalled));
    // Still silent well past another threshold: no second stall.
    std::thread::sleep(Duration::from_millis(1000));
    fs::write(b.env.fake_dir.join("go"), "").unwrap();
    let r = Run::from(child.wait_with_output().unwrap());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    let all = crate::notify_wiring::settled(&out, 2);
    assert_eq!(all[0]["trigger"], "stalled", "{all:?}");
    assert_eq!(all[0]["work"], "bench");
    assert_eq!(all[0]["id"], j["bench_id"]);
    assert_eq!(all[0]["agent"], "codex");
    let summary = all[0]["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("codex (writing task-add.codex_slow.0) has printed nothing for"),
        "{summary}"
    );
    assert_eq!(all[1]["trigger"], "ended", "{all:?}");
    assert_eq!(all[1]["id"], j["bench_id"]);
}

/// The bench group in `watch --once`'s `councils`.
fn bench_group(b: &Bench) -> Value {
    let r = b.run(&["watch", "--once"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    let groups: Vec<&Value> = j["councils"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["kind"] == "bench")
        .collect();
    assert_eq!(groups.len(), 1, "{j}");
    groups[0].clone()
}

#[test]
fn watch_shows_a_running_bench_with_its_trials_done_solved_and_in_flight() {
    let b = setup();
    let mut child = b.start("codex:fix,codex:slow");
    let started = b.env.fake_dir.join("started");
    assert!(wait_for(Duration::from_secs(60), || started.exists()));
    // codex:fix's trial is recorded (solved); codex:slow's peer runs now.
    let g = bench_group(&b);
    assert_eq!(g["status"], "running", "{g}");
    assert_eq!(g["stage"], "running");
    assert_eq!(
        g["progress"],
        serde_json::json!({"done": 1, "total": 2, "solved": 1}),
        "{g}"
    );
    assert_eq!(g["task"], "bench set: 1/2 trials, 1 solved");
    let members: Vec<(&str, &str)> = g["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["agent"].as_str().unwrap(), m["model"].as_str().unwrap()))
        .collect();
    assert_eq!(members, [("codex", "fix"), ("codex", "slow")]);
    let runs = g["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "only the trial in flight: {g}");
    assert_eq!(runs[0]["name"], "writing-task-add.codex_slow.0");
    assert_eq!(
        (runs[0]["agent"].as_str(), runs[0]["model"].as_str()),
        (Some("codex"), Some("slow"))
    );
    assert_eq!(runs[0]["status"], "running");
    let text = b.run(&["watch", "--once", "--text"]);
    assert!(
        text.stdout.contains("bench set: 1/2 trials, 1 solved")
            && text.stdout.contains("writing-task-add.codex_slow.0"),
        "{}",
        text.stdout
    );

    fs::write(b.env.fake_dir.join("go"), "").unwrap();
    let status = child.wait().unwrap();
    assert!(status.success());
    let g = bench_group(&b);
    assert_eq!(g["status"], "done", "{g}");
    assert_eq!(
        g["progress"],
        serde_json::json!({"done": 2, "total": 2, "solved": 1})
    );
    assert_eq!(g["runs"], serde_json::json!([]), "nothing in flight: {g}");
    let text = b.run(&["watch", "--once", "--text"]).stdout;
    assert!(text.contains("(no trial in flight)"), "{text}");
}

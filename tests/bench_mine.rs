//! `baton bench mine|list|show` against a generated repository whose
//! history holds commits of known fate. Its "test runner" is a script of
//! the repository (`run-tests.sh`) that prints libtest lines: a test file
//! `tests/NAME.rs` holding `check KEY VALUE` passes when `src/lib.rs` has
//! the line `KEY = VALUE`; one holding `flaky` fails the first time it
//! runs anywhere and passes after (a counter outside the repository).

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::schema::Validator;
use crate::support::{Env, Run, git};

/// `v` matches `baton schema NAME`, unknown fields forbidden.
fn conforms(env: &Env, name: &str, v: &Value) {
    let mut s = Validator::new(env.run(&["schema", name]).json());
    if let Err(e) = s.validate(v) {
        panic!(
            "{name}: {e:?}
{v}"
        );
    }
}

const RUNNER: &str = r#"for t in tests/*.rs; do
  name=$(basename "$t" .rs)
  read -r what key want < "$t" || true
  if [ "$what" = flaky ]; then
    n=$(cat "$FLAKY_COUNTER" 2>/dev/null || echo 0)
    echo $((n + 1)) > "$FLAKY_COUNTER"
    if [ "$n" = 0 ]; then echo "test $name ... FAILED"; else echo "test $name ... ok"; fi
  elif grep -qx "$key = $want" src/lib.rs; then
    echo "test $name ... ok"
  else
    echo "test $name ... FAILED"
  fi
done
"#;

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn commit(dir: &Path, files: &[(&str, &str)], message: &str) -> String {
    for (rel, text) in files {
        write(dir, rel, text);
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", message]);
    head(dir)
}

fn out(dir: &Path, args: &[&str]) -> String {
    // No index refresh: the index must stay byte for byte as the user left it.
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn head(dir: &Path) -> String {
    out(dir, &["rev-parse", "HEAD"]).trim().to_string()
}

/// Everything of the user's checkout mining must leave as it was.
fn checkout_state(dir: &Path) -> Vec<String> {
    let mut s: Vec<String> = [
        &["ls-files", "--stage", "--debug"][..],
        &[
            "status",
            "--porcelain=v2",
            "--branch",
            "--untracked-files=all",
        ],
        &["rev-parse", "HEAD"],
        &["branch", "-a", "-v", "--no-abbrev"],
        &["stash", "list"],
        &["worktree", "list", "--porcelain"],
        &["for-each-ref"],
        &["diff"],
        &["diff", "--cached"],
    ]
    .iter()
    .map(|a| out(dir, a))
    .collect();
    s.push(fs::read_to_string(dir.join("src/lib.rs")).unwrap());
    s
}

struct History {
    fix: String,
    merge: String,
    reasons: Vec<(String, &'static str)>,
    candidates: usize,
    scanned: usize,
}

/// The repository: every kind of commit mining must tell apart.
fn history(env: &Env) -> History {
    env.git_init();
    let w = &env.work;
    let root = head(w);
    let setup = commit(
        w,
        &[
            ("run-tests.sh", RUNNER),
            ("src/lib.rs", "one = 1\ntwo = 3\n"),
        ],
        "Add the library and its test runner",
    );
    let only_test = commit(w, &[("tests/one.rs", "check one 1\n")], "Test one");
    let fix = commit(
        w,
        &[
            ("src/lib.rs", "one = 1\ntwo = 2\n"),
            ("tests/two.rs", "check two 2\n"),
        ],
        "Fix two\n\ntwo was 3.",
    );
    let refactor = commit(
        w,
        &[("src/lib.rs", "two = 2\none = 1\n")],
        "Sort the library",
    );
    let passing = commit(
        w,
        &[
            ("src/lib.rs", "two = 2\none = 1\nfour = 4\n"),
            ("tests/three.rs", "check one 1\n"),
        ],
        "Add four, test one again",
    );
    // A pull request, merged with a merge commit.
    git(w, &["checkout", "-qb", "six"]);
    commit(
        w,
        &[
            ("src/lib.rs", "two = 2\none = 1\nfour = 4\nsix = 6\n"),
            ("tests/six.rs", "check six 6\n"),
        ],
        "wip",
    );
    git(w, &["checkout", "-q", "-"]);
    git(
        w,
        &[
            "merge",
            "--no-ff",
            "-q",
            "-m",
            "Merge pull request #7 from ann/six\n\nSupport six\n\nSix was missing.",
            "six",
        ],
    );
    let merge = head(w);
    let breaks = commit(
        w,
        &[
            (
                "src/lib.rs",
                "two = 2\none = 11\nfour = 4\nsix = 6\nfive = 5\n",
            ),
            ("tests/five.rs", "check five 5\n"),
        ],
        "Add five (and break one)",
    );
    let flaky = commit(
        w,
        &[
            (
                "src/lib.rs",
                "two = 2\none = 11\nfour = 4\nsix = 6\nfive = 5\nseven = 7\n",
            ),
            ("tests/seven.rs", "flaky\n"),
        ],
        "Add seven",
    );
    History {
        fix,
        merge,
        reasons: vec![
            (flaky, "flaky"),
            (breaks, "breaks_passing"),
            (passing, "no_fail_to_pass"),
            (refactor, "no_tests"),
            (only_test, "no_source_change"),
            (setup, "no_tests"),
            (root, "root_commit"),
        ],
        candidates: 5,
        scanned: 9,
    }
}

fn mine(env: &Env, extra: &[&str]) -> Value {
    let mut args = vec![
        "bench",
        "mine",
        "--test-cmd",
        "sh run-tests.sh",
        "--runner",
        "cargo",
    ];
    args.extend(extra);
    // A user whose git colours everything and drops the a/ b/ prefixes:
    // the test patch must apply all the same.
    let gitconfig = env.tmp.path().join("gitconfig");
    fs::write(
        &gitconfig,
        "[color]\n\tui = always\n[diff]\n\tnoprefix = true\n",
    )
    .unwrap();
    let r = Run::from(
        env.baton()
            .args(&args)
            .env("GIT_CONFIG_GLOBAL", &gitconfig)
            .env("FLAKY_COUNTER", env.tmp.path().join("flaky-counter"))
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    r.json()
}

fn reasons(report: &Value) -> Vec<(String, String)> {
    report["rejected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["commit"].as_str().unwrap().to_string(),
                r["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn mining_keeps_exactly_the_valid_tasks_and_leaves_the_checkout_alone() {
    let env = Env::new();
    let h = history(&env);
    let w = &env.work;
    // A user mid-work: a stash, a staged change, an edit, an untracked file.
    write(w, "src/lib.rs", "stashed = 1\n");
    git(w, &["stash", "-q"]);
    write(w, "notes.md", "staged\n");
    git(w, &["add", "notes.md"]);
    write(w, "src/lib.rs", "edited = 1\n");
    write(w, "scratch.txt", "untracked\n");
    let before = checkout_state(w);

    let report = mine(&env, &["--jobs", "2"]);

    assert_eq!(
        checkout_state(w),
        before,
        "mining changed the user's checkout"
    );
    let ids =
        |shas: &[&String]| -> Vec<String> { shas.iter().map(|s| s[..12].to_string()).collect() };
    assert_eq!(report["tasks"], serde_json::json!(ids(&[&h.merge, &h.fix])));
    assert_eq!(report["scanned"], h.scanned);
    assert_eq!(report["candidates"], h.candidates);
    assert_eq!(report["set"], "default");
    let want: Vec<(String, String)> = h
        .reasons
        .iter()
        .map(|(c, r)| (c.clone(), r.to_string()))
        .collect();
    assert_eq!(reasons(&report), want);

    // The tasks, exactly.
    let dir = Path::new(report["dir"].as_str().unwrap());
    let fix: Value = serde_json::from_str(
        &fs::read_to_string(dir.join(format!("{}.json", &h.fix[..12]))).unwrap(),
    )
    .unwrap();
    assert_eq!(fix["fail_to_pass"], serde_json::json!(["two"]));
    assert_eq!(fix["pass_to_pass"], serde_json::json!(["one"]));
    assert_eq!(fix["task"], "Fix two\n\ntwo was 3.");
    assert_eq!(fix["commit"], h.fix.as_str());
    assert_eq!(
        fix["base"],
        out(w, &["rev-parse", &format!("{}^", h.fix)]).trim()
    );
    assert_eq!(fix["test_files"], serde_json::json!(["tests/two.rs"]));
    assert_eq!(fix["source_files"], serde_json::json!(["src/lib.rs"]));
    let patch = fix["test_patch"].as_str().unwrap();
    assert!(
        patch.contains("+check two 2") && !patch.contains("src/lib.rs"),
        "{patch}"
    );
    assert_eq!(fix["test_cmd"]["command"], "sh run-tests.sh");
    let merge: Value = serde_json::from_str(
        &fs::read_to_string(dir.join(format!("{}.json", &h.merge[..12]))).unwrap(),
    )
    .unwrap();
    assert_eq!(merge["task"], "Support six\n\nSix was missing.");
    assert_eq!(merge["fail_to_pass"], serde_json::json!(["six"]));
    assert_eq!(
        merge["pass_to_pass"],
        serde_json::json!(["one", "three", "two"])
    );
    // Nothing left behind in baton's state but the set.
    let checks = env.records("checks");
    assert_eq!(fs::read_dir(&checks).unwrap().count(), 0, "{checks:?}");
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(dir.join("set.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    conforms(&env, "bench-mine", &report);
    conforms(&env, "bench-task", &fix);
    let info: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("set.json")).unwrap()).unwrap();
    conforms(&env, "bench-set", &info);

    // list and show.
    let list = env.run(&["bench", "list"]).json();
    conforms(&env, "bench-list", &list);
    assert_eq!(list["sets"][0]["name"], "default");
    assert_eq!(list["sets"][0]["tasks"], 2);
    let shown = env.run(&["bench", "show", "default"]).json();
    conforms(&env, "bench-show", &shown);
    assert_eq!(shown["tasks"].as_array().unwrap().len(), 2);
    assert_eq!(shown["set"]["name"], "default");
    let one = env.run(&["bench", "show", "default", &h.fix[..12]]).json();
    assert_eq!(one, fix);
    let by_path = env.run(&["bench", "show", dir.to_str().unwrap()]).json();
    assert_eq!(by_path["tasks"], shown["tasks"]);
    let text = env.run(&["bench", "show", "default", "--text"]);
    assert!(text.stdout.contains("Support six"), "{}", text.stdout);
    let missing = env.run(&["bench", "show", "nope"]);
    assert_eq!(missing.code, 2, "{}", missing.stdout);
}

#[test]
fn without_validation_candidates_are_listed_and_nothing_is_written() {
    let env = Env::new();
    let h = history(&env);
    let report = mine(&env, &["--no-validate", "--set", "scan"]);
    assert_eq!(report["tasks"], serde_json::json!([]));
    assert_eq!(
        report["unvalidated"].as_array().unwrap().len(),
        h.candidates
    );
    let scan_only: Vec<&str> = ["no_tests", "no_source_change", "root_commit"].to_vec();
    for (c, r) in reasons(&report) {
        assert!(scan_only.contains(&r.as_str()), "{c}: {r}");
    }
    assert!(!Path::new(report["dir"].as_str().unwrap()).exists());
    // `--max` and `--since REV` bound the walk; `--paths` keeps the
    // commits touching them (with all their files).
    let two = mine(&env, &["--no-validate", "--max", "2"]);
    assert_eq!(two["scanned"], 2);
    let since = mine(&env, &["--no-validate", "--since", &h.fix]);
    assert_eq!(since["scanned"], 5, "{since}");
    let paths = mine(&env, &["--no-validate", "--paths", "tests/two.rs"]);
    assert_eq!(paths["scanned"], 1);
    assert_eq!(paths["unvalidated"], serde_json::json!([h.fix]));
    // The config's test patterns replace the conventions; `--tests` them.
    fs::write(
        env.tmp.path().join("user-config.toml"),
        "[bench]\ntest_patterns = [\"tests/two.rs\"]\n",
    )
    .unwrap();
    let configured = mine(&env, &["--no-validate"]);
    assert_eq!(configured["unvalidated"], serde_json::json!([h.fix]));
    let flagged = mine(&env, &["--no-validate", "--tests", "tests/*.rs"]);
    assert_eq!(flagged["candidates"], h.candidates);
    // `--dir`: the set where the user says; `--max 3`: the three newest.
    let dir = env.tmp.path().join("my-set");
    let to_dir = mine(
        &env,
        &[
            "--max",
            "3",
            "--dir",
            dir.to_str().unwrap(),
            "--tests",
            "tests/*.rs",
        ],
    );
    assert_eq!(to_dir["tasks"], serde_json::json!([&h.merge[..12]]));
    assert_eq!(to_dir["set"], "my-set");
    assert!(dir.join(format!("{}.json", &h.merge[..12])).is_file());
    let info: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("set.json")).unwrap()).unwrap();
    assert_eq!(info["options"]["tests"], serde_json::json!(["tests/*.rs"]));
    let text = env.run(&[
        "bench",
        "mine",
        "--no-validate",
        "--runner",
        "cargo",
        "--text",
    ]);
    assert!(
        text.stdout.contains("1 candidate(s) not validated") && text.stdout.contains("no_tests "),
        "{}",
        text.stdout
    );
}

#[test]
fn without_a_test_command_mining_says_how_to_give_one() {
    let env = Env::new();
    env.git_init();
    let r = env.run(&["bench", "mine"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let e = r.json();
    assert!(
        e["error"]["hint"].as_str().unwrap().contains("--test-cmd"),
        "{e}"
    );
    let r = env.run(&["bench", "mine", "--set", "../x", "--runner", "cargo"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
}

#[test]
fn a_peer_describes_a_task_unless_it_quotes_the_fix() {
    let env = Env::new();
    let h = history(&env);
    // A fake codex: for the pull request it quotes the fix (`six = 6`);
    // for the other task it writes an issue.
    env.fake(
        "codex",
        r#"input="$*$(cat)"
case "$input" in
*"Support six"*) text='Six is missing. Add six = 6 to the library.' ;;
*) text='Two is wrong\n\nAsking for two gives 3.' ;;
esac
printf '{"type":"thread.started","thread_id":"t"}\n{"type":"turn.started"}\n'
printf '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"%s"}}\n' "$text"
printf '{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}\n'"#,
    );
    let report = mine(&env, &["--describe", "codex", "--set", "described"]);
    assert_eq!(
        report["tasks"],
        serde_json::json!([&h.merge[..12], &h.fix[..12]])
    );
    let dir = Path::new(report["dir"].as_str().unwrap());
    let read = |sha: &str| -> Value {
        serde_json::from_str(&fs::read_to_string(dir.join(format!("{}.json", &sha[..12]))).unwrap())
            .unwrap()
    };
    let fix = read(&h.fix);
    assert_eq!(fix["task"], "Two is wrong\n\nAsking for two gives 3.");
    assert_eq!(fix["described_by"], "codex");
    let merge = read(&h.merge);
    assert_eq!(merge["task"], "Support six\n\nSix was missing.");
    assert!(merge.get("described_by").is_none(), "{merge}");
    let warnings = report["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = warnings[0].as_str().unwrap();
    assert!(
        w.contains(&h.merge[..12]) && w.contains("quoted the fix") && w.contains("six = 6"),
        "{w}"
    );
    conforms(&env, "bench-mine", &report);
}

#[test]
fn ctrl_c_stops_the_tests_and_leaves_no_checkout() {
    let env = Env::new();
    let h = history(&env);
    let mark = env.tmp.path().join("started");
    let child = env
        .baton()
        .args([
            "bench",
            "mine",
            "--max",
            "1",
            "--runner",
            "cargo",
            "--test-cmd",
            &format!("touch '{}'; sleep 30", mark.display()),
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(crate::support::wait_for(
        std::time::Duration::from_secs(20),
        || mark.exists()
    ));
    let started = std::time::Instant::now();
    interrupt(child.id());
    let r = Run::from(child.wait_with_output().unwrap());
    assert!(started.elapsed() < std::time::Duration::from_secs(15));
    assert_eq!(r.code, 130, "{}\n{}", r.stdout, r.stderr);
    let report = r.json();
    assert_eq!(
        reasons(&report),
        vec![(h.reasons[0].0.clone(), "interrupted".to_string())]
    );
    let checks = env.records("checks");
    assert_eq!(fs::read_dir(&checks).unwrap().count(), 0, "{checks:?}");
}

/// SIGINT to `pid`, by the `kill` program (tests use no `unsafe`).
fn interrupt(pid: u32) {
    let ok = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

/// The describing peer's calls are recorded per task and summed on a line
/// of their own, in `bench mine` and in the report of a run over the set,
/// never inside a setting's cost.
#[test]
fn what_the_describing_peer_spent_is_its_own_line_not_the_trials() {
    let env = Env::new();
    let h = history(&env);
    // 1,000,000 input and 100,000 output tokens a call: at gpt-5's $1.25
    // and $10 per million, $2.25 a call.
    env.fake(
        "codex",
        r#"cat > /dev/null
printf '{"type":"thread.started","thread_id":"t"}\n{"type":"turn.started"}\n'
printf '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"Counting is wrong\\n\\nA number comes out off by one."}}\n'
printf '{"type":"turn.completed","usage":{"input_tokens":1000000,"cached_input_tokens":0,"output_tokens":100000,"reasoning_output_tokens":0}}\n'"#,
    );
    let report = mine(&env, &["--describe", "codex:gpt-5", "--set", "spent"]);
    assert_eq!(
        report["tasks"],
        serde_json::json!([&h.merge[..12], &h.fix[..12]])
    );
    let sum = &report["describe_usage"];
    assert_eq!(
        sum["agents"],
        serde_json::json!(["codex:gpt-5"]),
        "{report}"
    );
    assert_eq!(
        (
            sum["calls"].as_u64(),
            sum["tokens"].as_u64(),
            sum["cost_usd"].as_f64()
        ),
        (Some(2), Some(2_200_000), Some(4.5))
    );
    assert_eq!(sum["unpriced_calls"], 0);
    conforms(&env, "bench-mine", &report);
    let dir = Path::new(report["dir"].as_str().unwrap()).to_path_buf();
    let task: Value = serde_json::from_str(
        &fs::read_to_string(dir.join(format!("{}.json", &h.fix[..12]))).unwrap(),
    )
    .unwrap();
    assert_eq!(task["describe_usage"]["agent"], "codex:gpt-5");
    assert_eq!(task["describe_usage"]["tokens"], 1_100_000);
    assert_eq!(task["describe_usage"]["cost_usd"], 2.25);

    // A run's record over that set, one trial at $0.50: the setting's cost
    // is the trial's alone; the describing is the report's own line.
    let record = env.tmp.path().join("record");
    fs::create_dir_all(record.join("trials")).unwrap();
    let spec = serde_json::json!({
        "format": 1, "id": "0k1m2n3p4q5r6", "set": dir, "settings": ["pi"],
        "repeat": 1, "created_at_ms": 1, "options": {}
    });
    fs::write(record.join("bench.json"), spec.to_string()).unwrap();
    let trial = serde_json::json!({
        "task": &h.fix[..12], "setting": "pi", "repeat": 0, "solved": true,
        "still_failing": [], "broken": [], "tampered_tests": [], "status": "success",
        "tokens": 10, "cost_usd": 0.5, "wall_ms": 1, "diff_lines": 1,
        "started_at_ms": 1, "ended_at_ms": 2
    });
    fs::write(
        record
            .join("trials")
            .join(format!("{}.pi.0.json", &h.fix[..12])),
        trial.to_string(),
    )
    .unwrap();
    let r = env.run(&["bench", "report", record.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    conforms(&env, "bench-report", &j);
    assert_eq!(j["settings"][0]["cost_usd"], 0.5, "{j}");
    assert_eq!(j["settings"][0]["cost_per_solved_usd"], 0.5);
    assert_eq!(
        (
            j["describe"]["calls"].as_u64(),
            j["describe"]["tokens"].as_u64(),
            j["describe"]["cost_usd"].as_f64()
        ),
        (Some(2), Some(2_200_000), Some(4.5))
    );
    let t = env.run(&["bench", "report", record.to_str().unwrap(), "--text"]);
    assert!(
        t.stdout.contains(
            "describing the tasks (--describe, not in the trials' cost): 2 call(s) by \
             codex:gpt-5, 2200000 tokens, $4.50"
        ),
        "{}",
        t.stdout
    );
}

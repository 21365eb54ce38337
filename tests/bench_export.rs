//! `baton bench export SET --format harbor DIR` on a set mined from a
//! generated repository: the layout, the contents, the verifier and the
//! oracle run as Harbor would run them (without a container: `BATON_APP`
//! and `BATON_VERIFIER_LOGS` point the scripts at a folder), and Harbor's
//! own task loader over the result when `BATON_HARBOR_PYTHON` names a
//! Python with the `harbor` package (`make harbor-test`; required in CI).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::schema::Validator;
use crate::support::{Env, Run, git};

/// A test runner printing libtest lines: `tests/NAME.rs` holding
/// `check KEY VALUE` passes when `src/lib.rs` has the line `KEY = VALUE`.
const RUNNER: &str = r#"for t in tests/*.rs; do
  name=$(basename "$t" .rs)
  read -r what key want < "$t" || true
  if grep -qx "$key = $want" src/lib.rs; then echo "test $name ... ok"; else echo "test $name ... FAILED"; fi
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
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A repository with one task (the fix of `two`, which also drops an
/// obsolete test), mined into the set `recent`; the task's id.
fn mined(env: &Env) -> String {
    env.git_init();
    let w = &env.work;
    commit(
        w,
        &[
            ("run-tests.sh", RUNNER),
            ("src/lib.rs", "one = 1\ntwo = 3\n"),
        ],
        "Add the library",
    );
    commit(
        w,
        &[
            ("tests/one.rs", "check one 1\n"),
            ("tests/old.rs", "check one 1\n"),
        ],
        "Test it",
    );
    fs::remove_file(w.join("tests/old.rs")).unwrap();
    let fix = commit(
        w,
        &[
            ("src/lib.rs", "one = 1\ntwo = 2\n"),
            ("tests/two.rs", "check two 2\n"),
        ],
        "Fix two\n\ntwo was 3.",
    );
    let r = env.run(&[
        "bench",
        "mine",
        "--test-cmd",
        "sh run-tests.sh",
        "--runner",
        "cargo",
        "--set",
        "recent",
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        r.json()["tasks"],
        serde_json::json!([&fix[..12]]),
        "{}",
        r.stdout
    );
    fix[..12].to_string()
}

fn export(env: &Env, extra: &[&str]) -> Run {
    let mut a = vec!["bench", "export", "recent", "--format", "harbor", "out"];
    a.extend(extra);
    env.run(&a)
}

fn sh(script: &Path, app: &Path, logs: &Path) -> String {
    let o = Command::new("sh")
        .arg(script)
        .env("BATON_APP", app)
        .env("BATON_VERIFIER_LOGS", logs)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}: {o:?}", script.display());
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn reward(logs: &Path) -> String {
    fs::read_to_string(logs.join("reward.txt"))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn each_task_becomes_a_harbor_task_whose_verifier_and_oracle_work() {
    let env = Env::new();
    let id = mined(&env);
    let r = export(&env, &[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = r.json();
    let mut s = Validator::new(env.run(&["schema", "bench-export"]).json());
    s.validate(&v).unwrap_or_else(|e| panic!("{e:?}\n{v}"));
    assert_eq!(v["format"], "harbor");
    assert_eq!(v["harbor_schema"], "1.4");
    assert_eq!(v["tasks"], serde_json::json!([id]));
    let out = env.work.join("out");
    assert_eq!(v["dir"], out.display().to_string());
    let t = out.join(&id);

    // Harbor's layout (harbor/models/task/paths.py).
    for f in [
        "task.toml",
        "instruction.md",
        "environment/Dockerfile",
        "environment/repo.tar",
        "tests/test.sh",
        "tests/expected.txt",
        "tests/passed.awk",
        "tests/hidden/tests/two.rs",
        "solution/solve.sh",
        "solution/fix.patch",
    ] {
        assert!(t.join(f).is_file(), "{f}");
    }
    let mode = |f: &str| fs::metadata(t.join(f)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("tests/test.sh") & 0o700, 0o700);
    assert_eq!(mode("solution/solve.sh") & 0o700, 0o700);
    assert_eq!(mode("task.toml") & 0o111, 0);
    let toml = fs::read_to_string(t.join("task.toml")).unwrap();
    assert!(toml.contains("schema_version = \"1.4\""), "{toml}");
    assert!(toml.contains(&format!("baton_task = \"{id}\"")), "{toml}");
    assert_eq!(
        fs::read_to_string(t.join("instruction.md")).unwrap(),
        "Fix two\n\ntwo was 3.\n"
    );
    let docker = fs::read_to_string(t.join("environment/Dockerfile")).unwrap();
    assert!(
        docker.contains("FROM rust:") && docker.contains("repo.tar"),
        "{docker}"
    );
    assert_eq!(
        fs::read_to_string(t.join("tests/expected.txt")).unwrap(),
        "two\none\n"
    );
    let fix = fs::read_to_string(t.join("solution/fix.patch")).unwrap();
    assert!(fix.contains("+two = 2") && !fix.contains("tests/"), "{fix}");

    // The environment: the base tree, without the hidden test.
    let app = env.tmp.path().join("app");
    fs::create_dir(&app).unwrap();
    let ok = Command::new("tar")
        .arg("-xf")
        .arg(t.join("environment/repo.tar"))
        .arg("-C")
        .arg(&app)
        .status()
        .unwrap();
    assert!(ok.success());
    assert_eq!(
        fs::read_to_string(app.join("src/lib.rs")).unwrap(),
        "one = 1\ntwo = 3\n"
    );
    assert!(!app.join("tests/two.rs").exists());
    assert!(app.join("tests/old.rs").exists());

    // An agent that only edits the test and writes itself a reward earns 0.
    let logs = env.tmp.path().join("logs");
    write(&app, "tests/two.rs", "check two 3\n");
    write(&logs, "reward.txt", "1\n");
    let said = sh(&t.join("tests/test.sh"), &app, &logs);
    assert_eq!(reward(&logs), "0", "{said}");
    assert!(
        said.contains("not passed:") && said.contains("two"),
        "{said}"
    );
    assert_eq!(
        fs::read_to_string(app.join("tests/two.rs")).unwrap(),
        "check two 2\n"
    );
    assert!(!app.join("tests/old.rs").exists(), "removed by the commit");

    // Harbor's oracle: the reference fix, then the verifier says 1.
    sh(&t.join("solution/solve.sh"), &app, &logs);
    assert_eq!(
        fs::read_to_string(app.join("src/lib.rs")).unwrap(),
        "one = 1\ntwo = 2\n"
    );
    let said = sh(&t.join("tests/test.sh"), &app, &logs);
    assert_eq!(reward(&logs), "1", "{said}");

    // A fix that breaks a pass_to_pass test earns 0.
    write(&app, "src/lib.rs", "one = 5\ntwo = 2\n");
    sh(&t.join("tests/test.sh"), &app, &logs);
    assert_eq!(reward(&logs), "0");
    assert_eq!(
        fs::read_to_string(logs.join("not-passed.txt")).unwrap(),
        "one\n"
    );

    let text = export(&env, &["--force", "--text"]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(text.stdout.contains(&format!("  {id}/")), "{}", text.stdout);
}

#[test]
fn a_folder_that_is_not_empty_is_refused_unless_forced() {
    let env = Env::new();
    let id = mined(&env);
    let out = env.work.join("out");
    write(&out, "keep.txt", "mine\n");
    let r = export(&env, &[]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("not empty") || r.stderr.contains("not empty"));
    assert!(!out.join(&id).exists());
    write(&out, &format!("{id}/stale"), "old\n");
    let r = export(&env, &["--force"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        !out.join(&id).join("stale").exists(),
        "the task's folder is replaced"
    );
    assert!(out.join(&id).join("task.toml").is_file());
    assert_eq!(fs::read_to_string(out.join("keep.txt")).unwrap(), "mine\n");

    let r = env.run(&["bench", "export", "nope", "--format", "harbor", "x"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = env.run(&["bench", "export", "recent", "--format", "swe", "x"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// The awk parsers the verifier uses agree with `outcomes::parse`.
#[test]
fn the_verifiers_parsers_read_what_bench_run_reads() {
    use baton::bench::harbor::parser;
    use baton::bench::outcomes::{Outcome, parse};
    use baton::bench::task::Runner;
    let cases = [
        (
            Runner::Cargo,
            "test a::b ... ok\ntest a::c ... FAILED\r\ntest p - should panic ... ok\n\
             test i ... ignored, slow\ntest d ... ok\ntest d ... FAILED\ntest x ... y ... ok\nnoise\n",
        ),
        (
            Runner::Pytest,
            "PASSED t.py::a\nFAILED t.py::b - AssertionError: x - y\nERROR t.py::c\n\
             XPASS t.py::d\nXFAIL t.py::e\nPASSED not-a-test\nPASSED t2.py\n",
        ),
        (
            Runner::Go,
            "=== RUN TestA\n--- PASS: TestA (0.00s)\n    --- PASS: TestA/sub_1 (0.00s)\n\
             --- FAIL: TestB (0.01s)\n--- SKIP: TestC (0.00s)\nok  \tpkg\t0.1s\n",
        ),
    ];
    let jest = r#"npm warn
{"testResults":[{"assertionResults":[
 {"fullName":"sum adds","status":"passed"},{"fullName":"sum fails","status":"failed"},
 {"fullName":" later ","status":"pending"},{"fullName":"twice","status":"passed"},
 {"fullName":"twice","status":"failed"},{"fullName":"brace } in name","status":"passed"}]}]}
trailing {"not": "json"} }"#;
    let node = Command::new("node").arg("--version").output().is_ok();
    if !node {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but node is missing"
        );
        eprintln!("skipped: the jest parser's check needs node");
    }
    let cases = cases
        .into_iter()
        .chain(node.then_some((Runner::Jest, jest)));
    let d = tempfile::tempdir().unwrap();
    for (runner, output) in cases {
        let (name, script) = parser(runner);
        let p = d.path().join(name);
        fs::write(&p, script).unwrap();
        let log = d.path().join("test.log");
        fs::write(&log, output).unwrap();
        let o = match runner {
            Runner::Jest => Command::new("node").arg(&p).arg(&log).output(),
            _ => Command::new("awk").arg("-f").arg(&p).arg(&log).output(),
        }
        .unwrap();
        assert!(o.status.success(), "{o:?}");
        let mut got: Vec<String> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        got.sort();
        let want: Vec<String> = parse(runner, output)
            .into_iter()
            .filter(|(_, o)| *o == Outcome::Passed)
            .map(|(n, _)| n)
            .collect();
        assert!(!want.is_empty());
        assert_eq!(got, want, "{runner:?}");
    }
}

/// The Python named by `BATON_HARBOR_PYTHON`, else `None` with a note (and
/// a failure in CI, where the loader test must run).
fn harbor_python() -> Option<PathBuf> {
    match std::env::var_os("BATON_HARBOR_PYTHON") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but BATON_HARBOR_PYTHON is not: run `make harbor-test`"
            );
            eprintln!(
                "skipped: Harbor's loader test needs BATON_HARBOR_PYTHON=<a python with `harbor` installed> (make harbor-test)"
            );
            None
        }
    }
}

#[test]
fn harbors_own_loader_reads_every_exported_task() {
    let Some(python) = harbor_python() else {
        return;
    };
    let env = Env::new();
    let id = mined(&env);
    let r = export(&env, &[]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/harbor_load.py");
    let o = Command::new(&python)
        .arg(&script)
        .arg(env.work.join("out"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let tasks: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(tasks.len(), 1, "{stdout}");
    let t = &tasks[0];
    assert_eq!(t["name"], id.as_str());
    assert_eq!(t["instruction"], "Fix two\n\ntwo was 3.\n");
    assert_eq!(t["schema_version"], "1.4");
    assert_eq!(t["metadata"]["baton_task"], id.as_str());
    assert_eq!(t["workdir"], "/app");
    assert_eq!(t["dockerfile"], true);
    assert_eq!(t["test"], "tests/test.sh");
    assert_eq!(t["solve"], "solution/solve.sh");
    // Harbor's linter asks for what baton cannot know (the image's digest)
    // and for a verifier in a container of its own, which would not see the
    // agent's work: nothing else.
    let rules: Vec<&str> = t["lint"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().split(':').next().unwrap())
        .collect();
    assert_eq!(rules, ["unpinned-image", "shared-verifier"], "{stdout}");
}

//! `baton bench report`: a bench run's record written by hand (bench.json
//! and trials/*.json in the formats `bench run` writes, a task set beside
//! it), read back by the real binary as JSON, text and an HTML page, and
//! its errors (an unknown id, a damaged trial file, a folder that is no
//! record).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::Env;
use crate::support::schema::Validator;

const ID: &str = "0k1m2n3p4q5r6";
const UNKNOWN: &str = "0k1m2n3p4q5r7";

/// The project's `benches/` folder, as the not-found error names it (made
/// private, as baton makes its state).
fn benches(env: &Env) -> PathBuf {
    let r = env.run(&["bench", "report", UNKNOWN]);
    assert_eq!(r.code, 4, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["error"]["kind"], "job_not_found");
    let msg = j["error"]["message"].as_str().unwrap().to_string();
    assert!(
        msg.starts_with(&format!("no bench run `{UNKNOWN}` in ")),
        "{msg}"
    );
    let dir = PathBuf::from(msg.rsplit(" in ").next().unwrap());
    assert!(dir.ends_with("benches"), "{msg}");
    fs::create_dir_all(&dir).unwrap();
    let mut d = dir.as_path();
    while d != env.state.as_path() {
        fs::set_permissions(d, fs::Permissions::from_mode(0o700)).unwrap();
        d = d.parent().unwrap();
    }
    dir
}

fn trial(task: &str, setting: &str, solved: bool, cost: Option<f64>) -> Value {
    let mut t = json!({
        "task": task, "setting": setting, "repeat": 0, "solved": solved,
        "still_failing": if solved { json!([]) } else { json!(["tests::it"]) },
        "broken": [], "tampered_tests": [], "status": "ok",
        "tokens": 1000, "wall_ms": 60000, "diff_lines": 12,
        "started_at_ms": 1, "ended_at_ms": 60001
    });
    if let Some(c) = cost {
        t["cost_usd"] = json!(c);
    }
    t
}

fn task_file(id: &str, text: &str) -> Value {
    json!({
        "format": 1, "id": id, "base": "a".repeat(40), "commit": "b".repeat(40),
        "task": text, "source_files": ["src/lib.rs"], "test_files": ["tests/it.rs"],
        "test_patch": "diff --git a/tests/it.rs b/tests/it.rs\n",
        "test_cmd": {"runner": "cargo", "command": "cargo test"}, "fail_to_pass": ["it"], "pass_to_pass": [], "mined_at_ms": 1, "mined_by": "baton 0.3"
    })
}

/// A record in `dir`: the example (claude:opus 15/20 at $0.675 a
/// trial, pi:glm-5.2 14/20 at $0.07; both 13, only opus 2, only pi 1,
/// neither 4), with a set of 21 tasks (one never run).
fn write_record(env: &Env, dir: &Path) {
    let set = env.tmp.path().join("set");
    fs::create_dir_all(&set).unwrap();
    fs::create_dir_all(dir.join("trials")).unwrap();
    fs::write(
        dir.join("bench.json"),
        json!({
            "format": 1, "id": ID, "set": set, "settings": ["claude:opus", "pi:glm-5.2"],
            "repeat": 1, "created_at_ms": 1, "options": {}
        })
        .to_string(),
    )
    .unwrap();
    let groups = [
        (true, true, 13),
        (true, false, 2),
        (false, true, 1),
        (false, false, 4),
    ];
    let mut n = 0;
    for (a, b, count) in groups {
        for _ in 0..count {
            let task = format!("task-{n:02}");
            for (setting, solved, cost, file) in [
                ("claude:opus", a, 0.675, "claude_opus"),
                ("pi:glm-5.2", b, 0.07, "pi_glm-5_2"),
            ] {
                fs::write(
                    dir.join("trials").join(format!("{task}.{file}.0.json")),
                    trial(&task, setting, solved, Some(cost)).to_string(),
                )
                .unwrap();
            }
            fs::write(
                set.join(format!("{task}.json")),
                task_file(&task, &format!("Fix case {n}\n\nbody")).to_string(),
            )
            .unwrap();
            n += 1;
        }
    }
    fs::write(
        set.join("task-99.json"),
        task_file("task-99", "Never run").to_string(),
    )
    .unwrap();
}

fn setup() -> (Env, PathBuf) {
    let env = Env::new();
    env.git_init();
    let record = benches(&env).join(ID);
    write_record(&env, &record);
    (env, record)
}

fn round4(v: &Value) -> f64 {
    (v.as_f64().unwrap() * 1e4).round() / 1e4
}

#[test]
fn the_report_of_a_record_has_exact_numbers_and_fits_its_schema() {
    let (env, _) = setup();
    let r = env.run(&["bench", "report", ID]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["bench_id"], ID);
    assert_eq!(
        (j["trials"].as_u64(), j["tasks_run"].as_u64()),
        (Some(40), Some(20))
    );
    assert_eq!(j["set_tasks"], 21);
    assert_eq!(j["set_note"], Value::Null);
    let opus = &j["settings"][0];
    assert_eq!(opus["setting"], "claude:opus");
    assert_eq!(
        (opus["trials"].as_u64(), opus["solved"].as_u64()),
        (Some(20), Some(15))
    );
    assert_eq!(opus["solve_rate"], 0.75);
    assert_eq!(
        (
            round4(&opus["interval"]["low"]),
            round4(&opus["interval"]["high"])
        ),
        (0.5313, 0.8881)
    );
    assert_eq!(round4(&opus["cost_per_solved_usd"]), 0.9);
    assert_eq!(round4(&opus["cost_usd"]), 13.5);
    assert_eq!(opus["median_wall_ms"], 60000.0);
    assert_eq!(
        (opus["tokens"].as_u64(), opus["median_tokens"].as_f64()),
        (Some(20000), Some(1000.0))
    );
    assert_eq!(opus["tests_failed"], 5);
    assert_eq!(opus["failure_kinds"], json!({}));
    let pi = &j["settings"][1];
    assert_eq!(pi["solve_rate"], 0.7);
    assert_eq!(
        (
            round4(&pi["interval"]["low"]),
            round4(&pi["interval"]["high"])
        ),
        (0.4810, 0.8545)
    );
    assert_eq!(round4(&pi["cost_per_solved_usd"]), 0.1);
    let p = &j["pairs"][0];
    assert_eq!(
        [
            &p["a"],
            &p["b"],
            &p["paired"],
            &p["both_solved"],
            &p["only_a"],
            &p["only_b"],
            &p["neither"]
        ],
        [
            &json!("claude:opus"),
            &json!("pi:glm-5.2"),
            &json!(20),
            &json!(13),
            &json!(2),
            &json!(1),
            &json!(4)
        ]
    );
    assert_eq!(p["p_value"], 1.0);
    assert_eq!(p["better"], Value::Null);
    assert_eq!(p["verdict"], "no difference detected with 20 paired tasks");
    let rec = &j["recommendation"];
    assert_eq!(
        rec["text"],
        "for this repository: `pi:glm-5.2` solves as many as `claude:opus` (14/20 vs 15/20, p = 1.0) \
         at 1/9 the cost"
    );
    assert_eq!(
        (&rec["setting"], &rec["best"]),
        (&json!("pi:glm-5.2"), &json!("claude:opus"))
    );
    let tasks = j["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 21);
    assert_eq!(tasks[0]["title"], "Fix case 0");
    assert_eq!(tasks[20]["id"], "task-99");
    assert_eq!(tasks[20]["results"][0]["trials"], 0);
    assert!(j.get("html").is_none());

    let schema = env.run(&["schema", "bench-report"]).json();
    assert_eq!(
        schema["$id"],
        "https://baton.dev/schema/bench-report-v1.json"
    );
    Validator::new(schema)
        .validate(&j)
        .unwrap_or_else(|e| panic!("{e:?}"));
}

#[test]
fn a_record_folder_reads_as_its_id_does_and_without_its_set() {
    let (env, record) = setup();
    let by_id = env.run(&["bench", "report", ID]).json();
    let by_dir = env
        .run(&["bench", "report", record.to_str().unwrap()])
        .json();
    assert_eq!(by_id, by_dir);
    // From elsewhere: `--cwd` names the repository whose runs an id is of.
    let out = env
        .baton()
        .current_dir(env.tmp.path())
        .args(["bench", "report", ID, "--cwd", env.work.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let elsewhere: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(elsewhere, by_id);
    // Copied elsewhere, its set gone: the numbers stay, the titles go.
    let copy = env.tmp.path().join("copied");
    fs::create_dir_all(copy.join("trials")).unwrap();
    fs::copy(record.join("bench.json"), copy.join("bench.json")).unwrap();
    for e in fs::read_dir(record.join("trials")).unwrap() {
        let e = e.unwrap();
        fs::copy(e.path(), copy.join("trials").join(e.file_name())).unwrap();
    }
    fs::remove_dir_all(env.tmp.path().join("set")).unwrap();
    let j = env.run(&["bench", "report", copy.to_str().unwrap()]).json();
    assert_eq!(j["settings"], by_id["settings"]);
    assert_eq!(j["pairs"], by_id["pairs"]);
    assert_eq!(j["recommendation"], by_id["recommendation"]);
    assert_eq!(j["set_tasks"], Value::Null);
    assert!(
        j["set_note"]
            .as_str()
            .unwrap()
            .ends_with("is not there any more"),
        "{j}"
    );
    assert_eq!(j["tasks"].as_array().unwrap().len(), 20);
    assert_eq!(j["tasks"][0]["title"], Value::Null);
}

#[test]
fn text_for_people_and_a_page_that_opens_offline() {
    let (env, _) = setup();
    let r = env.run(&["bench", "report", ID, "--text"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let t = &r.stdout;
    assert!(t.starts_with(&format!("bench {ID} · set ")), "{t}");
    assert!(
        t.contains("(21 tasks, 20 run) · repeat 1 · 40 trials\n"),
        "{t}"
    );
    assert!(
        t.contains("\nclaude:opus  15/20   75 %  53–89 %        $0.90     $13.50  1m 00s "),
        "{t}"
    );
    assert!(
        t.contains("\npi:glm-5.2   14/20   70 %  48–85 %        $0.10     $1.40   1m 00s "),
        "{t}"
    );
    assert!(t.contains("  claude:opus  pi:glm-5.2  13    2       1       4        1.0  no difference detected with 20 paired tasks\n"), "{t}");
    assert!(t.ends_with(
        "\nfor this repository: `pi:glm-5.2` solves as many as `claude:opus` (14/20 vs 15/20, p = 1.0) at 1/9 the cost\n"
    ), "{t}");

    let page = env.tmp.path().join("report.html");
    let r = env.run(&["bench", "report", ID, "--html", page.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["html"], page.to_str().unwrap());
    let mode = fs::metadata(&page).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let h = fs::read_to_string(&page).unwrap();
    assert!(h.starts_with("<!doctype html>") && h.ends_with("</html>\n"));
    assert_eq!(h.matches("<svg ").count(), 2);
    for bad in ["http:", "https:", "src=", "<link", "<script"] {
        assert!(!h.contains(bad), "{bad}");
    }
    assert!(h.contains("<td>Fix case 0</td>"));
}

#[test]
fn a_setting_with_markup_is_escaped_in_the_page() {
    let (env, record) = setup();
    let evil = "<script>alert(1)</script>";
    fs::write(
        record.join("trials").join("task-00.x.0.json"),
        trial("task-00", evil, true, None).to_string(),
    )
    .unwrap();
    let page = env.tmp.path().join("p.html");
    let r = env.run(&["bench", "report", ID, "--html", page.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let h = fs::read_to_string(&page).unwrap();
    assert!(!h.contains("<script"), "{h}");
    assert!(h.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    // And in the text, the setting is one cell of its row.
    let t = env.run(&["bench", "report", ID, "--text"]).stdout;
    assert!(t.contains("\n<script>alert(1)</script>  1/1 "), "{t}");
}

#[test]
fn errors_name_what_is_wrong() {
    let (env, record) = setup();
    // Not of an id's form.
    let r = env.run(&["bench", "report", "../etc"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.json()["error"]["kind"], "usage");
    let r = env.run(&["bench", "report", "nope"]);
    assert_eq!(
        (r.code, r.json()["error"]["kind"].as_str()),
        (2, Some("invalid_job_id"))
    );
    // A damaged trial file: named, and no report.
    let bad = record.join("trials").join("task-03.claude_opus.0.json");
    fs::write(&bad, "{\"task\": ").unwrap();
    let r = env.run(&["bench", "report", ID]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["error"]["kind"], "usage");
    let msg = j["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("task-03.claude_opus.0.json") && msg.contains("not a trial record"),
        "{msg}"
    );
    // A damaged spec.
    fs::remove_file(&bad).unwrap();
    fs::write(record.join("bench.json"), "[]").unwrap();
    let r = env.run(&["bench", "report", ID]);
    assert_eq!(r.code, 2);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bench.json")
    );
    // A folder that is no record.
    let r = env.run(&["bench", "report", env.tmp.path().to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("has no bench.json")
    );
}

/// `baton serve`'s bench panel reads `GET /api/benches`: every bench run
/// of the project, each what `baton bench report ID` prints, a damaged
/// record listed with why; behind the session like every route.
#[test]
fn serve_lists_each_bench_run_as_its_report() {
    let (env, record) = setup();
    // A second record, damaged: listed with its error, the first still read.
    let bad = record.parent().unwrap().join(UNKNOWN);
    fs::create_dir_all(&bad).unwrap();
    fs::write(bad.join("bench.json"), "{").unwrap();
    let cli = env.run(&["bench", "report", ID]).json();
    let srv = crate::serve::Server::start(&env);
    let r = srv.req("GET", "/api/benches", &[], None);
    assert_eq!(r.code, 401, "{}", r.body);
    let session = srv.login();
    let r = srv.get("/api/benches", &session);
    assert_eq!(r.code, 200, "{}", r.body);
    let j = r.json();
    assert_eq!(j["benches"], json!([cli]));
    assert_eq!(j["unreadable"][0]["id"], UNKNOWN);
    assert!(
        j["unreadable"][0]["error"]
            .as_str()
            .unwrap()
            .contains("not a bench run's spec"),
        "{j}"
    );
}

//! `baton usage`: the totals it reports are the sums of what the runs'
//! result files say, across projects, grouped, and limited in time.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::support::{Env, wait_for};

/// Every `result.json` directly in a run's or a job's folder, in every project.
fn result_files(state: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    for repo in fs::read_dir(state.join("repos")).unwrap().flatten() {
        for sub in ["runs", "jobs"] {
            let Ok(rd) = fs::read_dir(repo.path().join(sub)) else {
                continue;
            };
            for d in rd.flatten() {
                let f = d.path().join("result.json");
                if let Ok(b) = fs::read(&f) {
                    out.push(serde_json::from_slice(&b).unwrap());
                }
            }
        }
    }
    out
}

fn other_project(env: &Env) -> PathBuf {
    let p = env.tmp.path().join("other");
    fs::create_dir_all(&p).unwrap();
    p
}

#[test]
fn totals_equal_the_sum_of_the_result_files() {
    let env = Env::new();
    env.replay("pi", "pi/pi-json-basic.jsonl", 0);
    env.replay("claude", "claude/claude-stream.jsonl", 0);
    // One success with an estimated cost, one failure, in another project.
    let other = other_project(&env);
    env.replay("codex", "codex/codex-exec-usage.jsonl", 0);
    let o = other.to_str().unwrap();
    assert_eq!(env.run(&["--cwd", o, "--model", "gpt-5.4", "x"]).code, 0);
    env.replay("codex", "codex/codex-exec-error.jsonl", 1);
    assert_eq!(
        env.run(&["--cwd", o, "x"]).json()["error"]["kind"],
        "agent_error"
    );
    assert_eq!(env.run(&["--agent", "pi", "x"]).code, 0);
    assert_eq!(env.run(&["--agent", "claude", "x"]).code, 0);
    // A background job counts like a run.
    env.replay("codex", "codex/codex-exec-usage.jsonl", 0);
    let id = env.run(&["run", "--async", "x"]).json()["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = env.run(&["wait", &id, "--timeout", "60s"]);
    assert_eq!(r.json()["status"], "success", "{}", r.stdout);

    let files = result_files(&env.state);
    assert_eq!(files.len(), 5);
    let sum = |k: &str| -> u64 {
        files
            .iter()
            .map(|r| r["usage"][k].as_u64().unwrap_or(0))
            .sum()
    };
    let cost: f64 = files
        .iter()
        .filter_map(|r| r["usage"]["cost_usd"].as_f64())
        .sum();
    let ok = files.iter().filter(|r| r["status"] == "success").count() as u64;

    let u = env.run(&["usage"]).json();
    let t = &u["total"];
    assert_eq!(t["runs"], files.len() as u64, "{u}");
    assert_eq!(t["calls"], files.len() as u64, "one call per run here");
    assert_eq!(t["ok"], ok);
    assert_eq!(t["failed"]["agent_error"], 1, "{u}");
    assert_eq!(t["fell_back"], 0);
    assert_eq!(t["input_tokens"], sum("input_tokens"));
    assert_eq!(t["output_tokens"], sum("output_tokens"));
    assert_eq!(t["cached_input_tokens"], sum("cached_input_tokens"));
    assert!(
        (t["cost_usd"].as_f64().unwrap() - cost).abs() < 1e-12,
        "{u}"
    );
    assert_eq!(t["cost_estimated"], true, "gpt-5.4's cost was estimated");
    assert_eq!(u["repos"].as_array().unwrap().len(), 2, "{u}");

    // Per agent, the groups add up to the total.
    let by = env.run(&["usage", "--by", "agent"]).json();
    let groups = by["groups"].as_array().unwrap();
    let keys: Vec<&str> = groups.iter().map(|g| g["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["claude", "codex", "pi"]);
    for k in ["runs", "calls", "input_tokens", "output_tokens"] {
        let s: u64 = groups.iter().map(|g| g[k].as_u64().unwrap()).sum();
        assert_eq!(s, by["total"][k].as_u64().unwrap(), "{k}");
    }
    let codex = &groups[1];
    assert_eq!(codex["runs"], 3);
    assert_eq!(codex["failed"]["agent_error"], 1);

    // One project only: the other one's runs are not counted.
    let mine = env.run(&["usage", "--repo", "."]).json();
    assert_eq!(mine["total"]["runs"], 3, "{mine}");
    assert_eq!(mine["repos"].as_array().unwrap().len(), 1);
    let theirs = env.run(&["usage", "--repo", o, "--by", "repo"]).json();
    assert_eq!(theirs["total"]["runs"], 2, "{theirs}");
    assert_eq!(
        theirs["groups"][0]["key"],
        fs::canonicalize(&other).unwrap().display().to_string()
    );

    // --text is a table with a total row.
    let text = env.run(&["usage", "--by", "agent", "--text"]).stdout;
    assert!(
        text.starts_with("5 run(s), 5 call(s) in 2 project(s)"),
        "{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("total ")), "{text}");
    assert!(text.contains("failed:  agent_error 1"), "{text}");
}

#[test]
fn since_leaves_out_older_calls_and_by_day_groups_them() {
    let env = Env::new();
    env.replay("pi", "pi/pi-json-basic.jsonl", 0);
    assert_eq!(env.run(&["--agent", "pi", "x"]).code, 0);
    // A call recorded ten days ago, written as baton writes its ledger.
    let ledger = env.records("runs").parent().unwrap().join("usage.jsonl");
    assert!(wait_for(Duration::from_secs(5), || ledger.exists()));
    let old_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        - 10 * 86_400_000;
    let mut text = fs::read_to_string(&ledger).unwrap();
    text.push_str(&format!(
        "{{\"at\":{old_ms},\"run\":\"old\",\"agent\":\"codex\",\"model\":null,\"status\":\"failed\",\
         \"kind\":\"rate_limited\",\"input\":1000,\"output\":0,\"cached\":0,\"cost\":null,\"ms\":1}}\n"
    ));
    fs::write(&ledger, text).unwrap();
    let all = env.run(&["usage"]).json();
    assert_eq!(all["total"]["runs"], 2);
    assert_eq!(all["total"]["failed"]["rate_limited"], 1);
    assert_eq!(all["total"]["unpriced_calls"], 2, "{all}");
    let week = env.run(&["usage", "--since", "7d"]).json();
    assert_eq!(week["total"]["runs"], 1, "{week}");
    assert_eq!(week["total"]["input_tokens"], 120);
    assert!(week["since_ms"].as_u64().unwrap() > old_ms);
    let days = env.run(&["usage", "--by", "day"]).json();
    assert_eq!(days["groups"].as_array().unwrap().len(), 2, "{days}");
    // Calls without a known price cost `-` for people, not `$0.0000` (as
    // the fan-out's table shows them).
    let text = env.run(&["usage", "--by", "agent", "--text"]).stdout;
    let codex = text.lines().find(|l| l.starts_with("codex ")).unwrap();
    assert!(codex.ends_with(" -"), "{text}");
    assert!(!text.contains("$0.0000"), "{text}");
    // Bad requests are usage errors.
    assert_eq!(env.run(&["usage", "--by", "week"]).code, 2);
    assert_eq!(env.run(&["usage", "--since", "soon"]).code, 2);
}

//! Every recorded fault (tests/fixtures/failures: the real CLIs against the
//! e2e mock's provider faults) replayed by a fake CLI on PATH, through the
//! built baton: `error.kind`, `error.retry_after_s`, baton's exit code, the
//! CLI's exit code, and — where baton stops a CLI that retries what no
//! retry can mend — that the run ended as soon as the failure showed, with
//! a warning saying so.
//!
//! A fake replays the recording's stdout and stderr lines in the order they
//! came (each gap cut to a few milliseconds), then ends as the CLI ended (its
//! exit code, or the SIGKILL of the recorder's cap). Where baton should stop
//! the CLI, the fake waits a minute after that line, as the real CLI went on
//! retrying.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::Env;
use crate::support::council::Stage;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/failures")
}

fn expected() -> Value {
    serde_json::from_slice(&fs::read(root().join("expected.json")).unwrap()).unwrap()
}

/// One recording of a cell.
struct Recording {
    agent: String,
    base: String,
    mode: &'static str,
    meta: Value,
    want: Value,
}

impl Recording {
    fn path(&self, ext: &str) -> PathBuf {
        root()
            .join(&self.agent)
            .join(format!("{}.{ext}", self.base))
    }

    /// The line at which baton stops the CLI (`"stdout:3"`), if it does.
    fn stops_at(&self) -> Option<(bool, usize)> {
        let at = self.want["stops_early"][self.mode].as_str()?;
        let (stream, n) = at.split_once(':').unwrap();
        Some((stream == "stdout", n.parse().unwrap()))
    }

    fn stops_early(&self) -> bool {
        self.stops_at().is_some()
    }

    fn times(&self, k: &str) -> Vec<u64> {
        self.meta[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_u64().unwrap())
            .collect()
    }

    /// A POSIX sh body that replays the recording: runs of lines with
    /// `sed`, the gaps between them with `sleep` (a few milliseconds at
    /// most). Where baton should stop the CLI, the fake then waits a
    /// minute before it goes on, as the real CLI waited out its retries.
    fn script(&self) -> String {
        let stop = self.stops_at();
        let mut lines: Vec<(u64, bool, usize)> = Vec::new();
        for (stdout, key) in [(true, "stdout_ms"), (false, "stderr_ms")] {
            for (i, t) in self.times(key).into_iter().enumerate() {
                lines.push((t, stdout, i + 1));
            }
        }
        lines.sort_by_key(|l| l.0);
        let (out, err) = (self.path("stdout"), self.path("stderr"));
        let mut s = String::from("cat > /dev/null\n");
        let mut i = 0;
        let mut last = lines.first().map_or(0, |l| l.0);
        while i < lines.len() {
            let (t, stdout, first) = lines[i];
            let stops_here = |l: &(u64, bool, usize)| stop == Some((l.1, l.2));
            let mut j = i + 1;
            while j < lines.len()
                && lines[j].1 == stdout
                && lines[j].0 - lines[j - 1].0 < 50
                && !stops_here(&lines[j - 1])
            {
                j += 1;
            }
            if t - last >= 5 {
                s.push_str("sleep 0.005\n");
            }
            let (file, to) = if stdout { (&out, "") } else { (&err, " >&2") };
            writeln!(
                s,
                "sed -n '{first},{}p' '{}'{to}",
                lines[j - 1].2,
                file.display()
            )
            .unwrap();
            if stops_here(&lines[j - 1]) {
                s.push_str("sleep 60\n");
            }
            last = lines[j - 1].0;
            i = j;
        }
        match self.meta["exit_code"].as_i64() {
            Some(c) => writeln!(s, "exit {c}").unwrap(),
            None => s.push_str("kill -9 $$\n"),
        }
        s
    }

    /// How long the CLI went on after it showed the failure, as recorded.
    fn went_on(&self) -> Duration {
        let (stdout, n) = self.stops_at().expect("a cell baton stops");
        let at = self.times(if stdout { "stdout_ms" } else { "stderr_ms" })[n - 1];
        Duration::from_millis(self.meta["duration_ms"].as_u64().unwrap() - at)
    }
}

fn recordings(agent: &str) -> Vec<Recording> {
    let want = &expected()[agent];
    let mut out = Vec::new();
    for (fault, w) in want.as_object().unwrap() {
        for (mode, base) in [
            ("defaults", fault.clone()),
            ("no-retry", format!("{fault}.no-retry")),
        ] {
            let meta: Value = serde_json::from_slice(
                &fs::read(root().join(agent).join(format!("{base}.meta.json"))).unwrap(),
            )
            .unwrap();
            out.push(Recording {
                agent: agent.to_string(),
                base,
                mode,
                meta,
                want: w.clone(),
            });
        }
    }
    out
}

/// Replay every recording of `agent` through baton and check the result.
fn replay_all(agent: &str) {
    let (binary, extra): (&str, &[&str]) = match agent {
        "zai" => ("pi", &[]),
        "pi" | "opencode" => (
            if agent == "pi" { "pi" } else { "opencode" },
            &["--provider", "mock", "--model", "mock-model"],
        ),
        "qwen" => ("qwen", &["--provider", "openai"]),
        "gemini-cli" => ("gemini", &[]),
        a => (a, &[]),
    };
    let mut checked = 0;
    let mut wrong = Vec::new();
    for r in recordings(agent) {
        // The recorder stopped the CLI while it still retried: its end is
        // not the CLI's, and baton would wait for it as the CLI would.
        if !r.meta["killed_after_ms"].is_null() && !r.stops_early() {
            continue;
        }
        let env = Env::new();
        env.fake(binary, &r.script());
        let started = Instant::now();
        let mut args = vec!["run", "--agent", agent, "--access", "workspace"];
        args.extend_from_slice(extra);
        args.extend(["--timeout", "600s", "--", "the task"]);
        let run = env.run(&args);
        let took = started.elapsed();
        let what = format!("{agent}/{}", r.base);
        let j = run.json();
        let e = &j["error"];
        let mut problems = Vec::new();
        if j["status"] != "failed" || run.code != 1 {
            problems.push(format!("status {} exit {}", j["status"], run.code));
        }
        if e["kind"] != r.want["kind"] {
            problems.push(format!("kind {} (want {})", e["kind"], r.want["kind"]));
        }
        if e["retry_after_s"].as_u64() != r.want["retry_after_s"].as_u64() {
            problems.push(format!("retry_after_s {}", e["retry_after_s"]));
        }
        if e["hint"].as_str().is_none_or(str::is_empty)
            || e["message"].as_str().is_none_or(str::is_empty)
        {
            problems.push("no hint or message".into());
        }
        let warned = j["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|w| w.as_str().is_some_and(|w| w.starts_with("baton stopped")));
        if r.stops_early() {
            // The warning names what baton saw, so a reader knows why it
            // did not wait.
            let kind = format!("`{}`", r.want["kind"].as_str().unwrap_or_default());
            let named = j["warnings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|w| w.as_str())
                .any(|w| w.starts_with("baton stopped") && w.contains(&kind));
            if warned && !named {
                problems.push(format!(
                    "the warning does not name {kind}: {}",
                    j["warnings"]
                ));
            }
            // Stopped as the failure showed: the fake's minute of waiting
            // (the real CLI's retries) is not waited out.
            if !warned || took >= Duration::from_secs(30) {
                problems.push(format!(
                    "not stopped early: took {took:?} (the real CLI went on for {:?}), warned {warned}",
                    r.went_on()
                ));
            }
        } else {
            if warned {
                problems.push("stopped early".into());
            }
            if j["exit_code"].as_i64() != r.meta["exit_code"].as_i64() {
                problems.push(format!(
                    "exit_code {} (the CLI's was {})",
                    j["exit_code"], r.meta["exit_code"]
                ));
            }
        }
        if !problems.is_empty() {
            wrong.push(format!(
                "{what}: {}\n  {}",
                problems.join("; "),
                run.stdout.trim()
            ));
        }
        checked += 1;
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked >= 10, "{agent}: only {checked} recordings replayed");
}

#[test]
fn codex_faults() {
    replay_all("codex");
}

#[test]
fn claude_faults() {
    replay_all("claude");
}

#[test]
fn pi_faults() {
    replay_all("pi");
}

#[test]
fn zai_faults() {
    replay_all("zai");
}

#[test]
fn gemini_cli_faults() {
    replay_all("gemini-cli");
}

#[test]
fn opencode_faults() {
    replay_all("opencode");
}

#[test]
fn qwen_faults() {
    replay_all("qwen");
}

/// `ask` reports each adviser's failure with its kind: the same
/// recordings, two advisers at once.
#[test]
fn ask_reports_each_advisers_kind() {
    let env = Env::new();
    env.git_init();
    env.replay("claude", "failures/claude/auth.no-retry.stdout", 1);
    env.replay("codex", "failures/codex/quota.no-retry.stdout", 1);
    let r = env.run(&["ask", "--agents", "claude,codex", "is the cache racy?"]);
    let v: Value =
        serde_json::from_str(r.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", r.stdout));
    let kind = |agent: &str| {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["agent"] == agent)
            .map(|x| x["error"]["kind"].clone())
            .unwrap_or_else(|| panic!("no {agent} in {v}"))
    };
    assert_eq!(kind("claude"), "auth_required", "{v}");
    assert_eq!(kind("codex"), "quota_exhausted", "{v}");
}

/// A council member's failure carries its kind, and the council retries a
/// call once only when its kind may pass (a rate limit), never because of
/// the words in a message (an `agent_error` that says "overloaded") nor a
/// failure no retry mends (no login).
#[test]
fn council_members_report_their_kind_and_only_passing_failures_are_retried() {
    use crate::council::{council, good_scenario, proposal, setup};
    let (env, fake) = setup();
    let mut j = good_scenario().to_json();
    let rate_limited = "429 Rate limit reached for mock-model in organization org-mock on \
                        requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again \
                        in 7s.";
    j["agents"]["pi"]["proposal"] = json!([{"fail": rate_limited}, {"json": proposal("gamma")}]);
    j["agents"]["claude"]["proposal"] = json!([{"fail": "Not logged in · Please run /login"}]);
    j["agents"]["codex"]["proposal"] = json!([{"fail": "model overloaded? no: bad request"}]);
    fake.write_json(&j);
    let r = council(
        &env,
        &[
            "discuss",
            "--members",
            "codex,claude,pi",
            "--seed",
            "1",
            "q?",
        ],
    );
    let v = r.json();
    let stage = |i: usize| v["members"][i]["outcomes"]["proposing"].clone();
    // pi: rate-limited, retried once, then answered.
    assert_eq!(stage(2)["outcome"], "ok", "{v}");
    assert_eq!(fake.calls_for("pi", Stage::Proposal).len(), 2);
    // claude: not logged in; codex: words only. Neither is retried.
    assert_eq!(
        (stage(1)["outcome"].clone(), stage(1)["kind"].clone()),
        (json!("error"), json!("auth_required")),
        "{v}"
    );
    assert_eq!(fake.calls_for("claude", Stage::Proposal).len(), 1);
    assert_eq!(
        (stage(0)["outcome"].clone(), stage(0)["kind"].clone()),
        (json!("error"), json!("agent_error")),
        "{v}"
    );
    assert_eq!(fake.calls_for("codex", Stage::Proposal).len(), 1);
    let claude = v["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["agent"] == "claude")
        .cloned()
        .unwrap();
    assert_eq!(claude["kind"], "auth_required", "{claude}");
}

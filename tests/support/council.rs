//! Council test instruments: the scenario-driven fake agent
//! (`council_fake.py`, one script impersonating codex, claude and pi) and
//! helpers to script it, put it on PATH and read its call log.
//!
//! Usage:
//! ```ignore
//! let env = Env::new();
//! let fake = CouncilFake::install(&env, &["codex", "claude", "pi"]);
//! fake.write(&Scenario::new()
//!     .on("codex", Stage::Proposal, Step::json(json!({…})))
//!     .on("*", Stage::Review, Step::json(json!({…}))));
//! let r = env.run(&["council", "plan", "--yes", …]);   // PATH and log set
//! let proposals = fake.calls_for("codex", Stage::Proposal);
//! ```
//! `Env::baton()` already sets `FAKE_DIR`, and the fake defaults its scenario
//! and log to `$FAKE_DIR/council/{scenario.json,log.jsonl}`, so a plain
//! `env.run(…)` needs nothing more. Stage and round rules: see the script's
//! header.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::Env;

/// The fake's source, copied into each test's bin directory so a test never
/// depends on the checkout's file mode.
pub const SCRIPT: &str = include_str!("council_fake.py");

// The ACP side of the fake is `support::acp::fake_acp_council`: it imports
// the script above for its stage logic, so both are copied side by side.

/// Which turn of a council a call is, as the fake recognises it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    Proposal,
    Critique,
    Plan,
    Review,
    /// A fan-out's judge (`baton.fanout.review/1`).
    FanoutReview,
    /// The writer's implementation or repair turn: a prompt naming no schema
    /// (a fan-out candidate's turns too).
    Implement,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Proposal => "proposal",
            Stage::Critique => "critique",
            Stage::Plan => "plan",
            Stage::Review => "review",
            Stage::FanoutReview => "fanout_review",
            Stage::Implement => "implement",
        }
    }

    pub fn parse(s: &str) -> Stage {
        match s {
            "proposal" => Stage::Proposal,
            "critique" => Stage::Critique,
            "plan" => Stage::Plan,
            "review" => Stage::Review,
            "fanout_review" => Stage::FanoutReview,
            "implement" => Stage::Implement,
            other => panic!("council_fake logged an unknown stage {other:?}"),
        }
    }

    /// The schema id a prompt names for this stage (`None` for the writer).
    pub fn schema_id(self) -> Option<&'static str> {
        match self {
            Stage::Proposal => Some("baton.council.proposal/1"),
            Stage::Critique => Some("baton.council.critique/1"),
            Stage::Plan => Some("baton.council.plan/1"),
            Stage::Review => Some("baton.council.review/1"),
            Stage::FanoutReview => Some("baton.fanout.review/1"),
            Stage::Implement => None,
        }
    }
}

/// One scripted answer (see the script's header for every key).
#[derive(Debug, Clone, PartialEq)]
pub struct Step(pub Value);

impl Step {
    /// Answer this JSON object (structured output where the CLI has it).
    pub fn json(v: Value) -> Step {
        Step(json!({ "json": v }))
    }
    /// Answer prose.
    pub fn say(text: &str) -> Step {
        Step(json!({ "say": text }))
    }
    /// A well-formed run with an empty final message.
    pub fn nothing() -> Step {
        Step(json!({ "nothing": true }))
    }
    /// Print exactly `raw` on stdout (no CLI framing at all).
    pub fn stdout(raw: &str) -> Step {
        Step(json!({ "stdout": raw }))
    }
    /// Exit `code` with `stderr`, printing nothing on stdout.
    pub fn exit(code: i32, stderr: &str) -> Step {
        Step(json!({ "exit": code, "stderr": stderr }))
    }
    /// The CLI's own failure shape (codex turn.failed, claude is_error,
    /// pi stopReason error).
    pub fn fail(message: &str) -> Step {
        Step(json!({ "fail": message }))
    }
    /// Sleep until killed.
    pub fn hang() -> Step {
        Step(json!({ "hang": true }))
    }
    /// Sleep `ms` before answering.
    pub fn delay_ms(mut self, ms: u64) -> Step {
        self.0["delay_ms"] = json!(ms);
        self
    }
    /// Answer only once the file `$FAKE_DIR/<name>` exists.
    pub fn gate(mut self, name: &str) -> Step {
        self.0["gate"] = json!(name);
        self
    }
    /// Append `text` to the prose, or to every top-level string of the JSON.
    pub fn inject(mut self, text: &str) -> Step {
        self.0["inject"] = json!(text);
        self
    }
    /// Write `content` to `path` (relative to the call's cwd) before answering.
    pub fn edit(mut self, path: &str, content: &str) -> Step {
        push(
            &mut self.0,
            "edits",
            json!({ "path": path, "content": content }),
        );
        self
    }
    /// Run `git ARGS…` in the call's cwd (after the edits).
    pub fn git(mut self, args: &[&str]) -> Step {
        push(&mut self.0, "git", json!(args));
        self
    }
    /// Run `sh -c SCRIPT` in the call's cwd (after the edits and `git`).
    pub fn sh(mut self, script: &str) -> Step {
        push(&mut self.0, "sh", json!(script));
        self
    }
    /// Report this session id.
    pub fn session(mut self, id: &str) -> Step {
        self.0["session"] = json!(id);
        self
    }
    pub fn usage(mut self, input: u64, output: u64) -> Step {
        self.0["usage"] = json!({ "input": input, "output": output });
        self
    }
    /// claude: the cost (USD) its result reports.
    pub fn cost(mut self, usd: f64) -> Step {
        self.0["cost"] = json!(usd);
        self
    }
}

fn push(v: &mut Value, key: &str, item: Value) {
    match v.get_mut(key).and_then(Value::as_array_mut) {
        Some(a) => a.push(item),
        None => v[key] = json!([item]),
    }
}

/// A scenario: steps per (agent, stage), one per round, the last repeating.
/// `agent` is `codex`, `claude`, `pi`, `NAME:MODEL` (that model only) or `*`.
#[derive(Debug, Clone, Default)]
pub struct Scenario {
    agents: BTreeMap<String, BTreeMap<&'static str, Vec<Value>>>,
}

impl Scenario {
    pub fn new() -> Scenario {
        Scenario::default()
    }

    /// Append `step` as the next round of (`agent`, `stage`).
    pub fn on(mut self, agent: &str, stage: Stage, step: Step) -> Scenario {
        self.agents
            .entry(agent.to_string())
            .or_default()
            .entry(stage.as_str())
            .or_default()
            .push(step.0);
        self
    }

    /// The same step for every listed agent.
    pub fn all(mut self, agents: &[&str], stage: Stage, step: Step) -> Scenario {
        for a in agents {
            self = self.on(a, stage, step.clone());
        }
        self
    }

    pub fn to_json(&self) -> Value {
        json!({ "agents": self.agents })
    }
}

/// One logged call of the fake.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub agent: String,
    pub model: Option<String>,
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    /// The prompt, as read on stdin.
    pub stdin: String,
    pub stage: Stage,
    pub round: u64,
    /// The session id a resume named (`--last` for codex's `resume --last`).
    pub resume: Option<String>,
    /// The session id the call reported.
    pub session: String,
    /// The schema the CLI was given (claude `--json-schema`, codex
    /// `--output-schema` file), if any.
    pub schema: Option<String>,
    pub pid: i32,
}

impl Call {
    fn from_json(v: &Value) -> Call {
        let s = |k: &str| v[k].as_str().map(str::to_string);
        Call {
            agent: s("agent").expect("agent"),
            model: s("model"),
            argv: v["argv"]
                .as_array()
                .expect("argv")
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect(),
            cwd: PathBuf::from(s("cwd").expect("cwd")),
            stdin: s("stdin").unwrap_or_default(),
            stage: Stage::parse(v["stage"].as_str().expect("stage")),
            round: v["round"].as_u64().expect("round"),
            resume: s("resume"),
            session: s("session").expect("session"),
            schema: s("schema"),
            pid: v["pid"].as_i64().expect("pid") as i32,
        }
    }

    /// `flag` followed by `value` in argv.
    pub fn has_pair(&self, flag: &str, value: &str) -> bool {
        self.argv.windows(2).any(|w| w[0] == flag && w[1] == value)
    }
}

/// The fake installed in one `Env`.
pub struct CouncilFake {
    pub dir: PathBuf,
    pub script: PathBuf,
    pub scenario: PathBuf,
    pub log: PathBuf,
}

impl CouncilFake {
    /// Put the fake on `env`'s PATH under each name in `agents`
    /// (`codex`, `claude`, `pi`), with an empty scenario.
    pub fn install(env: &Env, agents: &[&str]) -> CouncilFake {
        let dir = env.fake_dir.join("council");
        fs::create_dir_all(&dir).unwrap();
        let script = dir.join("council_fake.py");
        fs::write(&script, SCRIPT).unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        for a in agents {
            let link = env.bin.join(a);
            let _ = fs::remove_file(&link);
            std::os::unix::fs::symlink(&script, &link).unwrap();
        }
        let fake = CouncilFake {
            scenario: dir.join("scenario.json"),
            log: dir.join("log.jsonl"),
            script,
            dir,
        };
        fake.write(&Scenario::new());
        fake
    }

    /// Put the ACP fake on `env`'s PATH under each name in `agents` (an ACP
    /// agent's program, `copilot`), answering from the same scenario and
    /// logging to the same log as the headless names. What baton sent goes
    /// to `sent.jsonl` in the fake's directory ([`CouncilFake::sent`]).
    pub fn install_acp(&self, env: &Env, agents: &[&str]) {
        for a in agents {
            self.install_acp_as(env, a, a);
        }
    }

    /// The ACP fake as the program `program`, logging its calls as `agent`
    /// (a brought agent: `[agents.mybot] command = ["my-acp"]`).
    pub fn install_acp_as(&self, env: &Env, program: &str, agent: &str) {
        let fake = super::acp::fake_acp_council(&self.dir);
        env.fake(
            program,
            &format!(
                "exec {fake} --agent '{agent}' --record '{}' \"$@\"",
                self.dir.join("sent.jsonl").display()
            ),
        );
    }

    /// Every message baton sent to the ACP fake, in order (all its runs).
    pub fn sent(&self) -> Vec<Value> {
        fs::read_to_string(self.dir.join("sent.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a sent line is JSON"))
            .collect()
    }

    /// The ACP fake's permission answers: agent, stage, round, path,
    /// option (what baton picked), written.
    pub fn permissions(&self) -> Vec<Value> {
        fs::read_to_string(self.dir.join("permissions.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("a permission line is JSON"))
            .collect()
    }

    /// Replace the scenario (read afresh by every call).
    pub fn write(&self, s: &Scenario) -> &Self {
        self.write_json(&s.to_json())
    }

    /// A scenario given as raw JSON (`{"agents": {…}}`).
    pub fn write_json(&self, v: &Value) -> &Self {
        fs::write(&self.scenario, serde_json::to_string_pretty(v).unwrap()).unwrap();
        self
    }

    /// Point a command that is not `Env::baton()` at this fake's files
    /// (also sets PATH to `bin` first).
    pub fn apply(&self, cmd: &mut Command, bin: &Path) {
        cmd.env("COUNCIL_SCENARIO", &self.scenario)
            .env("COUNCIL_LOG", &self.log)
            .env(
                "PATH",
                format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
            );
    }

    /// Every logged call, in log order.
    pub fn calls(&self) -> Vec<Call> {
        let Ok(text) = fs::read_to_string(&self.log) else {
            return Vec::new();
        };
        // A line still being written (no newline yet) is not a call yet:
        // the reader does not take the fake's lock.
        let complete = text.rfind('\n').map_or("", |n| &text[..=n]);
        complete
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| Call::from_json(&serde_json::from_str(l).expect("log line is JSON")))
            .collect()
    }

    /// Calls grouped by (agent, stage), each group in round order.
    pub fn by_stage(&self) -> BTreeMap<(String, Stage), Vec<Call>> {
        let mut m: BTreeMap<(String, Stage), Vec<Call>> = BTreeMap::new();
        for c in self.calls() {
            m.entry((c.agent.clone(), c.stage)).or_default().push(c);
        }
        for v in m.values_mut() {
            v.sort_by_key(|c| c.round);
        }
        m
    }

    pub fn calls_for(&self, agent: &str, stage: Stage) -> Vec<Call> {
        self.by_stage()
            .remove(&(agent.to_string(), stage))
            .unwrap_or_default()
    }

    /// Every call of one stage, whatever the agent, in log order.
    pub fn stage(&self, stage: Stage) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|c| c.stage == stage)
            .collect()
    }
}

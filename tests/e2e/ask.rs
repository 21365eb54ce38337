//! `baton ask` against the real CLIs (issue 6): advice through each CLI's own
//! structured-output mechanism (claude `--json-schema` with `--tools ""
//! --strict-mcp-config`, codex `--output-schema`), read-only by construction
//! in both scopes, and one repair round for an invalid answer.

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::mock::{Recorded, scenario_step};
use crate::support::{Agent, Outcome, Peer, assert_usage, mock, turns};

/// The advice schema baton sends, as `ask --dry-run` prints it.
fn advice_schema(p: &Peer) -> Value {
    let o = p.ask().args(["--dry-run"]).run("schema please");
    assert_eq!(o.code, 0, "{}", o.dump());
    let s = o.json["advice_schema"].clone();
    assert!(s.is_object(), "{}", o.dump());
    s
}

/// The advice a scenario step scripted (its `json`).
fn scripted(scenario: &str, step: usize) -> Value {
    scenario_step(scenario, step)["json"].clone()
}

/// (a) A scripted adviser answers valid advice: success, `advice` parsed,
/// usage and the CLI's own session reported, and the request carried the
/// advice schema through the CLI's structured-output feature with every
/// tool baton can switch off switched off (packet scope).
fn good(agent: Agent) {
    let p = Peer::new(agent, "ask-good");
    let schema = advice_schema(&p);
    let (id, q) = p.prompt("E2E-ASK-GOOD");
    let o = p.ask().run(&q);
    assert_eq!((o.code, o.status()), (0, "success"), "{}", o.dump());
    assert_eq!(o.json["advice"], scripted("ask-good", 0), "{}", o.dump());
    assert!(o.json["repair"].is_null(), "{}", o.dump());
    assert_eq!(o.json["agent"], agent.name());
    assert_eq!(o.json["access"], "read-only");
    assert_eq!(o.json["context"]["scope"], "packet");
    // Packet scope: the adviser ran in an empty temporary directory, not in
    // the repository, and baton removed it afterwards.
    let cwd = o.json["cwd"].as_str().unwrap_or_default().to_string();
    assert!(
        !cwd.is_empty() && !Path::new(&cwd).starts_with(&p.work),
        "{}",
        o.dump()
    );
    assert!(
        !Path::new(&cwd).exists(),
        "the empty directory is left: {cwd}"
    );
    let session = o.session();
    assert!(
        !p.files_mentioning(&session).is_empty(),
        "no file under {} mentions session {session}",
        p.home.display()
    );
    let t = turns(&id);
    assert_eq!(t.len(), 1, "one model turn expected\n{}", o.dump());
    assert_eq!(t[0].scenario, "ask-good");
    assert_usage(&o, mock().usage_for(&id));
    assert_structured_request(agent, &t[0], &schema);
}

/// Tool names a request declares (Anthropic/Responses/Chat `name` or
/// `function.name`; Gemini `functionDeclarations`).
fn tool_names(r: &Recorded) -> Vec<String> {
    let mut out = Vec::new();
    for t in r.body["tools"].as_array().into_iter().flatten() {
        if let Some(n) = t["name"].as_str().or(t["function"]["name"].as_str()) {
            out.push(n.to_string());
        }
        for d in t["functionDeclarations"].as_array().into_iter().flatten() {
            if let Some(n) = d["name"].as_str() {
                out.push(n.to_string());
            }
        }
    }
    out
}

/// What each CLI put on the wire for a packet-scope adviser.
fn assert_structured_request(agent: Agent, r: &Recorded, schema: &Value) {
    let names = tool_names(r);
    match agent {
        Agent::Claude => {
            // `--json-schema` becomes the StructuredOutput tool; `--tools ""`
            // leaves no other real tool (the placeholder is claude's
            // deferred-loading stub and does nothing).
            let so = r.body["tools"]
                .as_array()
                .and_then(|a| a.iter().find(|t| t["name"] == "StructuredOutput"))
                .unwrap_or_else(|| panic!("no StructuredOutput tool: {names:?}"));
            assert_eq!(
                &so["input_schema"], schema,
                "claude's structured-output schema"
            );
            let others: Vec<_> = names
                .iter()
                .filter(|n| *n != "StructuredOutput" && *n != "DeferredToolPlaceholder")
                .collect();
            assert!(others.is_empty(), "claude offered tools: {others:?}");
        }
        Agent::Codex => {
            // `--output-schema` becomes a strict json_schema text format.
            let f = &r.body["text"]["format"];
            assert_eq!(f["type"], "json_schema", "{f}");
            assert_eq!(f["strict"], true, "{f}");
            assert_eq!(&f["schema"], schema, "codex's output schema");
        }
        Agent::Pi | Agent::Zai => {
            // `--no-tools`: nothing declared at all.
            assert!(names.is_empty(), "pi offered tools: {names:?}");
        }
        Agent::Opencode => {
            // baton's read-only agent with every permission denied: no tool.
            assert!(names.is_empty(), "opencode offered tools: {names:?}");
        }
        Agent::Qwen => {
            // `--json-schema` becomes the structured_output tool; plan mode
            // declares nothing that writes or runs commands.
            let so = r.body["tools"]
                .as_array()
                .and_then(|a| {
                    a.iter()
                        .find(|t| t["function"]["name"] == "structured_output")
                })
                .unwrap_or_else(|| panic!("no structured_output tool: {names:?}"));
            assert_eq!(&so["function"]["parameters"], schema, "qwen's schema");
            for w in ["write_file", "edit", "run_shell_command"] {
                assert!(
                    !names.iter().any(|n| n == w),
                    "qwen declared {w}: {names:?}"
                );
            }
        }
        // Not run for ACP agents (their structured output is text).
        Agent::Copilot
        | Agent::Kilo
        | Agent::Cline
        | Agent::Nanocoder
        | Agent::GeminiCliAcp
        | Agent::QwenAcp => {}
        Agent::GeminiCli => {
            // Default approval mode: no mutating tool is even declared.
            for w in ["write_file", "replace", "run_shell_command"] {
                assert!(
                    !names.iter().any(|n| n == w),
                    "gemini-cli declared {w}: {names:?}"
                );
            }
        }
    }
}

/// claude's `system`/`init` event (its tools and MCP servers) from the log.
fn claude_init(o: &Outcome) -> Value {
    let log = fs::read_to_string(o.json["log_path"].as_str().expect("log_path")).unwrap();
    log.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "system" && v["subtype"] == "init")
        .unwrap_or_else(|| panic!("no init event\n{}", o.dump()))
}

fn git_status(dir: &Path) -> String {
    let out = Command::new("git")
        .args(["status", "--porcelain", "--ignored=no"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// (b) Read-only by construction: an adviser that tries to write a file
/// (its CLI's own write tool) writes nothing, in packet scope and in repo
/// scope; and the very same script does write under `baton run --access
/// workspace`, so the refusal is the adviser's switches, not a broken script.
fn read_only(agent: Agent) {
    let p = Peer::new(agent, "ask-ro");
    let out = p.work.join("out.txt");
    if agent == Agent::Claude {
        // A user-level MCP server (it could write): the adviser must not
        // get it (`--strict-mcp-config`), the control run below does.
        fs::write(
            p.home.join(".claude/.claude.json"),
            r#"{"mcpServers":{"e2e-mcp":{"type":"stdio","command":"/bin/false","args":[]}}}"#,
        )
        .unwrap();
    }
    for (scope, claude_tools) in [
        ("packet", &["StructuredOutput"][..]),
        ("repo", &["Glob", "Grep", "Read", "StructuredOutput"][..]),
    ] {
        let (id, q) = p.prompt("E2E-ASK-WRITE");
        let o = p.ask().args(["--scope", scope]).run(&q);
        let ctx = format!("scope {scope}\n{}", o.dump());
        assert_eq!((o.code, o.status()), (0, "success"), "{ctx}");
        assert!(!out.exists(), "the adviser wrote out.txt\n{ctx}");
        assert_eq!(git_status(&p.work), "", "the repository changed\n{ctx}");
        assert!(o.changed_files().is_empty(), "{ctx}");
        let t = turns(&id);
        assert_eq!(
            t.len(),
            2,
            "the model asked to write and got an answer back\n{ctx}"
        );
        assert!(
            !o.denials().is_empty(),
            "the refused write must show in denials\n{ctx}"
        );
        // The adviser went on to answer after the refusal.
        assert_eq!(o.json["advice"], scripted("ask-write", 1), "{ctx}");
        let warnings = o.json["warnings"].to_string();
        assert!(!warnings.contains("despite read-only"), "{ctx}");
        if agent == Agent::Claude {
            let init = claude_init(&o);
            assert_eq!(init["tools"], json!(claude_tools), "{ctx}");
            assert_eq!(init["mcp_servers"], json!([]), "{ctx}");
        }
    }
    let (_, task) = p.prompt("E2E-ASK-WRITE");
    let o = p.baton().access("workspace").run(&task);
    assert_eq!((o.code, o.status()), (0, "success"), "{}", o.dump());
    if agent == Agent::Claude {
        let mcp = claude_init(&o)["mcp_servers"].to_string();
        assert!(
            mcp.contains("e2e-mcp"),
            "the control run must see the MCP server: {mcp}"
        );
    }
    assert_eq!(
        fs::read_to_string(&out).ok().as_deref(),
        Some("written by the adviser\n"),
        "the control run (workspace access) must write\n{}",
        o.dump()
    );
}

/// (c) Invalid advice first, valid after baton's repair prompt: success with
/// one repair in the adviser's own session, both rounds' usage counted.
fn repair(agent: Agent) {
    let p = Peer::new(agent, "ask-repair");
    let schema = advice_schema(&p);
    let (id, q) = p.prompt("E2E-ASK-BAD");
    let o = p.ask().run(&q);
    assert_eq!((o.code, o.status()), (0, "success"), "{}", o.dump());
    assert_eq!(o.json["advice"], scripted("ask-repair", 0), "{}", o.dump());
    let rep = &o.json["repair"];
    assert_eq!(rep["mode"], "resume", "{}", o.dump());
    assert_eq!(
        rep["first_answer"].as_str(),
        scenario_step("ask-bad", 0)["say"].as_str(),
        "{}",
        o.dump()
    );
    let errors = rep["errors"].to_string();
    assert!(errors.contains("`recommendation` is missing"), "{errors}");
    let t = turns(&id);
    let last = t.last().expect("requests");
    assert_eq!(t[0].scenario, "ask-bad");
    assert_eq!(
        last.scenario, "ask-repair",
        "the repair prompt reached the model"
    );
    // The repair went into the same session: the first answer is in its history.
    assert!(
        last.raw_body.contains("ASK-BAD: it is a race"),
        "the repair round must resume the adviser's session"
    );
    assert!(last.prompt.contains("`recommendation` is missing"));
    // The resumed round still had the schema and no tools (codex takes
    // `--output-schema` before `resume <id>`).
    assert_structured_request(agent, last, &schema);
    assert_usage(&o, mock().usage_for(&id));
}

/// `--agents codex,claude`: both answer, side by side.
#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn parallel_advisers() {
    let p = Peer::new(Agent::Codex, "ask-parallel");
    let c = Peer::new(Agent::Claude, "ask-parallel");
    let (id, q) = p.prompt("E2E-ASK-GOOD");
    let o: Outcome = p.ask_many(&[&c]).run(&q);
    assert_eq!((o.code, o.status()), (0, "success"), "{}", o.dump());
    let rs = o.json["results"].as_array().cloned().unwrap_or_default();
    assert_eq!(rs.len(), 2, "{}", o.dump());
    for (r, agent) in rs.iter().zip(["codex", "claude"]) {
        assert_eq!(r["agent"], agent);
        assert_eq!(r["status"], "success", "{}", o.dump());
        assert_eq!(r["advice"], scripted("ask-good", 0));
    }
    let t = turns(&id);
    assert_eq!(t.len(), 2, "one turn per adviser");
}

per_agent!(
    [codex => Codex, claude => Claude, pi => Pi, gemini_cli => GeminiCli,
     opencode => Opencode, qwen => Qwen]
    good, read_only, repair
);

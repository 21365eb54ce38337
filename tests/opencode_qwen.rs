//! opencode and Qwen Code against fake CLIs that replay their real
//! transcripts (`tests/fixtures/opencode`, `tests/fixtures/qwen`): what
//! reaches each CLI for every access mode, resume, `continue` and `ask`, and
//! how their success, failure and refusals come back.

use std::fs;

use crate::run::{fake_cli, peer_env};
use crate::support::{Env, Run};

fn has_seq(argv: &[String], needle: &[&str]) -> bool {
    argv.windows(needle.len()).any(|w| w == needle)
}

/// The read-only agent baton defined for opencode, from the env it set.
fn read_only_agent(env: &Env) -> serde_json::Value {
    let cfg = peer_env(env, "opencode")
        .remove("OPENCODE_CONFIG_CONTENT")
        .expect("OPENCODE_CONFIG_CONTENT set");
    let v: serde_json::Value = serde_json::from_str(&cfg).unwrap();
    v["agent"]["baton-read-only"].clone()
}

// ---------------------------------------------------------------- opencode

#[test]
fn opencode_success_with_provider_model_and_variant() {
    let env = Env::new();
    fake_cli(&env, "opencode", "opencode/opencode-write.jsonl", None, 0);
    let r = env.run(&[
        "--agent",
        "opencode",
        "--provider",
        "zai",
        "--model",
        "glm-5.2",
        "--effort",
        "high",
        "write it",
    ]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["agent"], "opencode");
    assert_eq!(
        j["message"],
        "WRITE-DONE tool_output=<Wrote file successfully.>"
    );
    assert_eq!(j["session"], "ses_dd1ebd9f0ffeBp9rwMNI1tSGIk");
    assert_eq!(j["usage"]["input_tokens"], 2468);
    assert_eq!(j["usage"]["cached_input_tokens"], 400);
    assert_eq!(j["usage"]["output_tokens"], 112);
    let argv = env.argv("opencode");
    assert!(
        has_seq(&argv, &["run", "--format", "json", "-m", "zai/glm-5.2"]),
        "{argv:?}"
    );
    assert!(has_seq(&argv, &["--variant", "high"]), "{argv:?}");
    // Workspace: opencode's own rules, no baton agent, no --auto.
    assert!(!argv.iter().any(|a| a == "--agent" || a == "--auto"));
    assert!(env.stdin("opencode").contains("write it"));
    assert!(!argv.iter().any(|a| a.contains("write it")));
    assert!(
        j["warnings"].to_string().contains("no sandbox"),
        "{}",
        j["warnings"]
    );
}

#[test]
fn opencode_read_only_is_a_baton_agent_and_refusals_are_listed() {
    let env = Env::new();
    fake_cli(
        &env,
        "opencode",
        "opencode/opencode-read-only-agent-write.jsonl",
        None,
        0,
    );
    // The caller's own inline config (its provider) must survive.
    let r = Run::from(
        env.baton()
            .env("OPENCODE_CONFIG_CONTENT", r#"{"provider":{"mine":{}}}"#)
            .args(["--agent", "opencode", "--read-only", "x"])
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["denials"][0]["tool"], "write");
    let argv = env.argv("opencode");
    assert!(has_seq(&argv, &["--agent", "baton-read-only"]), "{argv:?}");
    let agent = read_only_agent(&env);
    assert_eq!(agent["permission"]["*"], "deny");
    assert_eq!(agent["permission"]["read"], "allow");
    let cfg = peer_env(&env, "opencode")["OPENCODE_CONFIG_CONTENT"].clone();
    assert!(cfg.contains("\"mine\""), "{cfg}");
}

#[test]
fn opencode_full_is_auto_and_rejected_asks_fail_the_run() {
    let env = Env::new();
    fake_cli(
        &env,
        "opencode",
        "opencode/opencode-full-auto-external-write.jsonl",
        None,
        0,
    );
    let j = env
        .run(&["--agent", "opencode", "--access", "full", "x"])
        .json();
    assert_eq!(j["status"], "success");
    assert!(env.argv("opencode").contains(&"--auto".to_string()));

    // Workspace: the write outside the project was an "ask", auto-rejected;
    // opencode then stops with no answer and exit 0.
    fake_cli(
        &env,
        "opencode",
        "opencode/opencode-workspace-external-write.jsonl",
        Some("opencode/opencode-workspace-external-write.stderr.txt"),
        0,
    );
    let r = env.run(&["--agent", "opencode", "x"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert_eq!(j["exit_code"], 0);
    assert!(
        j["error"]["message"]
            .as_str()
            .unwrap()
            .contains("refused `write` call"),
        "{j}"
    );
    assert_eq!(j["denials"][0]["tool"], "write");
}

#[test]
fn opencode_api_error_and_resume() {
    let env = Env::new();
    fake_cli(
        &env,
        "opencode",
        "opencode/opencode-api-error.jsonl",
        None,
        1,
    );
    let r = env.run(&["--agent", "opencode", "--resume", "ses_abc", "x"]);
    assert_eq!(r.code, 1);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert_eq!(
        j["error"]["message"],
        "mock: scripted bad request (HTTP 400)"
    );
    assert!(has_seq(&env.argv("opencode"), &["--session", "ses_abc"]));
}

#[test]
fn opencode_usage_errors() {
    let env = Env::new();
    for args in [
        &["--agent", "opencode", "--provider", "zai", "x"][..],
        &["--agent", "opencode", "--effort", "ultra", "x"],
        &[
            "--agent",
            "opencode",
            "--provider",
            "zai",
            "-m",
            "openai/gpt-5",
            "x",
        ],
    ] {
        let r = env.run(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
        assert_eq!(r.json()["error"]["kind"], "usage");
    }
    assert!(!env.called("opencode"));
}

// ---------------------------------------------------------------- qwen

#[test]
fn qwen_success_usage_and_access_modes() {
    let env = Env::new();
    fake_cli(&env, "qwen", "qwen/qwen-stream-plain.jsonl", None, 0);
    let r = env.run(&["--agent", "qwen", "--provider", "openai", "-m", "m", "hi"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["message"], "PLAIN-ANSWER: hello from the mock model.");
    assert_eq!(j["session"], "e5d93a60-8be8-4170-8da5-a71734ce498d");
    assert_eq!(j["usage"]["input_tokens"], 2468);
    assert_eq!(j["usage"]["cached_input_tokens"], 400);
    let argv = env.argv("qwen");
    assert!(has_seq(&argv, &["--output-format", "stream-json"]));
    assert!(
        has_seq(&argv, &["--approval-mode", "auto-edit"]),
        "{argv:?}"
    );
    assert!(has_seq(&argv, &["--auth-type", "openai", "--model", "m"]));
    assert!(env.stdin("qwen").contains("hi"));

    for (access, mode) in [("read-only", "plan"), ("full", "yolo")] {
        env.run(&["--agent", "qwen", "--access", access, "x"]);
        let argv = env.argv("qwen");
        assert!(has_seq(&argv, &["--approval-mode", mode]), "{argv:?}");
    }
}

#[test]
fn qwen_plan_mode_refusal_and_api_error() {
    let env = Env::new();
    fake_cli(&env, "qwen", "qwen/qwen-stream-plan-write.jsonl", None, 0);
    let j = env.run(&["--agent", "qwen", "--read-only", "x"]).json();
    assert_eq!(j["status"], "success");
    assert_eq!(j["denials"][0]["tool"], "write_file");

    fake_cli(&env, "qwen", "qwen/qwen-stream-api-error.jsonl", None, 1);
    let r = env.run(&["--agent", "qwen", "--resume", "s-1", "x"]);
    assert_eq!(r.code, 1);
    let j = r.json();
    assert_eq!(j["status"], "failed");
    assert_eq!(j["error"]["message"], "400 mock: scripted bad request");
    assert!(has_seq(&env.argv("qwen"), &["--resume", "s-1"]));
}

/// qwen's `result.usage` is a running total over the session (measured:
/// 540 after the first run, 2440 after the resumed one whose own calls
/// were 1900): a resumed run reports only its own tokens.
#[test]
fn qwen_resumed_run_reports_its_own_usage() {
    let env = Env::new();
    fake_cli(&env, "qwen", "qwen/qwen-stream-resume-first.jsonl", None, 0);
    let first = env.run(&["--agent", "qwen", "remember"]).json();
    assert_eq!(first["usage"]["input_tokens"], 540);
    let session = first["session"].as_str().unwrap().to_string();
    fake_cli(
        &env,
        "qwen",
        "qwen/qwen-stream-resume-read-only.jsonl",
        None,
        0,
    );
    let j = env
        .run(&["--agent", "qwen", "--read-only", "--resume", &session, "x"])
        .json();
    assert_eq!(j["session"], session.as_str());
    assert_eq!(j["usage"]["input_tokens"], 1900, "{j}");
    assert_eq!(j["usage"]["cached_input_tokens"], 400);
    assert_eq!(j["usage"]["output_tokens"], 50);
    assert!(has_seq(&env.argv("qwen"), &["--resume", &session]));
}

#[test]
fn qwen_rejects_an_unknown_auth_type_and_efforts() {
    let env = Env::new();
    for args in [
        &["--agent", "qwen", "--provider", "zai", "x"][..],
        &["--agent", "qwen", "--effort", "high", "x"],
        &["--agent", "codex", "--provider", "openai", "x"],
    ] {
        let r = env.run(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stdout);
    }
}

// ---------------------------------------------------------------- both

#[test]
fn missing_clis_name_their_npm_packages() {
    let env = Env::new();
    for (agent, hint) in [
        ("opencode", "npm install -g opencode-ai"),
        ("qwen", "npm install -g @qwen-code/qwen-code"),
    ] {
        let r = Run::from(
            env.baton()
                .env("PATH", &env.bin)
                .args(["--agent", agent, "x"])
                .output()
                .unwrap(),
        );
        assert_eq!(r.code, 127);
        let h = r.json()["error"]["hint"].as_str().unwrap().to_string();
        assert!(h.contains(hint), "{agent}: {h}");
    }
}

#[test]
fn continue_resumes_each_cli_session() {
    let env = Env::new();
    for (agent, fixture, flag, session) in [
        (
            "opencode",
            "opencode/opencode-run-json-basic.jsonl",
            "--session",
            "ses_dd2000f2bffetACuusqlHfAkk0",
        ),
        (
            "qwen",
            "qwen/qwen-stream-plain.jsonl",
            "--resume",
            "e5d93a60-8be8-4170-8da5-a71734ce498d",
        ),
    ] {
        fake_cli(&env, agent, fixture, None, 0);
        let r = env.run(&["run", "--async", "--agent", agent, "--read-only", "first"]);
        let id = r.json()["job_id"].as_str().unwrap().to_string();
        assert_eq!(env.run(&["wait", &id]).code, 0);
        let r = env.run(&["continue", &id, "and", "then"]);
        let next = r.json()["job_id"].as_str().unwrap().to_string();
        assert_eq!(env.run(&["wait", &next]).code, 0);
        let argv = env.argv(agent);
        assert!(has_seq(&argv, &[flag, session]), "{agent}: {argv:?}");
        // The access mode of the first run holds on the continued one.
        let ro = if agent == "qwen" {
            "plan"
        } else {
            "baton-read-only"
        };
        assert!(argv.iter().any(|a| a == ro), "{agent}: {argv:?}");
        assert!(env.stdin(agent).contains("and then"));
    }
}

/// An adviser answer in each CLI's own output shape.
fn advice_reply(agent: &str, text: &str) -> String {
    let t = serde_json::to_string(text).unwrap();
    match agent {
        "opencode" => format!(
            "{{\"type\":\"text\",\"sessionID\":\"ses_1\",\"part\":{{\"type\":\"text\",\"text\":{t}}}}}\n\
             {{\"type\":\"step_finish\",\"sessionID\":\"ses_1\",\"part\":{{\"reason\":\"stop\",\"tokens\":{{\"input\":10,\"output\":5,\"reasoning\":0,\"cache\":{{\"read\":0,\"write\":0}}}},\"cost\":0}}}}\n"
        ),
        _ => format!(
            "{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"q-1\",\"model\":\"m\"}}\n\
             {{\"type\":\"result\",\"subtype\":\"success\",\"session_id\":\"q-1\",\"is_error\":false,\"result\":{t},\"usage\":{{\"input_tokens\":10,\"output_tokens\":5}}}}\n"
        ),
    }
}

#[test]
fn ask_uses_read_only_switches_and_qwen_gets_the_schema() {
    let env = Env::new();
    let advice = serde_json::json!({
        "assessment": "a race", "recommendation": "add a lock", "alternatives": [],
        "risks": [], "verification_steps": [], "missing_context": [],
        "proposed_code": null, "confidence": "high"
    });
    for agent in ["opencode", "qwen"] {
        let out = env.tmp.path().join(format!("{agent}.out"));
        fs::write(&out, advice_reply(agent, &advice.to_string())).unwrap();
        env.fake(
            agent,
            &format!(
                "{}\nenv > \"$FAKE_DIR/{agent}.env\"\ncat '{}'",
                crate::support::record(agent),
                out.display()
            ),
        );
        let r = env.run(&["ask", "--agent", agent, "why?"]);
        assert_eq!(r.code, 0, "{agent}: {}\n{}", r.stdout, r.stderr);
        let j = r.json();
        assert_eq!(j["advice"], advice, "{agent}: {j}");
        let argv = env.argv(agent);
        if agent == "qwen" {
            assert!(has_seq(&argv, &["--approval-mode", "plan"]), "{argv:?}");
            let i = argv.iter().position(|a| a == "--json-schema").unwrap();
            assert!(argv[i + 1].contains("recommendation"));
        } else {
            // Packet scope: every tool denied.
            assert!(has_seq(&argv, &["--agent", "baton-read-only"]), "{argv:?}");
            assert_eq!(
                read_only_agent(&env)["permission"],
                serde_json::json!({"*": "deny"})
            );
        }
    }
}

/// qwen fails a `--json-schema` turn answered in prose; `ask` treats it as
/// an invalid answer and repairs it once in the same session.
#[test]
fn ask_repairs_a_qwen_prose_answer() {
    let env = Env::new();
    let advice = serde_json::json!({
        "assessment": "a race", "recommendation": "add a lock", "alternatives": [],
        "risks": [], "verification_steps": [], "missing_context": [],
        "proposed_code": null, "confidence": "medium"
    });
    let first = crate::support::fixture("qwen/qwen-stream-json-schema-prose.jsonl");
    let second = env.tmp.path().join("second.out");
    fs::write(&second, advice_reply("qwen", &advice.to_string())).unwrap();
    let n = env.fake_dir.join("n");
    env.fake(
        "qwen",
        &format!(
            "{}\nif [ -f '{n}' ]; then cat '{}'; exit 0; fi\ntouch '{n}'\ncat '{}'\nexit 1",
            crate::support::record("qwen"),
            second.display(),
            first.display(),
            n = n.display()
        ),
    );
    let r = env.run(&["ask", "--agent", "qwen", "why?"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["advice"], advice, "{j}");
    assert_eq!(j["repair"]["mode"], "resume", "{j}");
    assert!(
        j["repair"]["first_answer"]
            .as_str()
            .unwrap()
            .starts_with("ASK-BAD")
    );
    // The repair went to the first run's session.
    assert!(has_seq(
        &env.argv("qwen"),
        &["--resume", "a27bb1eb-e706-47bd-82b9-dd39334fa66a"]
    ));
}

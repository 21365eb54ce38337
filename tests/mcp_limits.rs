//! What `baton mcp` lets a host's model do (issue 29 §1): a test command
//! only when the server allows it (and under `BATON_MAX_ACCESS` on the
//! command line the same), work only inside the server's roots (links
//! resolved), a task of any size (never through argv), and a tool list
//! within its budget.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::{Value, json};

use crate::mcp::Client;
use crate::support::{Env, fixture, record};

/// The error envelope of an error result.
fn refused(r: &Value) -> Value {
    assert_eq!(r["isError"], true, "{r}");
    assert!(r.get("structuredContent").is_none(), "{r}");
    serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap()
}

/// A fake codex that records its argv, stdin and working directory.
fn codex(env: &Env) {
    env.fake(
        "codex",
        &format!(
            "{}\npwd -P > \"$FAKE_DIR/codex.pwd\"\ncat '{}'",
            record("codex"),
            fixture("codex/codex-exec-basic.jsonl").display()
        ),
    );
}

/// Each tool that takes `test_cmd`, with the rest of a call that would run.
fn test_cmd_calls(cmd: &str) -> Vec<(&'static str, Value)> {
    vec![
        (
            "run",
            json!({"task": "t", "worktree": true, "test_cmd": cmd}),
        ),
        (
            "run",
            json!({"task": "t", "worktree": true, "test_cmd": cmd, "async": true}),
        ),
        (
            "run",
            json!({"task": "t", "agents": ["codex", "claude"], "test_cmd": cmd}),
        ),
        ("council_plan", json!({"task": "t", "test_cmd": cmd})),
        ("council_discuss", json!({"task": "t", "test_cmd": cmd})),
    ]
}

/// `test_cmd` is a shell command baton runs as the user outside any
/// sandbox: a server accepts it only with `--allow-test-cmd` or
/// `--allow-full-access`, and refuses it before anything starts.
#[test]
fn test_cmd_needs_a_server_that_allows_it() {
    let env = Env::new();
    crate::worktree::repo(&env);
    codex(&env);
    let pwned = env.tmp.path().join("pwned");
    let cmd = format!("touch {}", pwned.display());
    for args in [
        &[][..],
        &["--max-access", "read-only"][..],
        // Full access allowed, but capped below it: still refused.
        &["--allow-full-access", "--max-access", "workspace"][..],
    ] {
        let mut c = Client::spawn(crate::worktree::baton_cmd(
            &env,
            &[&["mcp"][..], args].concat(),
        ));
        c.initialize();
        for (tool, call) in test_cmd_calls(&cmd) {
            let e = refused(&c.call(tool, call.clone()));
            assert_eq!(e["error"]["kind"], "access_capped", "{args:?} {tool}: {e}");
            let msg = e["error"]["message"].as_str().unwrap();
            assert!(msg.contains("test_cmd"), "{msg}");
            let hint = e["error"]["hint"].as_str().unwrap();
            assert!(
                hint.contains("--allow-test-cmd") && hint.contains("--allow-full-access"),
                "{hint}"
            );
        }
        // The instructions say so up front.
        assert!(c.close().success());
    }
    assert!(!env.called("codex"), "a peer started");
    assert!(!pwned.exists(), "the test command ran");

    // Allowed: the check runs after the peer, as from a shell.
    for args in [&["--allow-test-cmd"][..], &["--allow-full-access"][..]] {
        let _ = fs::remove_file(&pwned);
        let mut c = Client::spawn(crate::worktree::baton_cmd(
            &env,
            &[&["mcp"][..], args].concat(),
        ));
        let init = c.initialize();
        let said = init["result"]["instructions"].as_str().unwrap();
        assert!(!said.contains("refuses `test_cmd`"), "{said}");
        let r = c.call(
            "run",
            json!({"task": "t", "worktree": true, "test_cmd": cmd, "agent": "codex"}),
        );
        assert_eq!(r["isError"], false, "{args:?}: {r}");
        assert!(pwned.exists(), "{args:?}: the test command did not run");
        assert!(c.close().success());
    }
    let mut c = Client::spawn(crate::worktree::baton_cmd(&env, &["mcp"]));
    let init = c.initialize();
    let said = init["result"]["instructions"].as_str().unwrap();
    assert!(said.contains("refuses `test_cmd`"), "{said}");
}

/// The same rule on the command line: under a `BATON_MAX_ACCESS` below
/// `full`, `--test-cmd` is refused for a worktree run, a fan-out and a
/// council alike, unless `BATON_ALLOW_TEST_CMD=1` (what `baton mcp
/// --allow-test-cmd` gives its calls) says it was allowed.
#[test]
fn test_cmd_is_refused_under_a_cap_below_full_on_the_command_line() {
    let env = Env::new();
    crate::worktree::repo(&env);
    codex(&env);
    let pwned = env.tmp.path().join("pwned");
    let cmd = format!("touch {}", pwned.display());
    let cases: [&[&str]; 4] = [
        &[
            "run",
            "--agent",
            "codex",
            "--worktree",
            "--test-cmd",
            &cmd,
            "t",
        ],
        &["run", "--agents", "codex,claude", "--test-cmd", &cmd, "t"],
        &["council", "plan", "--test-cmd", &cmd, "t"],
        &["council", "discuss", "--test-cmd", &cmd, "t"],
    ];
    for cap in ["workspace", "read-only", "bogus"] {
        for args in cases {
            let out = crate::worktree::baton_cmd(&env, args)
                .env("BATON_MAX_ACCESS", cap)
                .output()
                .unwrap();
            let e: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|_| panic!("{args:?}: {}", String::from_utf8_lossy(&out.stdout)));
            assert_eq!(e["error"]["kind"], "access_capped", "{cap} {args:?}: {e}");
            assert_ne!(out.status.code(), Some(0));
            let hint = e["error"]["hint"].as_str().unwrap();
            assert!(hint.contains("--allow-test-cmd"), "{hint}");
        }
    }
    assert!(!env.called("codex"), "a peer started");
    assert!(!pwned.exists(), "the test command ran");
    // A full cap, or one that allows test commands: the run goes on.
    for vars in [
        &[("BATON_MAX_ACCESS", "full")][..],
        &[
            ("BATON_MAX_ACCESS", "workspace"),
            ("BATON_ALLOW_TEST_CMD", "1"),
        ][..],
    ] {
        let _ = fs::remove_file(&pwned);
        let mut c = crate::worktree::baton_cmd(&env, cases[0]);
        c.envs(vars.iter().copied());
        let out = c.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{vars:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(pwned.exists(), "{vars:?}");
    }
}

/// A council's plan names its own test command (the chair's): under a cap
/// that does not allow test commands the council does not run it — it
/// stops before the writer, resumable, and goes on from a shell.
#[test]
fn a_plans_test_command_waits_for_a_shell_under_the_cap() {
    use crate::council::{AGENTS, good_scenario, review, setup};
    let (env, fake) = setup();
    let mut j = good_scenario().to_json();
    for a in AGENTS {
        j["agents"][a]["implement"] =
            json!([{"edits": [{"path": "a.txt", "content": "one\nlocked\n"}]}]);
        j["agents"][a]["review"] = json!([{"json": review("approve", json!([]))}]);
    }
    fake.write_json(&j);
    let mut c = Client::spawn(crate::worktree::baton_cmd(&env, &["mcp"]));
    c.initialize();
    let r = c.call(
        "council_plan",
        json!({"task": "lock it", "members": ["codex", "claude", "pi"], "yes": true,
               "execute": true}),
    );
    let e = refused(&r);
    assert_eq!(e["error"]["kind"], "access_capped", "{e}");
    assert!(
        e["error"]["message"].as_str().unwrap().contains("`true`"),
        "{e}"
    );
    assert!(
        fake.stage(crate::support::council::Stage::Implement)
            .is_empty(),
        "the writer started"
    );
    let list = env.run(&["council", "list"]).json();
    let id = list["councils"][0]["council_id"]
        .as_str()
        .unwrap()
        .to_string();
    let st = env.run(&["council", "status", &id]).json();
    assert_ne!(st["status"], "failed", "{st}");
    // From a shell (no cap), the approved plan goes on. The tool takes no
    // seed, so the labels fall at random: an adopted pi writer (no vendor
    // without --provider) ends `needs_human` after writing, as in
    // tests/council.rs; any other reaches `ready`.
    let r = env.run(&["council", "execute", &id]);
    let v = r.json();
    if v["label_map"]["A"]["agent"] == "pi" {
        assert_eq!(v["status"], "needs_human", "{v}");
    } else {
        assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    }
    assert!(
        !fake
            .stage(crate::support::council::Stage::Implement)
            .is_empty()
    );
}

/// `baton mcp --root DIR` (default: where the server started): a `cwd`
/// outside every root is refused after resolving links, for every tool that
/// takes one, and so is a file a call names for the command to read.
#[test]
fn a_cwd_outside_the_roots_is_refused_after_resolving_links() {
    let env = Env::new();
    codex(&env);
    let outside = env.tmp.path().join("outside");
    fs::create_dir_all(outside.join("deeper")).unwrap();
    fs::write(outside.join("secret.txt"), "s3cret\n").unwrap();
    fs::create_dir_all(env.work.join("sub")).unwrap();
    symlink(&outside, env.work.join("link")).unwrap();
    symlink(outside.join("secret.txt"), env.work.join("notes.txt")).unwrap();
    let home = env.tmp.path().to_str().unwrap().to_string();
    let bad = [
        "/etc".to_string(),
        home.clone(),
        "..".into(),
        "sub/../..".into(),
        "link".into(),
        "link/deeper".into(),
        outside.display().to_string(),
    ];
    let mut c = Client::spawn({
        let mut cmd = env.baton();
        cmd.arg("mcp").env("HOME", &home);
        cmd
    });
    c.initialize();
    for cwd in &bad {
        for (tool, args) in [
            ("run", json!({"task": "t", "cwd": cwd})),
            ("run", json!({"task": "t", "cwd": cwd, "async": true})),
            ("ask", json!({"question": "q", "cwd": cwd})),
            ("council_discuss", json!({"task": "t", "cwd": cwd})),
            ("council_plan", json!({"task": "t", "cwd": cwd})),
            ("council_approve", json!({"id": "x", "cwd": cwd})),
            ("council_execute", json!({"id": "x", "cwd": cwd})),
        ] {
            let e = refused(&c.call(tool, args));
            assert_eq!(e["error"]["kind"], "access_capped", "{tool} {cwd}: {e}");
            let msg = e["error"]["message"].as_str().unwrap();
            assert!(msg.contains("outside this server's roots"), "{msg}");
            assert!(
                e["error"]["hint"].as_str().unwrap().contains("--root"),
                "{e}"
            );
        }
    }
    // Files to read: by a path out, or a link in the root that leads out.
    for file in [
        "../outside/secret.txt",
        "notes.txt",
        "notes.txt:1-1",
        "/etc/passwd",
    ] {
        let e = refused(&c.call("ask", json!({"question": "q", "file": [file]})));
        assert_eq!(e["error"]["kind"], "access_capped", "{file}: {e}");
    }
    assert!(!env.called("codex"), "a peer started");

    // Inside: relative or absolute, the peer works in the directory itself.
    let r = c.call("run", json!({"task": "t", "cwd": "sub"}));
    assert_eq!(r["isError"], false, "{r}");
    let pwd = fs::read_to_string(env.fake_dir.join("codex.pwd")).unwrap();
    let sub = env.work.join("sub").canonicalize().unwrap();
    assert_eq!(Path::new(pwd.trim()), sub);
    drop(c);

    // Another root, given: it is allowed, the first one no longer is.
    let mut c = Client::spawn({
        let mut cmd = env.baton();
        cmd.arg("mcp").arg("--root").arg(&outside);
        cmd
    });
    let init = c.initialize();
    let said = init["result"]["instructions"].as_str().unwrap();
    assert!(
        said.contains(&outside.canonicalize().unwrap().display().to_string()),
        "{said}"
    );
    let r = c.call("run", json!({"task": "t", "cwd": outside.join("deeper")}));
    assert_eq!(r["isError"], false, "{r}");
    // The server's own directory is outside its root: a call must say where.
    let e = refused(&c.call("run", json!({"task": "t"})));
    assert_eq!(e["error"]["kind"], "access_capped", "{e}");
    assert!(e["error"]["hint"].as_str().unwrap().contains("cwd"), "{e}");
    // A root that does not exist is a usage error at start.
    let out = env
        .baton()
        .args(["mcp", "--root", "/nonexistent/baton-root"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A task (or any value) of 128 KiB or more: never on a command line
/// (`E2BIG`), it reaches the peer whole.
#[test]
fn a_task_of_256_kib_reaches_the_peer_intact() {
    let env = Env::new();
    codex(&env);
    let mut task = String::from("--begin; rm -rf / é\n");
    let mut i = 0u32;
    while task.len() < 256 << 10 {
        task.push_str(&format!("line {i}: the quick brown fox ✓ jumps\n"));
        i += 1;
    }
    task.push_str("END-OF-TASK");
    let mut c = Client::start(&env, &[]);
    c.initialize();
    let r = c.call(
        "run",
        json!({"task": task, "agent": "codex", "access": "read-only"}),
    );
    let head: String = r.to_string().chars().take(500).collect();
    assert_eq!(r["isError"], false, "{head}");
    assert_eq!(r["structuredContent"]["status"], "success");
    assert!(
        env.stdin("codex").contains(&task),
        "the task did not arrive whole"
    );
    assert!(c.close().success());
}

/// The budget (docs/mcp.md#size): `tools/list` at most 64 KiB, and what a
/// host puts in front of its model (each tool's name, description and
/// input schema) at most 12 KiB: 0.3.2's was 23,566 bytes, 15,365 with
/// each property described once; `job_start` folded into `run` (`async`)
/// and the model's own shorter texts (`mcp::wording`) bring it under.
#[test]
fn the_tool_list_stays_within_its_budget() {
    const LIST: usize = 64 << 10;
    const VISIBLE: usize = 12 << 10;
    let env = Env::new();
    let mut c = Client::start(&env, &[]);
    c.initialize();
    let list = c.request("tools/list", json!({}));
    let bytes = list.to_string().len();
    assert!(bytes <= LIST, "tools/list is {bytes} bytes");
    let visible: Vec<Value> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            json!({"name": t["name"], "description": t["description"],
                        "inputSchema": t["inputSchema"]})
        })
        .collect();
    let seen = Value::Array(visible).to_string().len();
    assert!(seen <= VISIBLE, "the model-visible part is {seen} bytes");
}

/// The handshake's instructions name every agent of the agent table (0.3.2
/// named six of twelve).
#[test]
fn the_instructions_name_every_agent() {
    let env = Env::new();
    let mut c = Client::start(&env, &[]);
    let init = c.initialize();
    let said = init["result"]["instructions"].as_str().unwrap();
    for a in baton::agent::Agent::ALL {
        assert!(said.contains(a.name()), "{} is not in: {said}", a.name());
    }
    assert!(c.close().success());
}

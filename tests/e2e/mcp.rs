//! `baton mcp` through a real MCP client: the MCP Inspector's command-line
//! mode (pinned in e2e/versions.env) lists the tools and calls `agents`,
//! `run` (a fake codex printing a recorded transcript), `run` with `async`
//! and `job_wait`. The Inspector's client checks every `structuredContent`
//! against the tool's `outputSchema` and fails the call when it does not
//! match, so a passing call is a schema-valid result.
//!
//! Real hosts (Claude Code, Codex, gemini-cli) calling baton's tools:
//! `mcp_hosts.rs`.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{BATON, cli_bin};

fn root(name: &str) -> PathBuf {
    let base = std::env::var_os("BATON_E2E_WORK")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("e2e"));
    let dir = base.join(name);
    let _ = fs::remove_dir_all(&dir);
    for d in ["bin", "work", "state"] {
        fs::create_dir_all(dir.join(d)).unwrap();
    }
    dir
}

/// `mcp-inspector --cli … baton mcp ARGS`: the JSON it printed.
fn inspect(dir: &Path, args: &[&str]) -> Value {
    let (code, v) = inspect_any(dir, args);
    assert_eq!(code, Some(0), "inspector {args:?}: {v}");
    v
}

/// The same, whatever the Inspector's exit code (5 for a tool's error
/// result, after printing it).
fn inspect_any(dir: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let out = Command::new(cli_bin().join("mcp-inspector"))
        .arg("--cli")
        .arg("--cwd")
        .arg(dir.join("work"))
        // The Inspector passes a server only a few variables of its own
        // environment (HOME, PATH, …): the rest is given with -e.
        .arg("-e")
        .arg(format!("BATON_STATE_DIR={}", dir.join("state").display()))
        .arg("-e")
        .arg(format!("BATON_CONFIG={}", dir.join("none.toml").display()))
        .arg(BATON)
        .arg("mcp")
        .args(args)
        .env(
            "PATH",
            format!(
                "{}:{}:/usr/local/bin:/usr/bin:/bin",
                dir.join("bin").display(),
                cli_bin().display()
            ),
        )
        .env("MCP_CATALOG_PATH", dir.join("catalog.json"))
        .env("HOME", dir)
        .output()
        .expect("run the MCP Inspector");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "inspector {args:?}: {e}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), v)
}

/// A call the server refused: the Inspector's tool-error exit, and
/// baton's error envelope in the result's text.
fn refused(dir: &Path, args: &[&str]) -> Value {
    let (code, r) = inspect_any(dir, args);
    assert_eq!(code, Some(5), "{args:?}: {r}");
    assert_eq!(r["isError"], true, "{r}");
    assert!(r.get("structuredContent").is_none(), "{r}");
    serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap()
}

#[test]
#[ignore = "e2e: needs the MCP Inspector (make e2e)"]
fn the_inspector_lists_and_calls_the_tools_and_results_match_their_schemas() {
    let dir = root("mcp-inspector");
    let fake = dir.join("bin/codex");
    let transcript =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex/codex-exec-basic.jsonl");
    fs::write(
        &fake,
        format!(
            "#!/bin/sh\ncat > /dev/null\ncat '{}'\n",
            transcript.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();

    let list = inspect(&dir, &["--method", "tools/list"]);
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for want in ["run", "job_wait", "agents", "ask", "council_plan"] {
        assert!(names.contains(&want), "{want} not in {names:?}");
    }
    // 0.3.2's `job_start` is `run` with `async` (MCP has no hidden tools).
    assert!(!names.contains(&"job_start"), "{names:?}");
    // Issue 29 §1's budgets, as a real client received the list: the whole
    // list within 64 KiB, what a host shows its model (name, description,
    // input schema) within 12 KiB (bench/mcp.py measures the same).
    let whole = serde_json::to_vec(&list).unwrap().len();
    let visible: Vec<Value> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            serde_json::json!({"name": t["name"], "description": t["description"],
                "inputSchema": t["inputSchema"]})
        })
        .collect();
    let visible = serde_json::to_vec(&visible).unwrap().len();
    assert!(whole <= 64 << 10, "tools/list is {whole} B");
    assert!(visible <= 12 << 10, "the model-visible part is {visible} B");

    let agents = inspect(&dir, &["--method", "tools/call", "--tool-name", "agents"]);
    assert!(agents["structuredContent"]["agents"].is_array(), "{agents}");

    let run = inspect(
        &dir,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "run",
            "--tool-arg",
            "task=say hi",
            "agent=codex",
            "access=read-only",
        ],
    );
    assert_eq!(run["isError"], false, "{run}");
    assert_eq!(run["structuredContent"]["status"], "success", "{run}");
    assert_eq!(
        run["structuredContent"]["message"],
        "Hi from the mock model!"
    );

    let started = inspect(
        &dir,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "run",
            "--tool-arg",
            "task=say hi",
            "agent=codex",
            "async=true",
        ],
    );
    assert_eq!(
        started["structuredContent"]["status"], "running",
        "{started}"
    );
    let id = started["structuredContent"]["job_id"].as_str().unwrap();
    let done = inspect(
        &dir,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "job_wait",
            "--tool-arg",
            &format!("id={id}"),
            "timeout=30s",
        ],
    );
    assert_eq!(done["structuredContent"]["status"], "success", "{done}");

    // The job tools and doctor: each result checked by the Inspector
    // against the tool's output schema (`baton schema job-status`, `jobs`,
    // `doctor`).
    let id_arg = format!("id={id}");
    for (tool, args) in [
        ("job_status", vec![id_arg.as_str()]),
        ("jobs", vec![]),
        ("doctor", vec!["agent=codex"]),
    ] {
        let mut a = vec!["--method", "tools/call", "--tool-name", tool];
        if !args.is_empty() {
            a.push("--tool-arg");
            a.extend(args);
        }
        let r = inspect(&dir, &a);
        assert_eq!(r["isError"], false, "{tool}: {r}");
        assert!(r["structuredContent"].is_object(), "{tool}: {r}");
    }
}

/// Issue 29 §1 through a real client: a server started without
/// `--allow-test-cmd` refuses a `test_cmd` (`run`, in the foreground and
/// with `async`, `council_plan`), and every server refuses a `cwd` outside its roots
/// (`/etc`; `..`; a link in the project that leads out), before anything
/// runs.
#[test]
#[ignore = "e2e: needs the MCP Inspector (make e2e)"]
fn the_inspector_sees_test_cmd_and_a_cwd_outside_the_roots_refused() {
    let dir = root("mcp-inspector-limits");
    let ran = dir.join("ran");
    fs::write(
        dir.join("bin/codex"),
        format!("#!/bin/sh\ntouch '{}'\ncat > /dev/null\n", ran.display()),
    )
    .unwrap();
    fs::set_permissions(dir.join("bin/codex"), fs::Permissions::from_mode(0o755)).unwrap();
    let pwned = dir.join("pwned");
    let test_cmd = format!("test_cmd=touch {}", pwned.display());
    for (tool, more) in [
        ("run", "async=false"),
        ("run", "async=true"),
        ("council_plan", "yes=false"),
    ] {
        let e = refused(
            &dir,
            &[
                "--method",
                "tools/call",
                "--tool-name",
                tool,
                "--tool-arg",
                "task=t",
                &test_cmd,
                more,
            ],
        );
        assert_eq!(e["error"]["kind"], "access_capped", "{tool}: {e}");
        assert!(
            e["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("--allow-test-cmd"),
            "{e}"
        );
    }
    std::os::unix::fs::symlink("/etc", dir.join("work/etc-link")).unwrap();
    for cwd in ["/etc", "..", "etc-link"] {
        for (tool, first) in [("run", "task=t"), ("ask", "question=q")] {
            let e = refused(
                &dir,
                &[
                    "--method",
                    "tools/call",
                    "--tool-name",
                    tool,
                    "--tool-arg",
                    first,
                    &format!("cwd={cwd}"),
                ],
            );
            assert_eq!(e["error"]["kind"], "access_capped", "{tool} {cwd}: {e}");
            assert!(
                e["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("outside this server's roots"),
                "{e}"
            );
        }
    }
    assert!(!ran.exists(), "a peer started");
    assert!(!pwned.exists(), "the test command ran");
}

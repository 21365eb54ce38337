//! Issue 29 against the ACP fake (`support/fake_acp.py` replaying copilot's
//! recordings, edited): the workspace policy follows links as the kernel
//! does (§2), and an agent's answer is bounded however many chunks it
//! streams (§4).

use std::fs;
use std::os::unix::fs::symlink;

use serde_json::Value;

use crate::acp::replay;
use crate::support::{Env, fixture, git};

/// copilot's recorded edit of `out.txt` (allowed in workspace access), made
/// an edit of `path` (relative to the session's working directory): the
/// fake writes it where the kernel takes that path once baton allows it.
fn edit_of(env: &Env, path: &str) -> std::path::PathBuf {
    let recorded = fs::read_to_string(fixture("acp/copilot/write-allowed.acp")).unwrap();
    let rec = env.fake_dir.join("edit.acp");
    fs::write(
        &rec,
        recorded.replace(
            "/home/user/proj/out.txt",
            &format!("/home/user/proj/{path}"),
        ),
    )
    .unwrap();
    rec
}

/// The repository: a committed `link -> <outside>/sub` and
/// `dangling -> <outside>/file` (which does not exist).
fn linked_repo() -> (Env, std::path::PathBuf) {
    let env = Env::new();
    env.git_init();
    let outside = env.tmp.path().join("outside");
    fs::create_dir_all(outside.join("sub")).unwrap();
    symlink(outside.join("sub"), env.work.join("link")).unwrap();
    symlink(outside.join("file"), env.work.join("dangling")).unwrap();
    git(&env.work, &["add", "link", "dangling"]);
    git(&env.work, &["commit", "-qm", "links"]);
    (env, outside)
}

fn run_workspace(env: &Env) -> Value {
    let r = env.run(&[
        "run",
        "--agent",
        "copilot",
        "--access",
        "workspace",
        "--timeout",
        "60s",
        "write it",
    ]);
    let j = r.json();
    assert_eq!(
        (r.code, j["status"].as_str()),
        (0, Some("success")),
        "{j}\n{}",
        r.stderr
    );
    j
}

/// On 0.3.2 both edits were allowed and the agent wrote both files outside
/// the repository (`changed_files: []`).
#[test]
fn an_edit_through_a_link_then_dotdot_or_a_dangling_link_is_refused() {
    for (path, lands) in [("link/../escaped.txt", "escaped.txt"), ("dangling", "file")] {
        let (env, outside) = linked_repo();
        let rec = edit_of(&env, path);
        let env = replay(env, &rec, "--any-answer");
        let j = run_workspace(&env);
        assert!(
            !outside.join(lands).exists(),
            "{path}: the agent wrote {} outside the repository: {j}",
            outside.join(lands).display()
        );
        let d = j["denials"].as_array().expect("denials");
        assert_eq!(d.len(), 1, "{path}: {j}");
        let detail = d[0]["detail"].as_str().unwrap();
        assert!(
            detail.contains(path) && detail.contains("outside the workspace"),
            "{detail}"
        );
        assert_eq!(j["changed_files"], serde_json::json!([]), "{j}");
    }
}

/// The same recording with a path inside: allowed and written (the fake
/// and the edit above are not refused for another reason).
#[test]
fn the_same_edit_inside_the_workspace_is_allowed() {
    let (env, _) = linked_repo();
    fs::create_dir(env.work.join("dir")).unwrap();
    let rec = edit_of(&env, "dir/../inside.txt");
    let env = replay(env, &rec, "--any-answer");
    let j = run_workspace(&env);
    assert_eq!(
        fs::read_to_string(env.work.join("inside.txt")).unwrap(),
        "x\n"
    );
    assert_eq!(j["changed_files"], serde_json::json!(["inside.txt"]), "{j}");
}

/// copilot's plain answer with `chunks` more chunks of `chunk` streamed
/// before it: the answer then ends with the recorded text.
fn flood(env: &Env, chunks: usize, chunk: &str) -> std::path::PathBuf {
    let recorded = fs::read_to_string(fixture("acp/copilot/plain.acp")).unwrap();
    let mut lines: Vec<String> = recorded.lines().map(str::to_string).collect();
    let answer = lines
        .iter()
        .position(|l| l.contains("PLAIN-ANSWER"))
        .expect("the recorded answer");
    let sid = "af4c8f75-a42b-46f5-a391-0dffc6e24872";
    let one = format!(
        "<< {}",
        serde_json::json!({"jsonrpc": "2.0", "method": "session/update", "params": {
            "sessionId": sid, "update": {"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": chunk}}}})
    );
    lines.splice(answer..answer, std::iter::repeat_n(one, chunks));
    let rec = env.fake_dir.join("flood.acp");
    fs::write(&rec, lines.join("\n") + "\n").unwrap();
    rec
}

/// 0.3.2 kept every chunk (1M chunks: a 100 MB `message`, 200 MB RSS):
/// the answer keeps its last MiB, with a warning; the log keeps it all.
#[test]
fn an_answer_of_endless_chunks_keeps_its_last_mib_and_says_so() {
    let env = Env::new();
    env.git_init();
    let chunk = "y".repeat(999) + "\n";
    let rec = flood(&env, 2560, &chunk);
    let env = replay(env, &rec, "");
    let r = env.run(&["run", "--agent", "copilot", "--timeout", "60s", "hello"]);
    let j = r.json();
    assert_eq!((r.code, j["status"].as_str()), (0, Some("success")), "{j}");
    let m = j["message"].as_str().unwrap();
    assert!(m.len() <= 1 << 20, "message of {} bytes", m.len());
    assert!(m.len() > (1 << 20) - 1000, "message of {} bytes", m.len());
    assert!(
        m.ends_with("yyy\nPLAIN-ANSWER: hello from the mock model."),
        "{}",
        &m[m.len() - 80..]
    );
    let total = 2560 * 1000 + "PLAIN-ANSWER: hello from the mock model.".len();
    let w = j["warnings"].to_string();
    assert!(
        w.contains(&format!("the agent's answer was {total} bytes")) && w.contains("last 1024 KiB"),
        "{w}"
    );
    let log = fs::metadata(j["log_path"].as_str().unwrap()).unwrap().len();
    assert!(log > 2560 * 1000, "the log keeps every chunk: {log} bytes");
}

//! Background jobs against each real CLI: `run --async` answers at once, the
//! job outlives the caller, `wait` brings the real result, `continue`
//! resumes the real session, `cancel` leaves nothing running.

use std::fs;
use std::time::Duration;

use crate::support::{Agent, Peer, eventually, tagged_processes, turns};

/// `run --async` then `wait`: the same result `run` gives, with the job id.
fn async_then_wait(agent: Agent) {
    let p = Peer::new(agent, "job-wait");
    let (id, task) = p.prompt("E2E-PLAIN");
    let s = p.baton().args(["--async"]).access("workspace").run(&task);
    assert_eq!((s.code, s.status()), (0, "running"), "{}", s.dump());
    // It answered before the peer could have finished (node CLIs take seconds).
    assert!(s.took < Duration::from_secs(2), "{}", s.dump());
    let job = s.json["job_id"].as_str().expect("job_id").to_string();
    let w = p.baton_exact(&["wait", &job, "--timeout", agent.guard_timeout()]);
    assert_eq!((w.code, w.status()), (0, "success"), "{}", w.dump());
    assert_eq!(w.json["job_id"], job.as_str());
    assert_eq!(
        w.message().trim(),
        "PLAIN-ANSWER: hello from the mock model.",
        "{}",
        w.dump()
    );
    assert!(!w.session().is_empty());
    assert_eq!(turns(&id).len(), 1);
    let logs = p.baton_exact(&["logs", &job]);
    assert!(
        logs.stdout
            .contains("» PLAIN-ANSWER: hello from the mock model."),
        "{}",
        logs.stdout
    );
    assert!(
        logs.stdout
            .lines()
            .last()
            .unwrap_or("")
            .starts_with("── success")
    );
}

/// `continue`: a second job resumes the first one's session with the same
/// agent, access and cwd; the CLI re-sends the first turn.
fn async_continue(agent: Agent) {
    let p = Peer::new(agent, "job-continue");
    let (_, first) = p.prompt("E2E-REMEMBER codeword=PAPAYA-7");
    let a = p.baton().args(["--async"]).access("workspace").run(&first);
    let job = a.json["job_id"].as_str().expect("job_id").to_string();
    let a = p.baton_exact(&["wait", &job]);
    assert_eq!((a.code, a.status()), (0, "success"), "{}", a.dump());
    let session = a.session();

    let (ws_id, ws) = p.prompt("E2E-WRITE");
    let c = p.baton_exact(&["continue", &job, &ws]);
    assert_eq!((c.code, c.status()), (0, "running"), "{}", c.dump());
    let next = c.json["job_id"].as_str().unwrap().to_string();
    let w = p.baton_exact(&["wait", &next]);
    assert_eq!((w.code, w.status()), (0, "success"), "{}", w.dump());
    assert_eq!(w.session(), session, "{}", w.dump());
    let t = turns(&ws_id);
    assert!(!t.is_empty(), "{}", w.dump());
    assert!(
        t[0].raw_body.contains("PAPAYA-7"),
        "the continued request must carry the first turn"
    );
    // Workspace access carried over: the peer could write.
    assert_eq!(
        fs::read_to_string(p.work.join("out.txt")).ok().as_deref(),
        Some("written by the peer\n"),
        "{}",
        w.dump()
    );
}

/// `cancel` while the model is answering: cancelled, exit 130, and nothing
/// of the job (runner, CLI, its children) is left.
fn async_cancel(agent: Agent) {
    let p = Peer::new(agent, "job-cancel");
    let (id, task) = p.prompt("E2E-SLOW");
    let s = p.baton().args(["--async"]).access("workspace").run(&task);
    let job = s.json["job_id"].as_str().expect("job_id").to_string();
    assert!(
        // opencode and qwen can take over a minute to start on a loaded machine.
        eventually(Duration::from_secs(300), || {
            turns(&id).iter().any(|r| r.scenario == "slow")
        }),
        "the model never got the request"
    );
    assert!(
        tagged_processes(&s.tag).len() >= 2,
        "the runner and the peer should be running"
    );
    let c = p.baton_exact(&["cancel", &job]);
    assert_eq!((c.code, c.status()), (130, "cancelled"), "{}", c.dump());
    assert!(
        eventually(Duration::from_secs(2), || tagged_processes(&s.tag)
            .is_empty()),
        "processes left after cancel: {:?}",
        tagged_processes(&s.tag)
    );
    let again = p.baton_exact(&["cancel", &job]);
    assert_eq!(again.json, c.json);
}

per_agent!(
    [codex => Codex, claude => Claude, zai => Zai, pi => Pi, gemini_cli => GeminiCli,
     opencode => Opencode, qwen => Qwen]
    async_then_wait, async_continue, async_cancel
);

//! baton's own sandbox around real CLIs that have none (issue 31 part 2):
//! in workspace access pi, opencode, qwen, gemini-cli and Copilot CLI over
//! ACP edit a file AND run the project's tests (`check.sh`), which before
//! the sandbox they could not (qwen, gemini-cli, ACP) or did unconfined
//! (pi, opencode); a write to the home directory from that same shell is
//! refused by the file system. In read-only access the same CLIs get the
//! same switches (their shell runs), and their writes to the checkout, by
//! the edit tool and by the shell, fail by the file system, not by a tool
//! list.

use crate::support::{Agent, Peer};

fn edits_and_runs_the_tests(agent: Agent) {
    let p = Peer::new(agent, "sbx-ws");
    let (_id, task) = p.prompt("E2E-SBX");
    let o = p.baton().access("workspace").run(&task);
    assert_eq!((o.code, o.status()), (0, "success"), "{}", o.dump());
    let by = o.json["sandbox"]["by"].as_str().unwrap_or_default();
    assert!(
        by == "baton-bwrap" || by == "baton-landlock",
        "not under baton's sandbox\n{}",
        o.dump()
    );
    assert!(p.work.join("out.txt").exists(), "{}", o.dump());
    // 42 only appears if the shell really evaluated the project's script.
    let m = o.message();
    assert!(m.contains("CHECK-OK 42"), "{}", o.dump());
    assert!(p.work.join("ran.txt").exists(), "{}", o.dump());
    assert!(m.contains("HOME-REFUSED"), "{}", o.dump());
    assert!(m.contains(&format!("SBX={by}")), "{}", o.dump());
    assert!(!p.home.join("planted.txt").exists());
    assert!(o.denials().is_empty(), "{}", o.dump());
}

per_agent!([
    pi => Pi,
    opencode => Opencode,
    qwen => Qwen,
    gemini_cli => GeminiCli,
    copilot => Copilot,
] edits_and_runs_the_tests);

fn read_only_is_held_by_the_file_system(agent: Agent) {
    let p = Peer::new(agent, "sbx-ro");
    let (_id, task) = p.prompt("E2E-FSRO");
    let o = p.baton().access("read-only").run(&task);
    assert_eq!((o.code, o.status()), (0, "success"), "{}", o.dump());
    let by = o.json["sandbox"]["by"].as_str().unwrap_or_default();
    assert!(
        by == "baton-bwrap" || by == "baton-landlock",
        "not under baton's sandbox\n{}",
        o.dump()
    );
    // Neither the edit tool nor the shell wrote the checkout.
    assert!(!p.work.join("ro.txt").exists(), "{}", o.dump());
    assert!(!p.work.join("ro-shell.txt").exists(), "{}", o.dump());
    let m = o.message();
    // The shell ran (no tool list refused it) and the kernel refused the write.
    assert!(m.contains("RO-REFUSED"), "{}", o.dump());
    assert!(m.contains("READ-OK"), "{}", o.dump());
    assert!(m.contains(&format!("SBX={by}")), "{}", o.dump());
    assert!(o.denials().is_empty(), "{}", o.dump());
}

per_agent!([
    pi => Pi,
    opencode => Opencode,
    qwen => Qwen,
    gemini_cli => GeminiCli,
    copilot => Copilot,
] read_only_is_held_by_the_file_system);

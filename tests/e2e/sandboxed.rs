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

/// `--network provider` (measured per CLI, docs/sandbox.md): the CLI must
/// reach the mock through baton's proxy (the mock's host allowed), and its
/// shell's direct connection to another 127.0.0.1 port must fail. pi and
/// opencode name the mock in a config file, so it is given as
/// `--network-host`; qwen, gemini-cli and Copilot CLI name it in a
/// `*_BASE_URL` variable, which baton allows by itself.
fn provider_network(agent: Agent) {
    let p = Peer::new(agent, "sbx-net");
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = other.local_addr().unwrap().port();
    std::fs::write(
        p.work.join("probe-net.sh"),
        format!(
            "if /usr/bin/python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 3)' 2>/dev/null; \
             then echo DIRECT-CONNECTED; else echo DIRECT-REFUSED; fi\n"
        ),
    )
    .unwrap();
    let (_id, task) = p.prompt("E2E-NET");
    let mut b = p
        .baton()
        .access("workspace")
        .args(["--network", "provider"]);
    if matches!(agent, Agent::Pi | Agent::Opencode) {
        let host = crate::support::mock().url().replace("http://", "");
        b = b.args(["--network-host".to_string(), host]);
    }
    let o = b.run(&task);
    assert_eq!(o.json["sandbox"]["network"], "provider", "{}", o.dump());
    assert_eq!((o.code, o.status()), (0, "success"), "{}", o.dump());
    let m = o.message();
    assert!(m.contains("DIRECT-REFUSED"), "{}", o.dump());
    // What else each CLI asked for, refused (measured): opencode its npm
    // registry, qwen its telemetry (Alibaba Cloud RUM); never the mock.
    let refused: Vec<&str> = o.json["sandbox"]["refused_hosts"]
        .as_array()
        .map(|a| a.iter().filter_map(|h| h.as_str()).collect())
        .unwrap_or_default();
    let mock = crate::support::mock().url().replace("http://", "");
    let expected = |h: &&str| match agent {
        Agent::Opencode => *h == "registry.npmjs.org:443",
        Agent::Qwen => h.ends_with(".aliyuncs.com:443"),
        _ => false,
    };
    assert!(
        !refused.contains(&mock.as_str()) && refused.iter().all(expected),
        "{}",
        o.dump()
    );
    drop(other);
}

per_agent!([
    pi => Pi,
    opencode => Opencode,
    qwen => Qwen,
    gemini_cli => GeminiCli,
    copilot => Copilot,
] provider_network);

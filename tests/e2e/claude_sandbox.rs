//! claude's own OS sandbox (bubblewrap + socat on Linux): with workspace
//! access a peer can run the project's commands; read-only it cannot; full
//! access as root works because baton sets IS_SANDBOX=1.

use crate::support::{Agent, Peer, turns};

fn bash(access: &str) -> (Peer, String, crate::support::Outcome) {
    let p = Peer::new(Agent::Claude, &format!("bash-{access}"));
    let (id, task) = p.prompt("E2E-BASH");
    let o = p.baton().access(access).run(&task);
    (p, id, o)
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn workspace_peer_runs_the_project_tests() {
    assert!(
        which("bwrap") && which("socat"),
        "bubblewrap and socat must be installed (scripts/e2e-install.sh does it)"
    );
    let (p, id, o) = bash("workspace");
    assert_eq!((o.code, o.status()), (0, "success"), "{}", o.dump());
    // 42 only appears if the shell really evaluated the script.
    assert!(o.message().contains("CHECK-OK 42"), "{}", o.dump());
    assert!(p.work.join("ran.txt").exists());
    assert!(o.denials().is_empty(), "{}", o.dump());
    // The command ran inside claude's own sandbox, not merely with permission.
    let log = std::fs::read_to_string(o.json["log_path"].as_str().unwrap()).unwrap();
    assert!(log.contains("\"sandbox_enabled\":true"), "{}", o.dump());
    let warnings = o.json["warnings"].to_string();
    assert!(!warnings.contains("sandbox needs"), "{}", o.dump());
    assert_eq!(turns(&id).len(), 2);
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn read_only_peer_cannot_run_commands() {
    let (p, id, o) = bash("read-only");
    assert_eq!((o.code, o.status()), (0, "success"), "{}", o.dump());
    assert!(!o.message().contains("CHECK-OK 42"), "{}", o.dump());
    assert!(!p.work.join("ran.txt").exists());
    assert!(
        !o.denials().is_empty(),
        "the refused command must show in denials\n{}",
        o.dump()
    );
    assert_eq!(
        turns(&id).len(),
        2,
        "the model asked and got the refusal back"
    );
}

#[test]
#[ignore = "e2e: needs the real CLIs (make e2e)"]
fn full_access_as_root_runs_commands() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let (p, _id, o) = bash("full");
    assert_eq!((o.code, o.status()), (0, "success"), "{}", o.dump());
    assert!(o.message().contains("CHECK-OK 42"), "{}", o.dump());
    assert!(p.work.join("ran.txt").exists());
    if root {
        // Without IS_SANDBOX=1 claude refuses --dangerously-skip-permissions as root.
        assert!(
            !o.stdout.contains("cannot be used with root"),
            "{}",
            o.dump()
        );
    }
}

fn which(p: &str) -> bool {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .chain(["/usr/bin".into(), "/bin".into()])
        .any(|d| d.join(p).is_file())
}

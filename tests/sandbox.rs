//! The sandbox baton owns (src/sandbox/, docs/sandbox.md) against a hostile
//! peer (`tests/support/hostile.py`): every escape it tries fails where the
//! mode says it must, and the work a peer is there for still works.
//!
//! Each case runs `baton __sandbox-exec` with a `wrap` stage and a policy
//! built by the library's own `Policy::new` (the seam the launcher uses), on
//! a backend named outright: bubblewrap and Landlock are both proven on a
//! machine that has both. A backend the kernel refuses is skipped, saying
//! which and why.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use baton::sandbox::{Limits, Mode, Network, Policy};
use serde_json::{Value, json};

use crate::support::{BATON, fixture, git, wait_for};

const PYTHON: &str = "/usr/bin/python3";

/// The places a hostile peer attacks, and the processes it aims at.
struct Scene {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    user: PathBuf,
    ws: PathBuf,
    sibling: PathBuf,
    tmp: PathBuf,
    victim: Child,
    _port: std::net::TcpListener,
    port: u16,
    _agent: UnixListener,
    _docker: UnixListener,
}

impl Drop for Scene {
    fn drop(&mut self) {
        let _ = self.victim.kill();
        let _ = self.victim.wait();
    }
}

impl Scene {
    fn new() -> Scene {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        let mk = |p: &str| {
            let p = root.join(p);
            fs::create_dir_all(&p).unwrap();
            p
        };
        let (home, user, ws, sibling, tmp) =
            (mk("home"), mk("user"), mk("ws"), mk("sibling"), mk("tmp"));
        fs::create_dir_all(home.join(".ssh")).unwrap();
        fs::write(home.join(".ssh/id_ed25519"), "SECRET key\n").unwrap();
        fs::write(sibling.join("outside.txt"), "outside\n").unwrap();
        for (repo, text) in [
            (&user, "the user's checkout\n"),
            (&ws, "the writer's checkout\n"),
        ] {
            git(repo, &["init", "-q"]);
            fs::write(repo.join("README"), text).unwrap();
            git(repo, &["add", "README"]);
            git(repo, &["commit", "-q", "-m", "init"]);
        }
        let victim = Command::new("sleep")
            .arg("120")
            .env("VICTIM_SECRET", "1")
            .spawn()
            .unwrap();
        let port_l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = port_l.local_addr().unwrap().port();
        let agent = UnixListener::bind(root.join("agent.sock")).unwrap();
        let docker = UnixListener::bind(root.join("docker.sock")).unwrap();
        Scene {
            _dir: dir,
            root,
            home,
            user,
            ws,
            sibling,
            tmp,
            victim,
            _port: port_l,
            port,
            _agent: agent,
            _docker: docker,
        }
    }

    fn config(&self) -> Value {
        json!({
            "home": self.home, "user_checkout": self.user, "checkout": self.ws,
            "sibling": self.sibling, "outside_file": self.sibling.join("outside.txt"),
            "tmp": self.tmp, "victim_pid": self.victim.id(), "port": self.port,
            "agent_socket": self.root.join("agent.sock"),
            "docker_socket": self.root.join("docker.sock"),
            "outlive_lock": self.tmp.join("outlive.lock"),
            "outlive_late": self.tmp.join("late"),
            "outlive_go": self.tmp.join("outlive.go"), "fork_bomb": 200, "fill_bytes": 4 << 20,
        })
    }

    /// The policy a launcher would build: the standard secrets of this home,
    /// the agent socket named in the environment, a docker socket.
    fn policy(&self, mode: Mode, network: Network) -> Policy {
        let env = vec![("SSH_AUTH_SOCK".into(), self.root.join("agent.sock").into())];
        let mut p = Policy::new(mode, self.tmp.clone(), Some(&self.home), &env)
            .with_workspace(self.ws.clone());
        p.hidden.push(self.root.join("docker.sock"));
        p.network = network;
        p.limits = Limits {
            max_procs: Some(64),
            max_file_bytes: Some(1 << 20),
            tmp_bytes: None,
        };
        p
    }

    /// hostile.py under `backend` (`bwrap` or `landlock`): the report baton
    /// printed and the attempts' outcomes.
    fn run(&self, backend: &str, policy: &Policy, only: &[&str]) -> (Value, Value) {
        let args = json!({"stage": {"wrap": {"backend": backend}}, "policy": policy});
        let out = Command::new(BATON)
            .arg("__sandbox-exec")
            .arg(args.to_string())
            .arg("--")
            .arg(PYTHON)
            .arg(fixture("../support/hostile.py"))
            .arg(self.config().to_string())
            .args(only)
            .current_dir(&self.ws)
            .env("SSH_AUTH_SOCK", self.root.join("agent.sock"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let report = stderr
            .lines()
            .find_map(|l| serde_json::from_str::<Value>(l).ok())
            .unwrap_or_else(|| panic!("no report on stderr: {stderr}"));
        let results = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("{e}: stdout {stdout}\nstderr {stderr}"));
        (report, results)
    }
}

/// Whether `backend` confines `true` here; why not, printed, when the
/// kernel cannot (no user namespaces for bubblewrap, no Landlock). Any other
/// failure is the sandbox's, and fails the test.
pub(crate) fn works(backend: &str) -> bool {
    if !Path::new(PYTHON).exists() {
        eprintln!("skipped: the hostile peer needs {PYTHON}");
        return false;
    }
    let d = tempfile::tempdir().unwrap();
    let p = Policy::new(Mode::ReadOnly, d.path().to_path_buf(), None, &[]);
    let args = json!({"stage": {"wrap": {"backend": backend}}, "policy": p});
    let out = Command::new(BATON)
        .args(["__sandbox-exec", &args.to_string(), "--", "true"])
        .output()
        .unwrap();
    if out.status.success() {
        return true;
    }
    let err = String::from_utf8_lossy(&out.stderr);
    // CI installs bubblewrap (.ci/run): a missing one there is a CI fault,
    // not the kernel's.
    assert!(
        std::env::var_os("CI").is_none() || !err.contains("is not installed"),
        "the {backend} sandbox is missing under CI: {err}"
    );
    let kernel = [
        "the kernel enforced nothing",
        "bwrap failed here",
        "is not installed",
    ];
    assert!(
        kernel.iter().any(|k| err.contains(k)),
        "the {backend} sandbox fails for a reason of its own: {err}"
    );
    eprintln!(
        "skipped: the kernel refuses the {backend} sandbox here: {}",
        err.trim()
    );
    false
}

fn done(results: &Value, name: &str) -> bool {
    results[name]["done"]
        .as_bool()
        .unwrap_or_else(|| panic!("no attempt {name} in {results}"))
}

fn degraded(report: &Value, what: &str) -> bool {
    report["degraded"]
        .as_array()
        .is_some_and(|d| d.iter().any(|x| x == what))
}

/// What must hold in every mode, for both backends.
fn assert_contained(scene: &Scene, backend: &str, report: &Value, r: &Value) {
    assert!(
        r.get("timeout").is_none(),
        "{backend}: hostile.py hung: {r}"
    );
    let by = format!("baton-{backend}");
    assert_eq!(report["by"], by.as_str(), "{report}");
    for name in [
        "write_home",
        "write_sibling",
        "write_user_checkout",
        "symlink_escape",
        "hardlink_escape",
        "rename_escape",
        "git_hooks",
        "git_config",
        "read_ssh",
        "read_environ",
        "kill",
        "ptrace",
        "syscalls",
        "tiocsti",
        "unshare_user",
        "inner_bwrap",
        "fill_file",
    ] {
        assert!(!done(r, name), "{backend}: {name} got through: {}", r[name]);
    }
    // RLIMIT_NPROC binds everyone but root (docs/sandbox.md).
    assert!(
        !done(r, "fork_bomb") || degraded(report, "no_process_limit"),
        "{backend}: fork_bomb: {}",
        r["fork_bomb"]
    );
    // What is not contained is said in the report, and only then.
    for (name, weakness) in [
        ("ssh_agent", "unix_sockets_reachable"),
        ("docker_sock", "unix_sockets_reachable"),
    ] {
        assert!(
            !done(r, name) || degraded(report, weakness),
            "{backend}: {name}: {}",
            r[name]
        );
    }
    assert!(done(r, "write_tmp"), "{}", r["write_tmp"]);
    assert!(done(r, "read_repo"), "{}", r["read_repo"]);
    assert!(
        done(r, "connect_port"),
        "network all: {}",
        r["connect_port"]
    );
    // Nothing reached the host.
    for p in [
        scene.home.join("planted"),
        scene.sibling.join("planted"),
        scene.sibling.join("via-link"),
        scene.sibling.join("moved"),
        scene.user.join("planted"),
        scene.user.join(".git/hooks/post-checkout"),
    ] {
        assert!(!p.exists(), "{backend}: {} exists", p.display());
    }
    assert!(
        !fs::read_to_string(scene.user.join(".git/config"))
            .unwrap()
            .contains("evil")
    );
    assert_eq!(
        fs::read_to_string(scene.sibling.join("outside.txt")).unwrap(),
        "outside\n"
    );
    assert!(crate::support::pid_alive(scene.victim.id() as i32));
}

/// The detached grandchild: dead with the run (bubblewrap's PID namespace),
/// or alive and reported (`no_pid_namespace`), then stopped here.
fn assert_outlive(scene: &Scene, backend: &str, report: &Value, r: &Value) {
    assert!(done(r, "outlive"), "{}", r["outlive"]);
    let lock = scene.tmp.join("outlive.lock");
    // The run has ended: a grandchild still alive writes `late` now.
    fs::write(scene.tmp.join("outlive.go"), "").unwrap();
    let free = || {
        let f = fs::File::open(&lock).unwrap();
        f.try_lock().is_ok()
    };
    if degraded(report, "no_pid_namespace") {
        // The escape the report admits: the grandchild writes after the run.
        assert!(
            wait_for(Duration::from_secs(10), || scene.tmp.join("late").exists()),
            "{backend}: no_pid_namespace reported but nothing outlived the run"
        );
        let pid = fs::read_to_string(&lock).unwrap();
        let _ = Command::new("kill")
            .args(["-9", pid.trim()])
            .stderr(Stdio::null())
            .status();
    } else {
        assert!(
            wait_for(Duration::from_secs(5), free),
            "{backend}: a descendant outlived the run"
        );
        // The lock is free: the grandchild is dead, and had it seen the
        // go file it would have written `late` before letting go.
        assert!(
            !scene.tmp.join("late").exists(),
            "{backend}: the grandchild wrote after the run"
        );
    }
}

fn workspace(backend: &str) {
    if !works(backend) {
        return;
    }
    let scene = Scene::new();
    let (report, r) = scene.run(backend, &scene.policy(Mode::Workspace, Network::All), &[]);
    assert_contained(&scene, backend, &report, &r);
    assert_outlive(&scene, backend, &report, &r);
    // The work a writer is there for.
    assert!(done(&r, "write_checkout"), "{}", r["write_checkout"]);
    assert!(done(&r, "git_commit"), "{}", r["git_commit"]);
    let log = Command::new("git")
        .args(["-C"])
        .arg(&scene.ws)
        .args(["log", "--format=%s"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&log.stdout), "peer\ninit\n");
    // The checkout's git metadata that baton's own git calls obey.
    for name in ["own_git_config", "own_git_hooks"] {
        assert!(
            !done(&r, name) || degraded(&report, "git_metadata_writable"),
            "{name}: {}",
            r[name]
        );
    }
}

fn read_only(backend: &str) {
    if !works(backend) {
        return;
    }
    let scene = Scene::new();
    let (report, r) = scene.run(backend, &scene.policy(Mode::ReadOnly, Network::All), &[]);
    assert_contained(&scene, backend, &report, &r);
    assert_outlive(&scene, backend, &report, &r);
    for name in [
        "write_checkout",
        "git_commit",
        "own_git_config",
        "own_git_hooks",
    ] {
        assert!(!done(&r, name), "{backend} read-only: {name}: {}", r[name]);
    }
    assert!(!scene.ws.join("written.txt").exists());
}

fn network_none(backend: &str) {
    if !works(backend) {
        return;
    }
    let scene = Scene::new();
    let (report, r) = scene.run(
        backend,
        &scene.policy(Mode::ReadOnly, Network::None),
        &["connect_port", "write_tmp"],
    );
    assert_eq!(report["network"], "none");
    assert!(!done(&r, "connect_port"), "{}", r["connect_port"]);
    assert!(done(&r, "write_tmp"));
}

#[test]
fn bwrap_workspace_holds_and_lets_the_writer_commit() {
    workspace("bwrap");
}

#[test]
fn bwrap_read_only_holds() {
    read_only("bwrap");
}

#[test]
fn bwrap_network_none_reaches_no_port() {
    network_none("bwrap");
}

#[test]
fn landlock_workspace_holds_and_lets_the_writer_commit() {
    workspace("landlock");
}

#[test]
fn landlock_read_only_holds() {
    read_only("landlock");
}

#[test]
fn landlock_network_none_reaches_no_port() {
    network_none("landlock");
}

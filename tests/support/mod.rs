//! Test harness: a temp directory with fake agent CLIs first on PATH and a
//! work directory, and a builder that runs the real `baton` binary there.
//!
//! A fake CLI is a small POSIX sh script. `Env::replay` makes one that
//! records its argv (NUL-separated) and stdin under `$FAKE_DIR`, prints a
//! recorded transcript, and exits with a given code. `Env::fake` takes any
//! script body for behaviour a transcript cannot express (sleeping, spawning
//! grandchildren, waiting on gate files).

#![allow(dead_code)]

pub mod acp;
pub mod council;
pub mod names;
pub mod schema;
pub mod secrets;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BATON: &str = env!("CARGO_BIN_EXE_baton");

pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

pub struct Env {
    pub tmp: tempfile::TempDir,
    pub bin: PathBuf,
    pub work: PathBuf,
    pub fake_dir: PathBuf,
    /// baton's state directory (`BATON_STATE_DIR`): outside the work tree,
    /// as a user's state directory is.
    pub state: PathBuf,
}

impl Default for Env {
    fn default() -> Self {
        Self::new()
    }
}

impl Env {
    pub fn new() -> Env {
        let tmp = tempfile::tempdir().expect("tempdir");
        let bin = tmp.path().join("bin");
        let work = tmp.path().join("work");
        let fake_dir = tmp.path().join("fake");
        let state = tmp.path().join("state");
        for d in [&bin, &work, &fake_dir] {
            fs::create_dir_all(d).unwrap();
        }
        Env {
            tmp,
            bin,
            work,
            fake_dir,
            state,
        }
    }

    /// A fake CLI named `name` whose body is `script` (POSIX sh, after `set -eu`).
    pub fn fake(&self, name: &str, script: &str) -> &Self {
        let p = self.bin.join(name);
        fs::write(&p, format!("#!/bin/sh\nset -eu\n{script}\n")).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        self
    }

    /// A fake CLI that records argv and stdin, prints `fixture` and exits `code`.
    pub fn replay(&self, name: &str, fixture_rel: &str, code: i32) -> &Self {
        let f = fixture(fixture_rel);
        assert!(f.exists(), "missing fixture {}", f.display());
        self.fake(
            name,
            &format!("{}\ncat '{}'\nexit {code}", record(name), f.display()),
        )
    }

    /// Arguments the fake `name` was last called with.
    pub fn argv(&self, name: &str) -> Vec<String> {
        let raw = fs::read(self.fake_dir.join(format!("{name}.argv")))
            .unwrap_or_else(|_| panic!("{name} was not called"));
        raw.split(|b| *b == 0)
            .filter(|s| !s.is_empty())
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect()
    }

    /// What the fake `name` read on stdin.
    pub fn stdin(&self, name: &str) -> String {
        fs::read_to_string(self.fake_dir.join(format!("{name}.stdin"))).unwrap_or_default()
    }

    pub fn called(&self, name: &str) -> bool {
        self.fake_dir.join(format!("{name}.argv")).exists()
    }

    /// `baton` with PATH = fakes first, then a minimal system PATH, in `work`.
    pub fn baton(&self) -> Command {
        let mut c = Command::new(BATON);
        c.current_dir(&self.work)
            .env(
                "PATH",
                format!("{}:/usr/local/bin:/usr/bin:/bin", self.bin.display()),
            )
            .env("FAKE_DIR", &self.fake_dir)
            .env("BATON_STATE_DIR", &self.state)
            // Never the real user's config: a user file that does not exist
            // unless a test writes it, and none of the variables that stand
            // for config keys.
            .env("BATON_CONFIG", self.tmp.path().join("user-config.toml"))
            .env_remove("BATON_AGENT")
            .env_remove("BATON_MODEL")
            .env_remove("BATON_EFFORT")
            .env_remove("BATON_TIMEOUT")
            .env_remove("BATON_IDLE_TIMEOUT")
            .env_remove("BATON_ACCESS")
            .env_remove("BATON_ASK_BUDGET")
            .env_remove("BATON_DEPTH")
            .env_remove("BATON_MAX_DEPTH")
            .env_remove("BATON_BIN")
            // The fakes record what they saw outside the workspace, where
            // baton's sandbox would not let them write: off, unless a test
            // asks for it (tests/sandbox_runs.rs).
            .env("BATON_SANDBOX", "off")
            .stdin(Stdio::null());
        c
    }

    pub fn run(&self, args: &[&str]) -> Run {
        Run::from(self.baton().args(args).output().expect("run baton"))
    }

    /// `<sub>` of the one project record folder under the state directory
    /// (`jobs`, `runs`, `ask-budget`, …) that has one.
    pub fn records(&self, sub: &str) -> PathBuf {
        let mut found: Vec<PathBuf> = fs::read_dir(self.state.join("repos"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().join(sub))
            .filter(|p| p.exists())
            .collect();
        assert_eq!(found.len(), 1, "`{sub}` records: {found:?}");
        found.pop().unwrap()
    }

    /// A shell command line, run by `sh -c` inside a private mount namespace
    /// (`unshare -Urm`) where `BATON_STATE_DIR` is a tmpfs of `kib` KiB: a
    /// real full disk for baton's records, nothing else affected. `$BATON`
    /// is the binary; the environment is `baton()`'s. `None` (with a note on
    /// stderr) where user namespaces are not available.
    pub fn in_small_tmpfs(&self, kib: u32, script: &str) -> Option<Command> {
        let probe = Command::new("unshare")
            .args(["-Urm", "true"])
            .stderr(Stdio::null())
            .status();
        if !probe.is_ok_and(|s| s.success()) {
            eprintln!("skipped: `unshare -Urm` is not available here");
            return None;
        }
        fs::create_dir_all(&self.state).unwrap();
        let mut c = Command::new("unshare");
        c.current_dir(&self.work)
            .env(
                "PATH",
                format!("{}:/usr/local/bin:/usr/bin:/bin", self.bin.display()),
            )
            .env("FAKE_DIR", &self.fake_dir)
            .env("BATON_STATE_DIR", &self.state)
            .env("BATON", BATON)
            .env_remove("BATON_DEPTH")
            .env_remove("BATON_MAX_DEPTH")
            .env_remove("BATON_BIN")
            .env("BATON_SANDBOX", "off")
            .stdin(Stdio::null())
            .args(["-Urm", "sh", "-c"])
            .arg(format!(
                "set -u\nmount -t tmpfs -o size={kib}k,mode=700 tmpfs \"$BATON_STATE_DIR\" || exit 99\n{script}"
            ));
        Some(c)
    }

    pub fn git_init(&self) -> &Self {
        git(&self.work, &["init", "-q"]);
        fs::write(self.work.join("README"), "hello\n").unwrap();
        git(&self.work, &["add", "."]);
        git(&self.work, &["commit", "-qm", "init"]);
        self
    }
}

/// Shell lines that record argv and stdin of the fake `name`.
pub fn record(name: &str) -> String {
    format!(
        ": > \"$FAKE_DIR/{name}.argv\"\nfor a in \"$@\"; do printf '%s\\0' \"$a\" >> \"$FAKE_DIR/{name}.argv\"; done\ncat > \"$FAKE_DIR/{name}.stdin\""
    )
}

pub fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Run {
    /// The single JSON line on stdout.
    pub fn json(&self) -> serde_json::Value {
        let lines: Vec<&str> = self
            .stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .collect();
        assert_eq!(
            lines.len(),
            1,
            "expected one JSON line, got:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("{e}: {}", lines[0]))
    }
}

/// Poll `cond` until it holds or `timeout` passes.
pub fn wait_for(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + timeout;
    while Instant::now() < until {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    cond()
}

/// Whether a process with this pid exists (and is not a zombie).
/// Peak resident memory (VmHWM, kB) of a running process.
pub fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

pub fn pid_alive(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

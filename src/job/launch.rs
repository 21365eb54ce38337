//! Starting a job: everything that can fail is checked by the caller before
//! this runs (plan, command, peer installed), so errors come back at once.
//!
//! The launcher creates the job directory, takes the runner's lock itself and
//! hands the locked descriptor to the runner it spawns. The lock is therefore
//! held from before `state.json` exists until the runner dies: there is no
//! moment at which the job reads `running` but could be mistaken for lost.
//!
//! Only `state.json` is written (atomically, fsynced) before the launcher
//! answers: the spec travels to the runner on its stdin and the runner
//! stores it, so the caller waits for one durable write, not two.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;
use std::process::Stdio;

use super::store::{Job, LOCK_FILE, STORE_VERSION, Spec, State, Store, StoredCommand, now_ms};
use crate::error::{Error, Result};
use crate::fsutil;
use crate::ids;
use crate::notify::{Choice, Origin};
use crate::process;
use crate::result::RunResult;
use crate::run::Plan;
use crate::worktree;

/// The hidden subcommand the runner is started with.
pub const RUNNER_COMMAND: &str = "__job-runner";

/// Where a job's peer works.
pub enum Place<'a> {
    /// Where the plan says (its `cwd`).
    Cwd,
    /// A new worktree (`run --async --worktree`), made before the launcher
    /// answers so its errors come back at once.
    NewWorktree(&'a worktree::Checked),
    /// The worktree of an earlier job (`continue`): the peer works there
    /// again and baton commits what it leaves, as after the first job.
    Worktree(Box<worktree::Session>),
}

/// Start `plan` as a background job; returns its `running` result.
/// `notify`: whether its runner announces it (`--notify`/`--no-notify`).
pub fn start(
    plan: &Plan,
    place: Place,
    resumed_from: Option<String>,
    notify: Choice,
) -> Result<RunResult> {
    start_in(Store::here()?, plan, place, resumed_from, notify)
}

/// `start`, the job recorded in `store` (`continue` of a job of another
/// repository, from `watch --all`, keeps it with the job it continues).
pub fn start_in(
    store: Store,
    plan: &Plan,
    place: Place,
    resumed_from: Option<String>,
    notify: Choice,
) -> Result<RunResult> {
    // Before anything exists: an unenforceable access mode is exit 2, a
    // missing CLI exit 127, as for `run`; a host's sandbox without network
    // `host_sandbox`, which the runner would only meet later.
    crate::sandbox::host::check()?;
    let program = plan.program(&plan.command()?)?;
    plan.check_chain_installed()?;
    store.create()?;
    let id = ids::new_id();
    let job = store.job(&id);
    // The job's directory appears with the runner's lock already held: it is
    // made under a hidden name (no job id, so no listing shows it), the lock
    // taken inside, then renamed into place. A watcher (`jobs`, `watch`,
    // `serve`) that found the directory before its lock would settle the job
    // `lost` (and `watch` would alert so) while the launch went on.
    let staged = store.dir.join(format!(".{id}.new"));
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&staged)
        .map_err(|e| Error::io(format!("creating {}", staged.display()), e))?;
    let lock = match take_lock(&staged.join(LOCK_FILE))
        .and_then(|l| rename_into_place(&staged, &job.dir).map(|()| l))
    {
        Ok(l) => l,
        Err(e) => {
            let _ = fs::remove_dir_all(&staged);
            return Err(e);
        }
    };
    let new_worktree = matches!(place, Place::NewWorktree(_));
    let checked = match &place {
        Place::NewWorktree(c) => Some((*c).clone()),
        _ => None,
    };
    let (plan, session) = match place {
        Place::Cwd => (plan.clone(), None),
        Place::NewWorktree(c) => match worktree::prepare(c, plan, &id, Some(&id)) {
            Ok((p, s)) => (p, Some(s)),
            Err(e) => {
                let _ = fs::remove_dir_all(&job.dir);
                return Err(e);
            }
        },
        Place::Worktree(mut s) => {
            s.job_id = Some(id.clone());
            (plan.clone(), Some(*s))
        }
    };
    let launched = plan
        .command()
        .and_then(|spec| StoredCommand::from_spec(&spec))
        .and_then(|command| {
            launch(
                &job,
                lock,
                &plan,
                command,
                &program,
                (resumed_from, notify),
                (session.clone(), checked),
            )
        });
    match launched {
        Ok(state) => {
            if let (Some(s), Some(pid)) = (&session, state.runner_pid) {
                claim_worktree(s, &job, pid);
            }
            let mut r = job.running_result(&state);
            r.warnings
                .extend(crate::state_dir::fallback_note().map(crate::result::Warning::from));
            r.warnings
                .extend(crate::sandbox::host::job_note().map(crate::result::Warning::from));
            Ok(r)
        }
        Err(e) => {
            // A job that never started leaves nothing behind.
            if let (Some(s), true) = (&session, new_worktree) {
                worktree::abandon(s);
            }
            let _ = fs::remove_dir_all(&job.dir);
            Err(e)
        }
    }
}

/// The worktree's record names the process working in it and the lock that
/// shows it alive (that is how `baton worktree list`/`remove` tell a busy
/// worktree): the runner and the job's lock, which it holds from before
/// this launcher exits until it ends.
fn claim_worktree(s: &worktree::Session, job: &Job, runner: u32) {
    if let Some(mut r) = worktree::store::load(&s.root, &s.id) {
        r.pid = Some(runner);
        r.lock = Some(job.lock_path());
        r.job_id = Some(job.id.clone());
        r.finished_ms = None;
        r.status = None;
        let _ = worktree::store::save(&s.root, &r);
    }
}

/// Create the job's runner lock at `path` and hold it (the runner inherits it).
fn take_lock(path: &Path) -> Result<File> {
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| Error::io(format!("creating {}", path.display()), e))?;
    lock.lock()
        .map_err(|e| Error::io(format!("locking {}", path.display()), e))?;
    Ok(lock)
}

/// The staged job directory under its id (a fresh id: nothing is there).
fn rename_into_place(staged: &Path, dir: &Path) -> Result<()> {
    fs::rename(staged, dir).map_err(|e| Error::io(format!("creating {}", dir.display()), e))
}

fn launch(
    job: &Job,
    lock: File,
    plan: &Plan,
    command: StoredCommand,
    program: &Path,
    // The job it continues, and `--notify`/`--no-notify`.
    (resumed_from, notify): (Option<String>, Choice),
    // The job's worktree, and what was checked of it at start.
    (worktree, checked): (Option<worktree::Session>, Option<worktree::Checked>),
) -> Result<State> {
    let spec = Spec {
        version: STORE_VERSION,
        id: job.id.clone(),
        created_ms: now_ms(),
        plan: plan.clone(),
        command,
        program: program.to_path_buf(),
        resumed_from,
        worktree,
        checked,
        notify,
        // Here, in the command the user ran: the runner has no terminal.
        origin: Origin::here(),
    };
    let spec_json = serde_json::to_vec(&spec).map_err(|e| Error::Internal(e.to_string()))?;
    let log = fsutil::create_private(&job.runner_log())?;
    let exe = std::env::current_exe()
        .map_err(|e| Error::io("finding baton's own executable to start the job runner", e))?;

    // Held across the spawn: the runner's first state update waits for the
    // initial state below instead of racing it.
    job.with_guard(|| {
        let fd = lock.as_raw_fd();
        // Its own session: the job outlives the caller's terminal, shell and
        // process group. The locked descriptor survives exec; the runner
        // re-marks it close-on-exec at once so the peer does not inherit it.
        let mut child = process::Command::new(&exe)
            .arg(RUNNER_COMMAND)
            .arg(&job.dir)
            .arg("--lock-fd")
            .arg(fd.to_string())
            .current_dir(&job.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::from(
                log.try_clone()
                    .map_err(|e| Error::io("duplicating runner.log", e))?,
            ))
            .stderr(Stdio::from(log))
            .group(process::Group::Session { keep_fd: Some(fd) })
            .detach()
            .map_err(|e| Error::Spawn {
                binary: exe.display().to_string(),
                source: e,
            })?;
        let mut state = State::initial(&spec);
        state.runner_pid = Some(child.id());
        // Written while the runner starts (it reads it at once, so a spec
        // larger than the pipe's buffer only waits for that).
        let sent = child
            .stdin
            .take()
            .expect("piped stdin")
            .write_all(&spec_json);
        if let Err(e) = sent {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::io("handing the job to its runner", e));
        }
        // The runner is not our business any more (it is reparented when we exit).
        drop(child);
        job.write_initial(&state)?;
        Ok(state)
    })
}

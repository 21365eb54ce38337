//! What the interactive `watch` does to jobs — cancel, continue, diff — run on
//! a thread each (a cancel waits out the peer's grace period), reported back
//! to the loop as an `Outcome`. The same code as `baton cancel`/`continue`.

use std::ffi::OsStr;
use std::io::Read;
use std::process::Stdio;
use std::sync::mpsc::Sender;

use crate::error::Error;
use crate::job::{self, store::Job};

use super::wake::Wake;

/// Most of a diff shown (bytes read from git, then lines kept).
const DIFF_BYTES: u64 = 4 << 20;
const DIFF_LINES: usize = 20_000;

#[derive(Debug)]
pub enum Outcome {
    /// A line for the status bar.
    Said(String),
    /// `from` was continued as the new job `id`.
    Continued { from: String, id: String },
    /// The diff of job `id`, as lines.
    Diff { id: String, lines: Vec<String> },
}

/// An error as one status-bar line: what went wrong, then what to do.
pub fn said(e: &Error) -> String {
    match e.hint() {
        Some(h) => format!("{e} — {h}"),
        None => e.to_string(),
    }
}

fn spawn(tx: &Sender<Wake>, f: impl FnOnce() -> Outcome + Send + 'static) {
    let tx = tx.clone();
    std::thread::spawn(move || {
        let _ = tx.send(Wake::Done(f()));
    });
}

pub fn cancel(job: Job, tx: &Sender<Wake>) {
    spawn(tx, move || {
        Outcome::Said(match job::cancel_job(&job) {
            Ok(s) if s.status.as_str() == "cancelled" => format!("job {} cancelled", job.id),
            Ok(s) => format!("job {} had already ended ({})", job.id, s.status.as_str()),
            Err(e) => said(&e),
        })
    });
}

/// Cancel a council as `baton cancel ID` does: its runner stops every
/// member's process group; the council is marked `cancelled`. A fan-out
/// (a group too) likewise: every candidate stopped.
pub fn cancel_council(root: std::path::PathBuf, id: String, tx: &Sender<Wake>) {
    spawn(tx, move || {
        let kind = crate::store::find(&root, OsStr::new(&id)).map(|f| f.kind);
        if kind == Some(crate::store::Kind::Bench) {
            return Outcome::Said(format!(
                "bench run {id} runs in the foreground: stop it with Ctrl-C where it runs \
                 (`baton bench run --resume {id}` goes on later)"
            ));
        }
        if kind == Some(crate::store::Kind::Fanout)
            && let Ok(rec) = crate::fanout::store::Record::load(&root, &id)
        {
            return Outcome::Said(match crate::fanout::as_job::stop(rec) {
                Ok(rec) => format!("fan-out {id}: {}", rec.stage.as_str()),
                Err(e) => said(&e),
            });
        }
        let r =
            crate::council::store::Record::load(&root, &id).and_then(crate::council::as_job::stop);
        Outcome::Said(match r {
            Ok(rec) => format!("council {id}: {}", rec.stage.as_str()),
            Err(e) => said(&e),
        })
    });
}

/// Continue job `id` of `store` (its repository's, not necessarily the cwd's).
pub fn continue_job(store: job::store::Store, id: String, task: String, tx: &Sender<Wake>) {
    spawn(tx, move || {
        match job::continue_start_in(
            store,
            OsStr::new(&id),
            vec![task],
            crate::notify::Choice::Config,
        ) {
            Ok(r) => Outcome::Continued {
                from: id,
                id: r.job_id.unwrap_or_default(),
            },
            Err(e) => Outcome::Said(said(&e)),
        }
    });
}

pub fn diff(job: Job, files: Vec<String>, tx: &Sender<Wake>) {
    spawn(tx, move || match diff_lines(&job, &files) {
        Ok(lines) => Outcome::Diff {
            id: job.id.clone(),
            lines,
        },
        Err(m) => Outcome::Said(m),
    });
}

/// The job's changes as `git diff` shows them (read-only git, no external
/// diff or textconv programs). A worktree job: its branch against the tree it
/// started from, once it ended (its work is committed then). Otherwise: the
/// files it changed, in its directory, against HEAD.
fn diff_lines(job: &Job, files: &[String]) -> Result<Vec<String>, String> {
    let spec = job.read_spec().map_err(|e| said(&e))?;
    let mut cmd = match &spec.worktree {
        Some(w) => {
            if !job.read_state().is_ok_and(|s| s.status.is_terminal()) {
                return Err(format!(
                    "job {} works in its own worktree; its diff is shown once it ends and its work is committed",
                    job.id
                ));
            }
            let mut c = crate::git::git(&w.top);
            c.arg("diff")
                .args(crate::git::DIFF)
                .arg(&w.start_tree)
                .arg(&w.branch)
                .arg("--");
            c
        }
        None => {
            if files.is_empty() {
                return Err(format!("job {} changed no files (yet)", job.id));
            }
            let mut c = crate::git::git(&spec.plan.cwd);
            c.arg("diff")
                .args(crate::git::DIFF)
                .arg("HEAD")
                .arg("--")
                .args(files);
            c
        }
    };
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not run git for the diff of job {}: {e}", job.id))?;
    let mut out = Vec::new();
    let read = child
        .stdout
        .take()
        .map(|o| o.take(DIFF_BYTES).read_to_end(&mut out));
    if out.len() as u64 >= DIFF_BYTES {
        // A diff cut here leaves git blocked on a full pipe: stop it.
        let _ = child.kill();
    }
    let mut err = String::new();
    if let Some(e) = child.stderr.take() {
        let _ = e.take(64 << 10).read_to_string(&mut err);
    }
    let status = child.wait();
    if read.is_none_or(|r| r.is_err()) || (out.is_empty() && !status.is_ok_and(|s| s.success())) {
        return Err(format!(
            "git diff failed for job {}: {}",
            job.id,
            err.lines().next().unwrap_or("no output")
        ));
    }
    let text = String::from_utf8_lossy(&out);
    let mut lines: Vec<String> = text.lines().take(DIFF_LINES).map(str::to_string).collect();
    if lines.is_empty() {
        lines.push("(no differences from HEAD: the changes may be committed or reverted)".into());
    }
    if out.len() as u64 >= DIFF_BYTES || text.lines().count() > DIFF_LINES {
        lines.push("(diff cut here; see it whole with `git diff`)".into());
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_as_one_line_with_what_to_do() {
        let e = Error::usage_hint("job `x` is still running", "wait for it first");
        assert_eq!(said(&e), "job `x` is still running — wait for it first");
    }
}

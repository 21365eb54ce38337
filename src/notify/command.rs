//! The command channel: the user's program (`[notify] command`, an argv
//! array from the user file, never a shell) started through the one
//! launcher in its own process group, the event as one JSON line on its
//! stdin, stopped as a group past its deadline.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use super::Event;
use crate::process::Failed;

/// How long the program may take before its group is stopped.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// Run `argv` with `event` on stdin; `Err` says what went wrong.
pub fn deliver(argv: &[String], event: &Event) -> Result<(), String> {
    deliver_within(argv, event, DEADLINE)
}

pub(super) fn deliver_within(
    argv: &[String],
    event: &Event,
    deadline: Duration,
) -> Result<(), String> {
    let Some((program, args)) = argv.split_first() else {
        return Err("the command is empty".into());
    };
    let mut line = serde_json::to_vec(event).map_err(|e| e.to_string())?;
    line.push(b'\n');
    // The line is a few KiB (the summary is capped), well under a pipe's
    // buffer: written whole before the program starts, so a program that
    // never reads its stdin cannot block baton.
    let (reader, mut writer) = std::io::pipe().map_err(|e| format!("making a pipe: {e}"))?;
    writer
        .write_all(&line)
        .map_err(|e| format!("writing the event: {e}"))?;
    drop(writer);
    let out = crate::process::Command::new(program)
        .args(args)
        .stdin(reader)
        .stdout(Stdio::null())
        .deadline(deadline)
        .grace(Duration::from_secs(1))
        .output()
        .map_err(|e| match e {
            Failed::Spawn(e) => format!("could not start `{program}`: {e}"),
            other => format!("`{program}`: {other}"),
        })?;
    ended(program, &out)
}

/// How a channel's program ended: `Ok` on exit 0, else what went wrong
/// with the last line it printed on stderr (cleaned: a program may echo a
/// peer's text). The desktop helper and the command channel share it.
pub(super) fn ended(program: &str, out: &std::process::Output) -> Result<(), String> {
    if out.status.success() {
        return Ok(());
    }
    let status = match out.status.code() {
        Some(c) => format!("exit status {c}"),
        None => "a signal".to_string(),
    };
    let mut msg = format!("`{program}` ended with {status}");
    let last = last_line(&out.stderr);
    if !last.is_empty() {
        msg.push_str(": ");
        msg.push_str(&last);
    }
    Err(msg)
}

/// The last non-blank line of a program's stderr, cleaned.
pub(super) fn last_line(stderr: &[u8]) -> String {
    let said = String::from_utf8_lossy(stderr);
    super::clean(
        said.lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or(""),
    )
}

#[cfg(test)]
mod tests {
    use super::super::{Trigger, Work};
    use super::*;

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_program_reads_the_event_as_one_json_line() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("got.json");
        let e = Event::new(Trigger::Ended, Work::Job, "success")
            .id("j1")
            .summary("all $(done) `now`")
            .finish();
        let script = format!("cat > '{}'", out.display());
        deliver(&argv(&["sh", "-c", &script]), &e).unwrap();
        let got = std::fs::read_to_string(&out).unwrap();
        assert!(
            got.ends_with('\n') && got.matches('\n').count() == 1,
            "{got:?}"
        );
        let back: Event = serde_json::from_str(&got).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn failures_say_what_happened() {
        let e = Event::new(Trigger::Test, Work::Run, "test");
        let err = deliver(&argv(&["/nonexistent/notify-me"]), &e).unwrap_err();
        assert!(
            err.contains("could not start `/nonexistent/notify-me`"),
            "{err}"
        );
        let err = deliver(&argv(&["sh", "-c", "echo 'no route' >&2; exit 3"]), &e).unwrap_err();
        assert!(err.contains("exit status 3: no route"), "{err}");
        // A program that never ends is stopped with its group at the deadline.
        let t = std::time::Instant::now();
        let err = deliver_within(
            &argv(&["sh", "-c", "sleep 30 & sleep 30"]),
            &e,
            Duration::from_millis(300),
        )
        .unwrap_err();
        assert!(err.contains("no answer within"), "{err}");
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    }
}

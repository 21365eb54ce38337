//! The ACP side of supervision: the writer thread that feeds the agent's
//! stdin, and the two questions the supervisor asks the ACP client (has
//! the handshake happened, cancel the turn in flight).

use std::io::Write;
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

use crate::agent::Parser;

/// How long an ACP agent has to end its turn after `session/cancel` before
/// its group is stopped.
pub(super) const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// Whether the agent answered `initialize` (true for a parser that is not
/// an ACP client).
pub(super) fn initialized(parser: &Mutex<Option<Parser>>) -> bool {
    let mut g = parser.lock().unwrap();
    g.as_mut()
        .and_then(Parser::acp)
        .is_none_or(|c| c.initialized())
}

/// Send `session/cancel` if an ACP prompt is in flight.
pub(super) fn cancel(parser: &Mutex<Option<Parser>>) -> bool {
    let mut g = parser.lock().unwrap();
    g.as_mut().and_then(Parser::acp).is_some_and(|c| c.cancel())
}

/// The ACP writer: each queued line to the agent's stdin (and `sent.log`),
/// until the client closes it or the agent stops reading.
///
/// The agent gets each line before it is logged: every request is a round
/// trip the run waits on, and the log can wait for the agent instead. The
/// log line goes out in one write (`writeln!` on a `File` makes two).
pub(super) fn write_outbox(
    mut stdin: std::process::ChildStdin,
    outbox: mpsc::Receiver<crate::agent::acp::Outgoing>,
    mut log: Option<std::fs::File>,
) {
    use crate::agent::acp::Outgoing;
    for o in outbox {
        match o {
            Outgoing::Line { wire, logged } => {
                let mut line = wire.into_bytes();
                line.push(b'\n');
                let sent = stdin.write_all(&line).and_then(|_| stdin.flush());
                if let Some(f) = &mut log {
                    let mut entry = logged.into_bytes();
                    entry.push(b'\n');
                    if f.write_all(&entry).is_err() {
                        log = None;
                    }
                }
                if sent.is_err() {
                    return;
                }
            }
            Outgoing::Close => return,
        }
    }
}

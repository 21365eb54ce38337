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
pub(super) fn write_outbox(
    mut stdin: std::process::ChildStdin,
    outbox: mpsc::Receiver<crate::agent::acp::Outgoing>,
    mut log: Option<std::fs::File>,
) {
    use crate::agent::acp::Outgoing;
    for o in outbox {
        match o {
            Outgoing::Line { wire, logged } => {
                if let Some(f) = &mut log
                    && writeln!(f, "{logged}").is_err()
                {
                    log = None;
                }
                let mut line = wire.into_bytes();
                line.push(b'\n');
                if stdin.write_all(&line).and_then(|_| stdin.flush()).is_err() {
                    return;
                }
            }
            Outgoing::Close => return,
        }
    }
}

//! The supervisor's side of an ACP agent: whether it answered `initialize`,
//! asking it to cancel its turn, and the writer thread feeding its stdin.

use std::io::Write;
use std::sync::{Mutex, mpsc};

use crate::agent::Parser;

pub(super) fn acp_initialized(parser: &Mutex<Option<Parser>>) -> bool {
    let mut g = parser.lock().unwrap();
    g.as_mut()
        .and_then(Parser::acp)
        .is_none_or(|c| c.initialized())
}

/// Send `session/cancel` if an ACP prompt is in flight.
pub(super) fn acp_cancel(parser: &Mutex<Option<Parser>>) -> bool {
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

//! The live status line of a foreground run: spinner, elapsed time, agent,
//! what the peer is doing now, tokens so far — on a terminal's stderr only.
//!
//! A thread tails the run's stdout log (the supervisor's pump is never
//! touched or slowed) and redraws one line with `\r` + erase-line at most ten
//! times a second; stopping erases it, so the result that follows prints on
//! a clean line and stdout never sees any of it.

use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::tail::{Live, Tail};
use super::watch::{tokens, total_tokens};
use crate::agent::Agent;
use crate::job::human;

/// Between redraws (at most ten a second).
const TICK: Duration = Duration::from_millis(100);
/// Most of the log read per redraw: a flood of output cannot stall the line.
const READ_PER_TICK: usize = 256 << 10;
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/// `\r` then erase the whole line.
const ERASE: &str = "\r\x1b[2K";

/// Whether a live line should be drawn: a person watches stderr, and
/// neither `--quiet` nor `BATON_PROGRESS=0` turned it off.
pub fn wanted(quiet: bool) -> bool {
    if quiet || std::env::var_os("BATON_PROGRESS").is_some_and(|v| v == "0") {
        return false;
    }
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(libc::STDERR_FILENO) == 1 }
}

/// The running line; dropping it (or `stop`) erases it.
pub struct Progress {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Draw the line for the run whose peer writes `log`, on stderr.
    pub fn start(log: PathBuf, agent: Agent) -> Progress {
        let (tx, rx) = mpsc::channel::<()>();
        let thread = thread::spawn(move || {
            let started = Instant::now();
            let mut tail = Tail::new(log, agent);
            let mut err = std::io::stderr();
            for frame in 0usize.. {
                // A read error (log removed) leaves the line as it was.
                let _ = tail.poll(READ_PER_TICK);
                let width = columns().saturating_sub(1).max(20);
                let line = render(
                    SPINNER[frame % SPINNER.len()],
                    started.elapsed(),
                    agent,
                    &tail.live,
                    width,
                );
                let _ = err.write_all(format!("{ERASE}{line}").as_bytes());
                match rx.recv_timeout(TICK) {
                    Err(RecvTimeoutError::Timeout) => {}
                    _ => break,
                }
            }
            let _ = err.write_all(ERASE.as_bytes());
            let _ = err.flush();
        });
        Progress {
            stop: Some(tx),
            thread: Some(thread),
        }
    }

    /// Erase the line and wait until it is gone (before the result prints).
    pub fn stop(mut self) {
        self.end();
    }

    fn end(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.end();
    }
}

/// `⠋ 12s codex · $ cargo test · 1.2k tokens`, cut to `width` characters.
pub fn render(spin: char, elapsed: Duration, agent: Agent, live: &Live, width: usize) -> String {
    let mut line = format!(
        "{spin} {} {}",
        human(elapsed.as_millis() as u64),
        agent.name()
    );
    let doing = live
        .doing()
        .unwrap_or_else(|| "starting".into())
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    line.push_str(" · ");
    line.push_str(&doing);
    if let Some(n) = total_tokens(&live.usage) {
        line.push_str(&format!(" · {} tokens", tokens(n)));
    }
    if let Some(c) = live.usage.cost_usd {
        line.push_str(&format!(" ${c:.2}"));
    }
    // Control characters from the peer would move the cursor: never printed.
    let line: String = line
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match line.char_indices().nth(width) {
        Some((i, _)) => {
            let cut = line[..i]
                .char_indices()
                .nth(width.saturating_sub(1))
                .map_or(i, |(j, _)| j);
            format!("{}…", &line[..cut])
        }
        None => line,
    }
}

/// The terminal's width, from stderr (80 if it cannot be known).
fn columns() -> usize {
    // SAFETY: TIOCGWINSZ fills the struct we pass; failure leaves it zeroed.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDERR_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    if ok && ws.ws_col > 0 {
        ws.ws_col as usize
    } else {
        80
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::Activity;

    #[test]
    fn the_line_says_who_what_and_how_much() {
        let mut live = Live::default();
        live.apply(&Activity::Command {
            command: "cargo test --all".into(),
        });
        live.apply(&Activity::Usage {
            usage: crate::result::Usage {
                input_tokens: Some(1000),
                output_tokens: Some(234),
                ..Default::default()
            },
        });
        let l = render('⠋', Duration::from_secs(12), Agent::Codex, &live, 200);
        assert_eq!(l, "⠋ 12s codex · $ cargo test --all · 1.2k tokens");
        let short = render('⠋', Duration::from_secs(12), Agent::Codex, &live, 20);
        assert_eq!(short.chars().count(), 20);
        assert!(short.ends_with('…'));
    }
}

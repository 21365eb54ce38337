//! The live status line of a foreground run: spinner, elapsed time, agent,
//! what the peer is doing now, tokens so far — on a terminal's stderr only.
//!
//! `Progress::install` hooks `run::observe`, so every foreground peer
//! (`run`, `run --worktree`, each adviser of `ask`) joins the line; several
//! are summarised on it. A thread tails each peer's stdout log (the
//! supervisor's pump is never touched or slowed) and redraws one line with `\r` + erase-line at most ten
//! times a second; stopping erases it, so the result that follows prints on
//! a clean line and stdout never sees any of it.

use std::io::Write;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::tail::{Live, Tail};
use super::watch::{tokens, total_tokens};
use crate::agent::Agent;
use crate::job::human;
use crate::run;

/// Between redraws (at most ten a second).
const TICK: Duration = Duration::from_millis(100);
/// Most of the log read per redraw: a flood of output cannot stall the line.
const READ_PER_TICK: usize = 256 << 10;
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/// `\r` then erase the whole line.
const ERASE: &str = "\r\x1b[2K";

/// `BATON_PROGRESS=lines`: instead of a line redrawn on a terminal, one
/// line on stderr each time the activity changes, this prefix then
/// `{"activity": "codex: editing src/parse.rs · 1.2k tokens", "tokens": 1234}`,
/// for a program that follows the run (`baton mcp` turns them into progress
/// notifications). Internal: set by `baton mcp` for its children.
pub const LINES_PREFIX: &str = "baton-progress: ";

/// Whether a program asked for activity lines (`BATON_PROGRESS=lines`).
pub fn lines_mode() -> bool {
    std::env::var_os("BATON_PROGRESS").is_some_and(|v| v == "lines")
}

/// Whether a live line should be drawn: a person watches stderr (or a
/// program asked for lines), and neither `--quiet` nor `BATON_PROGRESS=0`
/// turned it off.
pub fn wanted(quiet: bool) -> bool {
    if quiet || std::env::var_os("BATON_PROGRESS").is_some_and(|v| v == "0") {
        return false;
    }
    if lines_mode() {
        return true;
    }
    crate::sys::fd::stderr_is_tty()
}

/// The running line; dropping it (or `stop`) erases it.
pub struct Progress {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// The peers the line follows: each one's log tail, and whether it ended.
#[derive(Default)]
struct Board {
    runs: Vec<Run>,
}

struct Run {
    agent: Agent,
    tail: Tail,
    ended: bool,
    /// The stage it belongs to (`council: critiquing`), if it has one.
    stage: Option<String>,
}

/// Marks its run ended when dropped (by `run::execute`, when the peer ends).
struct Ended {
    board: Arc<Mutex<Board>>,
    index: usize,
}

impl Drop for Ended {
    fn drop(&mut self) {
        if let Ok(mut b) = self.board.lock() {
            // One last read, so the summary counts what the peer said last.
            let r = &mut b.runs[self.index];
            let _ = r.tail.poll(READ_PER_TICK);
            r.ended = true;
        }
    }
}

impl Progress {
    /// Draw the line for every foreground peer this process starts from now
    /// on (`run::observe`), on stderr; `noun` names several (`advisers`).
    pub fn install(noun: &'static str) -> Progress {
        let board = Arc::new(Mutex::new(Board::default()));
        let b = board.clone();
        run::observe::set(Some(Box::new(move |log, agent| {
            let mut g = b.lock().ok()?;
            g.runs.push(Run {
                agent,
                tail: Tail::new(log.to_path_buf(), agent),
                ended: false,
                stage: run::observe::stage(),
            });
            Some(Box::new(Ended {
                board: b.clone(),
                index: g.runs.len() - 1,
            }) as Box<dyn Send>)
        })));
        let (tx, rx) = mpsc::channel::<()>();
        if lines_mode() {
            return Progress {
                stop: Some(tx),
                thread: Some(thread::spawn(move || lines(&board, &rx))),
            };
        }
        let thread = thread::spawn(move || {
            let started = Instant::now();
            let mut err = std::io::stderr();
            for frame in 0usize.. {
                let line = match board.lock() {
                    Ok(mut b) => {
                        for r in b.runs.iter_mut().filter(|r| !r.ended) {
                            // A read error (log removed) leaves the line as it was.
                            let _ = r.tail.poll(READ_PER_TICK);
                        }
                        let width = columns().saturating_sub(1).max(20);
                        let spin = SPINNER[frame % SPINNER.len()];
                        let runs: Vec<(Agent, &Live, bool)> = b
                            .runs
                            .iter()
                            .map(|r| (r.agent, &r.tail.live, r.ended))
                            .collect();
                        render_board(spin, started.elapsed(), noun, &runs, width)
                    }
                    Err(_) => String::new(),
                };
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
        run::observe::set(None);
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

/// `BATON_PROGRESS=lines`: a line each time the activity changes, polled as
/// often as the terminal line is redrawn.
fn lines(board: &Mutex<Board>, rx: &mpsc::Receiver<()>) {
    let mut last = String::new();
    let mut err = std::io::stderr();
    loop {
        let now = match board.lock() {
            Ok(mut b) => {
                for r in b.runs.iter_mut().filter(|r| !r.ended) {
                    let _ = r.tail.poll(READ_PER_TICK);
                }
                let total: u64 = b
                    .runs
                    .iter()
                    .filter_map(|r| total_tokens(&r.tail.live.usage))
                    .fold(0, u64::saturating_add);
                (!b.runs.is_empty()).then(|| (staged_activity(&b.runs, total), total))
            }
            Err(_) => None,
        };
        if let Some((line, total)) = now
            && line != last
        {
            let json = serde_json::json!({"activity": line, "tokens": total});
            let _ = err.write_all(format!("{LINES_PREFIX}{json}\n").as_bytes());
            last = line;
        }
        match rx.recv_timeout(TICK) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => break,
        }
    }
}

/// The activity of the latest stage's peers (all of them when no stage was
/// named) after the stage, with the tokens of every peer so far:
/// `council: critiquing — 3 peers (1 done) · codex: thinking · 12k tokens`.
fn staged_activity(runs: &[Run], total: u64) -> String {
    let stage = runs.last().and_then(|r| r.stage.clone());
    let now: Vec<(Agent, &Live, bool)> = runs
        .iter()
        .filter(|r| r.stage == stage)
        .map(|r| (r.agent, &r.tail.live, r.ended))
        .collect();
    match stage {
        Some(s) => cut(format!("{s} — {}", activity_with(&now, total)), 300),
        None => activity_with(&now, total),
    }
}

/// What the peers are doing, without spinner or clock:
/// `codex: editing src/parse.rs · 1.2k tokens`; several as
/// `2 peers (1 done) · codex: $ cargo test · claude: starting · 3k tokens`.
pub fn activity(runs: &[(Agent, &Live, bool)]) -> String {
    let total: u64 = runs
        .iter()
        .filter_map(|r| total_tokens(&r.1.usage))
        .fold(0, u64::saturating_add);
    activity_with(runs, total)
}

/// `activity`, with `total` as the tokens.
fn activity_with(runs: &[(Agent, &Live, bool)], total: u64) -> String {
    let peers: Vec<(&str, String, bool)> = runs
        .iter()
        .map(|(agent, live, done)| {
            let doing = live.doing().unwrap_or_else(|| "starting".into());
            (agent.name(), doing, *done)
        })
        .collect();
    peers_line(&peers, total)
}

/// The peers part of an activity line, from each peer's name, what it is
/// doing and whether it is done: `codex: thinking`, or `2 peers (1 done) ·
/// claude: starting`, then the tokens.
fn peers_line(runs: &[(&str, String, bool)], total: u64) -> String {
    let first = |doing: &str| doing.lines().next().unwrap_or("").to_string();
    let mut line = match runs {
        [(name, doing, _)] => format!("{name}: {}", first(doing)),
        _ => {
            let done = runs.iter().filter(|r| r.2).count();
            let mut l = format!("{} peers", runs.len());
            if done > 0 {
                l.push_str(&format!(" ({done} done)"));
            }
            for (name, doing, _) in runs.iter().filter(|r| !r.2) {
                l.push_str(&format!(" · {name}: {}", first(doing)));
            }
            l
        }
    };
    if total > 0 {
        line.push_str(&format!(" · {} tokens", tokens(total)));
    }
    // Control characters from the peer never reach a reader; long lines are cut.
    cut(line, 300)
}

/// A council's or fan-out's line read from its records (`job_wait` on a
/// group's id follows it from outside), in the form its own runner's
/// progress has: the latest stage's peers after the stage, with the tokens
/// of every peer so far: `council: critiquing — 3 peers (1 done) · codex:
/// thinking · 12k tokens`. `None` until a peer has started.
pub fn group_activity(v: &super::group::GroupView) -> Option<String> {
    let stage = &v.runs.last()?.stage;
    let peers: Vec<(&str, String, bool)> = v
        .runs
        .iter()
        .filter(|r| &r.stage == stage)
        .map(|r| {
            let running = matches!(r.status, "running" | "stalled");
            let doing = r.doing.clone().unwrap_or_else(|| "starting".into());
            (r.agent.as_str(), doing, !running)
        })
        .collect();
    let noun = if v.kind == "fanout" {
        "fan-out"
    } else {
        "council"
    };
    let total = total_tokens(&v.usage).unwrap_or(0);
    Some(cut(
        format!("{noun}: {stage} — {}", peers_line(&peers, total)),
        300,
    ))
}

/// The line for any number of peers: one peer as `render`; several as
/// `⠋ 40s 2 advisers (1 done) · codex: $ cargo test · claude: thinking · 3k tokens`.
pub fn render_board(
    spin: char,
    elapsed: Duration,
    noun: &str,
    runs: &[(Agent, &Live, bool)],
    width: usize,
) -> String {
    match runs {
        [] => cut(
            format!("{spin} {} · starting", human(elapsed.as_millis() as u64)),
            width,
        ),
        [(agent, live, _)] => render(spin, elapsed, *agent, live, width),
        _ => {
            let done = runs.iter().filter(|r| r.2).count();
            let mut line = format!(
                "{spin} {} {} {noun}",
                human(elapsed.as_millis() as u64),
                runs.len()
            );
            if done > 0 {
                line.push_str(&format!(" ({done} done)"));
            }
            for (agent, live, _) in runs.iter().filter(|r| !r.2) {
                let doing = live.doing().unwrap_or_else(|| "starting".into());
                line.push_str(&format!(
                    " · {}: {}",
                    agent.name(),
                    doing.lines().next().unwrap_or("")
                ));
            }
            let total: u64 = runs
                .iter()
                .filter_map(|r| total_tokens(&r.1.usage))
                .fold(0, u64::saturating_add);
            if total > 0 {
                line.push_str(&format!(" · {} tokens", tokens(total)));
            }
            let cost: f64 = runs
                .iter()
                .filter_map(|r| r.1.usage.cost_usd)
                .fold(0.0, crate::result::add_usd);
            if cost > 0.0 {
                line.push_str(&format!(" ${cost:.2}"));
            }
            cut(line, width)
        }
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
    cut(line, width)
}

/// Control characters escaped, cut to `width` characters with `…`.
fn cut(line: String, width: usize) -> String {
    // Control characters from the peer would move the cursor: shown escaped.
    let line = crate::output::render::clean(&line, crate::output::render::Shape::Line).into_owned();
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
    crate::sys::fd::stderr_columns().unwrap_or(80)
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

    #[test]
    fn several_peers_share_one_line() {
        let mut a = Live::default();
        a.apply(&Activity::Command {
            command: "cargo test".into(),
        });
        a.apply(&Activity::Usage {
            usage: crate::result::Usage {
                input_tokens: Some(1000),
                ..Default::default()
            },
        });
        let mut b = Live::default();
        b.apply(&Activity::Usage {
            usage: crate::result::Usage {
                input_tokens: Some(500),
                cost_usd: Some(0.25),
                ..Default::default()
            },
        });
        let done = Live::default();
        let t = Duration::from_secs(40);
        let runs = [
            (Agent::Codex, &a, false),
            (Agent::Claude, &b, false),
            (Agent::Pi, &done, true),
        ];
        assert_eq!(
            render_board('⠋', t, "advisers", &runs, 200),
            "⠋ 40s 3 advisers (1 done) · codex: $ cargo test · claude: starting · 1.5k tokens $0.25"
        );
        // One peer: the single-run line; none yet: starting.
        assert_eq!(
            render_board('⠋', t, "advisers", &runs[..1], 200),
            render('⠋', t, Agent::Codex, &a, 200)
        );
        assert_eq!(render_board('⠋', t, "peers", &[], 200), "⠋ 40s · starting");
        assert_eq!(
            activity(&runs),
            "3 peers (1 done) · codex: $ cargo test · claude: starting · 1.5k tokens"
        );
        assert_eq!(activity(&runs[..1]), "codex: $ cargo test · 1.0k tokens");
    }
}

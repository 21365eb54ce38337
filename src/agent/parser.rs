//! What every adapter's parser shares: how the process ended, what was
//! understood of it (`Outcome`), and the `Parser` enum the pump feeds.

use super::{acp, agy, claude, codex, gemini_cli, opencode, pi, qwen};
use crate::result::{Denial, Usage};

/// How the peer process ended, as far as the parser needs to know.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessExit {
    /// Exit code, `None` if killed by a signal.
    pub code: Option<i32>,
    /// The last bytes of stderr, for error messages (CLIs that report errors there).
    pub stderr_tail: String,
}

/// What the parser understood of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// The CLI's own success marker was seen (and no failure marker).
    pub success: bool,
    /// A failure reported by the CLI (model/API error), if any.
    pub error: Option<String>,
    /// What kind of failure `error` is, when the CLI's output names it
    /// beyond doubt (`None`: `agent_error`).
    pub failure: Option<crate::failure::Named>,
    pub session: Option<String>,
    pub message: Option<String>,
    pub usage: Usage,
    /// The model the CLI said it used.
    pub model: Option<String>,
    pub denials: Vec<Denial>,
    /// Notes for the result's `warnings` (e.g. non-fatal CLI errors).
    pub warnings: Vec<String>,
    /// The output could not be understood at all (no recognised event).
    pub unparsable: bool,
}

/// What a single line told the supervisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Nothing,
    /// The CLI reported that its turn is over (success or failure). If the
    /// process does not exit shortly after, it is hung (codex is known to).
    TurnFinished,
}

/// Streaming parser state for one run, per CLI. Fed one line at a time so
/// memory stays flat however much the peer prints.
#[derive(Debug)]
pub enum Parser {
    Codex(codex::Parser),
    Claude(claude::Parser),
    Agy(agy::Parser),
    Pi(pi::Parser),
    GeminiCli(gemini_cli::Parser),
    Opencode(opencode::Parser),
    Qwen(qwen::Parser),
    /// An ACP client: it parses and, while it drives a run, answers.
    Acp(Box<acp::Client>),
}

impl Parser {
    pub fn feed(&mut self, line: &[u8]) -> Signal {
        let line = trim_line(line);
        if line.is_empty() {
            return Signal::Nothing;
        }
        match self {
            Parser::Codex(p) => p.feed(line),
            Parser::Claude(p) => p.feed(line),
            Parser::Agy(p) => p.feed(line),
            Parser::Pi(p) => p.feed(line),
            Parser::GeminiCli(p) => p.feed(line),
            Parser::Opencode(p) => p.feed(line),
            Parser::Qwen(p) => p.feed(line),
            Parser::Acp(p) => p.feed(line),
        }
    }

    pub fn finish(self, end: &ProcessExit) -> Outcome {
        match self {
            Parser::Codex(p) => p.finish(end),
            Parser::Claude(p) => p.finish(end),
            Parser::Agy(p) => p.finish(end),
            Parser::Pi(p) => p.finish(end),
            Parser::GeminiCli(p) => p.finish(end),
            Parser::Opencode(p) => p.finish(end),
            Parser::Qwen(p) => p.finish(end),
            Parser::Acp(p) => p.finish(end),
        }
    }

    /// A copy of what is known so far (for a peer that had to be killed).
    pub fn snapshot(&self, end: &ProcessExit) -> Outcome {
        match self {
            Parser::Codex(p) => p.clone().finish(end),
            Parser::Claude(p) => p.clone().finish(end),
            Parser::Agy(p) => p.clone().finish(end),
            Parser::Pi(p) => p.clone().finish(end),
            Parser::GeminiCli(p) => p.clone().finish(end),
            Parser::Opencode(p) => p.clone().finish(end),
            Parser::Qwen(p) => p.clone().finish(end),
            Parser::Acp(p) => p.as_ref().clone().finish(end),
        }
    }

    /// The ACP client, when this parser is one (it needs stdin kept open).
    pub fn acp(&mut self) -> Option<&mut acp::Client> {
        match self {
            Parser::Acp(c) => Some(c),
            _ => None,
        }
    }
}

fn trim_line(mut line: &[u8]) -> &[u8] {
    while let [rest @ .., b'\r' | b'\n' | b' ' | b'\t'] = line {
        line = rest;
    }
    while let [b' ' | b'\t', rest @ ..] = line {
        line = rest;
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_line_strips_cr_and_spaces() {
        assert_eq!(trim_line(b"  {\"a\":1}\r\n"), b"{\"a\":1}");
        assert_eq!(trim_line(b"\r\n"), b"");
    }
}

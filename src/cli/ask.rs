//! `baton ask`: its flags and the plain `ask::AskRequest` they become.
//! The consultation itself (packet, advisers, repair) lives in `ask`.

use std::path::PathBuf;

use clap::Args;

use crate::ask::{self, AskRequest};
use crate::error::Result;
use crate::output::Mode;

#[derive(Debug, Clone, Args, Default)]
#[command(
    after_help = "The adviser cannot change anything. In packet scope (the default) it \
sees only the packet, with its tools off, in an empty temporary directory; in repo scope it may \
read the repository but not write. Credential-like files are refused (exit 2), secrets are \
redacted, a packet over --max-chars is refused, and a --task-id has a budget of \
BATON_ASK_BUDGET consultations (default 2)."
)]
pub struct AskArgs {
    /// Adviser: codex (default, or ask.agent in the config), claude, zai (glm), pi, gemini-cli, opencode, qwen, copilot, kilo, cline or nanocoder. agy cannot advise: it has no read-only mode.
    #[arg(long, short = 'a', value_name = "NAME", conflicts_with = "agents")]
    pub agent: Option<String>,

    /// Several advisers in parallel, side by side: `codex,claude` (`NAME:MODEL` picks a model).
    #[arg(long, value_name = "A,B,…", value_delimiter = ',')]
    pub agents: Vec<String>,

    /// Model or alias for the adviser(s).
    #[arg(long, short = 'm', value_name = "M")]
    pub model: Option<String>,

    /// Reasoning effort (accepted values depend on the agent).
    #[arg(long, short = 'e', value_name = "E")]
    pub effort: Option<String>,

    /// codex: configuration profile.
    #[arg(long, value_name = "P")]
    pub profile: Option<String>,

    /// pi, opencode: provider (e.g. openai, anthropic, zai); qwen: its --auth-type.
    #[arg(long, value_name = "P")]
    pub provider: Option<String>,

    /// packet (only the packet, tools off, an empty temporary directory) or repo (the repository, read-only) [default: packet, or ask.scope in the config].
    #[arg(long, value_name = "SCOPE")]
    pub scope: Option<String>,

    /// Read the packet from a JSON file (`-` for stdin); flags add to it.
    #[arg(long, value_name = "FILE")]
    pub packet: Option<PathBuf>,

    /// diagnosis, design_critique, code_review, experiment_review or other.
    #[arg(long, value_name = "TYPE")]
    pub help_type: Option<String>,

    /// What you are trying to achieve.
    #[arg(long, value_name = "TEXT")]
    pub goal: Option<String>,

    /// A constraint the advice must respect (repeatable).
    #[arg(long = "constraint", value_name = "TEXT")]
    pub constraints: Vec<String>,

    /// Something already tried (repeatable).
    #[arg(long, value_name = "TEXT")]
    pub tried: Vec<String>,

    /// An observation: an error, a measurement, a symptom (repeatable).
    #[arg(long = "observation", value_name = "TEXT")]
    pub observations: Vec<String>,

    /// Your current hypothesis.
    #[arg(long, value_name = "TEXT")]
    pub hypothesis: Option<String>,

    /// A code or log snippet (repeatable).
    #[arg(long = "snippet", value_name = "TEXT")]
    pub snippets: Vec<String>,

    /// A file to inline, optionally with lines: `src/a.rs`, `src/a.rs:10-40` (repeatable).
    #[arg(long = "file", short = 'f', value_name = "PATH[:A-B]")]
    pub files: Vec<String>,

    /// Include `git diff HEAD` of the working directory, or `--diff=REV` for another base.
    #[arg(long, value_name = "REV", num_args = 0..=1, require_equals = true, default_missing_value = "HEAD")]
    pub diff: Option<String>,

    /// Earlier advice for a second round: a `baton ask` result, bare advice, or text (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub previous_advice: Option<PathBuf>,

    /// The follow-up question of a second round (with --previous-advice).
    #[arg(long, value_name = "TEXT")]
    pub follow_up: Option<String>,

    /// No live status line on stderr (drawn only when stderr is a terminal; also BATON_PROGRESS=0).
    #[arg(long)]
    pub quiet: bool,

    /// Count this consultation against the task's budget.
    #[arg(long, value_name = "ID")]
    pub task_id: Option<String>,

    /// Refuse a packet larger than this many characters (never truncated) [default: 200000, or ask.max_chars].
    #[arg(long, value_name = "N")]
    pub max_chars: Option<usize>,

    /// Directory files, --diff and repo scope refer to (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Stop an adviser after this long.
    #[arg(long, value_name = "DURATION", default_value = "20m")]
    pub timeout: String,

    /// Stop an adviser that prints nothing for this long.
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub idle_timeout: String,

    /// baton's own sandbox for advisers without one: auto (default: where this machine has one), require (fail if it has none) or off [default: run.sandbox].
    #[arg(long, value_name = "MODE")]
    pub sandbox: Option<String>,

    /// Print the packet, the prompt and each adviser's exact argv, and run nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Stop rather than let the advisers (all together) spend more than this many dollars.
    #[arg(long, value_name = "USD")]
    pub max_usd: Option<f64>,

    /// Stop rather than let the advisers (all together) spend more than this many tokens.
    #[arg(long, value_name = "N")]
    pub budget_tokens: Option<u64>,

    /// The question (or give it in --packet, or on stdin).
    #[arg(value_name = "QUESTION")]
    pub question: Vec<String>,
}

pub fn request(a: AskArgs) -> AskRequest {
    AskRequest {
        agent: a.agent,
        agents: a.agents,
        model: a.model,
        effort: a.effort,
        profile: a.profile,
        provider: a.provider,
        scope: a.scope,
        packet: a.packet,
        help_type: a.help_type,
        goal: a.goal,
        constraints: a.constraints,
        tried: a.tried,
        observations: a.observations,
        hypothesis: a.hypothesis,
        snippets: a.snippets,
        files: a.files,
        diff: a.diff,
        previous_advice: a.previous_advice,
        follow_up: a.follow_up,
        task_id: a.task_id,
        max_chars: a.max_chars,
        cwd: a.cwd,
        timeout: a.timeout,
        idle_timeout: a.idle_timeout,
        sandbox: a.sandbox,
        dry_run: a.dry_run,
        max_usd: a.max_usd,
        budget_tokens: a.budget_tokens,
        question: a.question,
    }
}

pub fn command(a: AskArgs, mode: Mode) -> Result<i32> {
    let mut progress = crate::view::progress::wanted(a.quiet)
        .then(|| crate::view::progress::Progress::install("advisers"));
    // Erased once the advisers have ended, before the result (or an error) prints.
    ask::command(request(a), mode, &mut || drop(progress.take()))
}

/// `baton ask ARGS…` parsed as the command line would, for unit tests.
#[cfg(test)]
pub fn parse_for_test(args: &[&str]) -> AskRequest {
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: AskArgs,
    }
    request(
        T::try_parse_from(std::iter::once("ask").chain(args.iter().copied()))
            .unwrap()
            .a,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> AskRequest {
        parse_for_test(args)
    }

    #[test]
    fn diff_flag_forms() {
        assert_eq!(parse(&["q"]).diff, None);
        assert_eq!(parse(&["--diff", "q"]).diff.as_deref(), Some("HEAD"));
        assert_eq!(parse(&["--diff=main", "q"]).diff.as_deref(), Some("main"));
        // `--diff q` does not swallow the question.
        assert_eq!(parse(&["--diff", "q"]).question, ["q"]);
    }
}

//! `baton ask`: a read-only second opinion that comes back as structured
//! advice.
//!
//! Theory of operation:
//! 1. The packet is built before any adviser exists (`packet`): files and a
//!    diff are read by baton, credential-like paths refused, secrets redacted
//!    (`redact`), the size limit enforced on exactly the text to be sent.
//! 2. Each adviser is an ordinary `run::Plan` with read-only access and, in
//!    packet scope, every tool the CLI lets baton switch off switched off and
//!    an empty private temporary directory as its cwd. Unsafe advisers (agy)
//!    are refused before anything runs. The same supervisor as `baton run`
//!    runs it (`run::execute`).
//! 3. The answer is validated against the advice schema (`advice`). Invalid
//!    advice gets one repair round (the adviser's session resumed, or a fresh
//!    run shown its own answer); after that the result is `failed` and
//!    carries the raw text, never invented fields.
//! 4. `--agents a,b` runs advisers on threads, each with its own supervisor
//!    subscribed to Ctrl-C, and reports them side by side.
//!
//! A `task_id` draws on a small per-task budget (`budget`) so an agent cannot
//! loop on advice.

pub mod advice;
pub mod budget;
pub mod packet;

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use self::advice::Scope;
use self::budget::Budget;
use self::packet::{Built, DiffSource, FileInfo};
use crate::error::{Error, Result};
use crate::output::{self, Mode};
use crate::process::Interrupts;
use crate::redact::{Counts, Redactor};
use crate::result::RunResult;
use crate::run::{self, Depth};
use crate::{fsutil, ids};
pub mod adviser;
pub mod consult;
pub mod packet_input;
mod report;

pub use report::Envelope;

use adviser::{advisers, prepare};
use consult::consult;
use packet_input::packet_input;
use report::{dry_run, error_result, multi_envelope, print_one, text_of};

/// What the caller asks of `baton ask`, as given (plain values; the
/// command line is parsed in `cli::ask`).
#[derive(Debug, Clone, Default)]
pub struct AskRequest {
    /// Adviser: codex (default), claude, zai (glm), pi, gemini-cli, opencode, qwen, copilot, kilo, cline or nanocoder. agy cannot advise: it has no read-only mode.
    pub agent: Option<String>,

    /// Several advisers in parallel, side by side: `codex,claude` (`NAME:MODEL` picks a model).
    pub agents: Vec<String>,

    /// Model or alias for the adviser(s).
    pub model: Option<String>,

    /// Reasoning effort (accepted values depend on the agent).
    pub effort: Option<String>,

    /// codex: configuration profile.
    pub profile: Option<String>,

    /// pi, opencode: provider (e.g. openai, anthropic, zai); qwen: its --auth-type.
    pub provider: Option<String>,

    /// packet (only the packet, tools off, an empty temporary directory) or
    /// repo (the repository, read-only). `None`: `ask.scope` of the config, else packet.
    pub scope: Option<String>,

    /// Read the packet from a JSON file (`-` for stdin); flags add to it.
    pub packet: Option<PathBuf>,

    /// diagnosis, design_critique, code_review, experiment_review or other.
    pub help_type: Option<String>,

    /// What you are trying to achieve.
    pub goal: Option<String>,

    /// A constraint the advice must respect (repeatable).
    pub constraints: Vec<String>,

    /// Something already tried (repeatable).
    pub tried: Vec<String>,

    /// An observation: an error, a measurement, a symptom (repeatable).
    pub observations: Vec<String>,

    /// Your current hypothesis.
    pub hypothesis: Option<String>,

    /// A code or log snippet (repeatable).
    pub snippets: Vec<String>,

    /// A file to inline, optionally with lines: `src/a.rs`, `src/a.rs:10-40` (repeatable).
    pub files: Vec<String>,

    /// Include `git diff HEAD` of the working directory, or `--diff=REV` for another base.
    pub diff: Option<String>,

    /// Earlier advice for a second round: a `baton ask` result, bare advice, or text (`-` for stdin).
    pub previous_advice: Option<PathBuf>,

    /// The follow-up question of a second round (with --previous-advice).
    pub follow_up: Option<String>,

    /// Count this consultation against the task's budget.
    pub task_id: Option<String>,

    /// Refuse a packet larger than this many characters (never truncated).
    /// `None`: `ask.max_chars` of the config, else `packet::DEFAULT_MAX_CHARS`.
    pub max_chars: Option<usize>,

    /// Directory files, --diff and repo scope refer to (default: the current directory).
    pub cwd: Option<PathBuf>,

    /// Stop an adviser after this long.
    pub timeout: String,

    /// Stop an adviser that prints nothing for this long.
    pub idle_timeout: String,

    /// `--sandbox`: baton's sandbox for the advisers (`None`: `run.sandbox`).
    pub sandbox: Option<String>,

    /// Print the packet, the prompt and each adviser's exact argv, and run nothing.
    pub dry_run: bool,

    /// `--max-usd`: dollars every adviser call together may spend.
    pub max_usd: Option<f64>,

    /// `--budget-tokens`: input + output tokens every adviser call together may spend.
    pub budget_tokens: Option<u64>,

    /// The question (or give it in --packet, or on stdin).
    pub question: Vec<String>,
}

/// What the result says about what was sent.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(rename = "AskContext")]
pub struct Context {
    pub scope: Scope,
    /// Characters of the whole prompt sent to each adviser (brief + packet).
    pub chars_sent: usize,
    /// Characters of the packet (the limit applies to this).
    pub packet_chars: usize,
    pub max_chars: usize,
    /// SHA-256 of the packet as sent.
    pub packet_sha256: String,
    pub files: Vec<FileInfo>,
    pub diff_chars: Option<usize>,
    /// Redactions per kind.
    pub redactions: Counts,
    pub redacted_total: usize,
}

/// The shared facts every adviser's result carries.
struct Shared {
    root: PathBuf,
    scope: Scope,
    request_id: String,
    context: Context,
    budget: Option<Budget>,
}

/// `peers_ended` is called once every adviser has ended, before anything
/// is printed (the command line erases its live line there).
pub fn command(args: AskRequest, mode: Mode, peers_ended: &mut dyn FnMut()) -> Result<i32> {
    // Before reading a single file: a delegated peer may not consult either.
    Depth::from_env().check()?;
    // What the request leaves open comes from the config.
    let cfg = crate::config::active();
    let scope = parse_scope(
        &args
            .scope
            .clone()
            .or_else(|| cfg.string("ask.scope"))
            .unwrap_or_else(|| "packet".into()),
    )?;
    let max_chars = args
        .max_chars
        .or_else(|| cfg.count("ask.max_chars").map(|n| n as usize))
        .unwrap_or(packet::DEFAULT_MAX_CHARS);
    let (advisers, multi) = advisers(&args)?;
    // One meter for every adviser and every repair round of this ask.
    let meter = crate::spend::Meter::new(run::budget(args.max_usd, args.budget_tokens)?);
    if max_chars == 0 {
        return Err(Error::usage("--max-chars must be more than zero"));
    }
    let cwd = run::resolve_cwd(args.cwd.as_deref())?;
    let root = fsutil::project_root(&cwd);
    let input = packet_input(&args)?;
    let diff = match &args.diff {
        Some(rev) => DiffSource::Git(rev.clone()),
        None => DiffSource::None,
    };
    let built = packet::build(input, &diff, &cwd, &Redactor::from_env(), max_chars)?;
    let task_id = built
        .task_id
        .as_deref()
        .map(budget::normalize_task_id)
        .transpose()?;
    let limit = match &task_id {
        Some(_) => Some(budget::limit_from_env()?),
        None => None,
    };
    let prompt = advice::prompt(scope, &cwd.display().to_string(), &built.text);
    let context = context(scope, &built, &prompt, max_chars);
    let request_id = ids::new_id();

    // From here on temporary directories exist: a Ctrl-C must let them be
    // cleaned up (and stops any adviser that starts after it).
    let interrupts = Interrupts::install()?;
    // Every usage problem surfaces here, before the budget is touched.
    let mut prepared = Vec::new();
    for a in &advisers {
        match prepare(a, &args, scope, &cwd, &root, &prompt) {
            Ok(mut p) => {
                run::check_plan_priced(&p.plan, meter.budget().max_usd)?;
                p.plan.budget = meter.budget();
                p.plan.meter = Some(meter.clone());
                prepared.push(Ok(p))
            }
            Err(e @ Error::NotInstalled { .. }) if multi => prepared.push(Err((a.agent, e))),
            Err(e) => return Err(e),
        }
    }
    if prepared.iter().all(|p| p.is_err()) {
        let (_, e) = prepared
            .into_iter()
            .find_map(|p| p.err())
            .expect("advisers");
        return Err(e);
    }

    // Before a consultation of the budget is spent on advisers that could
    // not reach their models.
    if let Some(code) = crate::run::gate::pass(args.dry_run, mode, || {
        Ok(dry_run(&request_id, &context, &prompt, &built, &prepared))
    })? {
        return Ok(code);
    }

    if let Some(sig) = interrupts.fired() {
        return Err(Error::Interrupted {
            signal: crate::process::signal_name(sig),
        });
    }
    let budget = match (&built.task_id, limit) {
        (Some(t), Some(l)) => Some(budget::consume(&budget::dir(&root)?, t, l, &request_id)?),
        _ => None,
    };
    let shared = Shared {
        root,
        scope,
        request_id,
        context,
        budget,
    };

    if !multi {
        let p = prepared.pop().expect("one adviser").map_err(|(_, e)| e)?;
        let r = consult(&p, &shared, &mut interrupts.clone());
        peers_ended();
        let r = r?;
        print_one(&r, mode)?;
        return Ok(r.status.exit_code());
    }

    let started = std::time::Instant::now();
    let results: Vec<RunResult> = std::thread::scope(|s| {
        let handles: Vec<_> = prepared
            .iter()
            .map(|p| {
                let mut ints = interrupts.clone();
                let shared = &shared;
                s.spawn(move || match p {
                    Ok(p) => consult(p, shared, &mut ints)
                        .unwrap_or_else(|e| error_result(p.plan.agent, &e, shared)),
                    Err((agent, e)) => error_result(*agent, e, shared),
                })
            })
            .collect();
        handles
            .into_iter()
            .zip(&prepared)
            .map(|(h, p)| {
                h.join().unwrap_or_else(|_| {
                    let agent = match p {
                        Ok(p) => p.plan.agent,
                        Err((a, _)) => *a,
                    };
                    error_result(
                        agent,
                        &Error::Internal("the adviser's thread panicked".into()),
                        &shared,
                    )
                })
            })
            .collect()
    });
    drop(prepared);
    peers_ended();
    let (value, code) = multi_envelope(&shared, results, started.elapsed(), meter.report());
    match mode {
        Mode::Json => output::json_line(&value)?,
        Mode::Text => {
            let mut t = format!("{}\n", value["summary"].as_str().unwrap_or_default());
            if let Some(rs) = value["results"].as_array() {
                for r in rs {
                    if let Ok(r) = serde_json::from_value::<RunResult>(r.clone()) {
                        t.push('\n');
                        t.push_str(&text_of(&r));
                    }
                }
            }
            output::text(&t)?;
        }
    }
    Ok(code)
}

pub(crate) fn parse_scope(s: &str) -> Result<Scope> {
    match s.trim().to_ascii_lowercase().as_str() {
        "packet" => Ok(Scope::Packet),
        "repo" | "repository" => Ok(Scope::Repo),
        _ => Err(Error::usage_hint(
            format!("unknown scope `{s}`"),
            "use packet (only the packet) or repo (the repository, read-only)",
        )),
    }
}

fn context(scope: Scope, built: &Built, prompt: &str, max_chars: usize) -> Context {
    Context {
        scope,
        chars_sent: prompt.chars().count(),
        packet_chars: built.text.chars().count(),
        max_chars,
        packet_sha256: built.sha256.clone(),
        files: built.files.clone(),
        diff_chars: built.diff_chars,
        redacted_total: built.redactions.values().sum(),
        redactions: built.redactions.clone(),
    }
}

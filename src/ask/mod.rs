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
pub mod redact;

use std::io::IsTerminal;
use std::io::Write as _;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;
use serde_json::{Value, json};

use self::advice::{Checked, Scope};
use self::budget::Budget;
use self::packet::{Built, DiffSource, FileInfo, FileRef, HelpType, PacketInput, Snippet};
use self::redact::{Counts, Redactor};
use crate::agent::{Agent, CommandSpec, Extra, qwen};
use crate::cli::RunArgs;
use crate::error::{Error, Result};
use crate::output::{self, Mode};
use crate::process::Interrupts;
use crate::result::{ErrorInfo, RunResult, SCHEMA_VERSION, Status};
use crate::run::{self, Depth, Plan};
use crate::{fsutil, ids};

#[derive(Debug, Clone, Args, Default)]
#[command(
    after_help = "The adviser cannot change anything. In packet scope (the default) it \
sees only the packet, with its tools off, in an empty temporary directory; in repo scope it may \
read the repository but not write. Credential-like files are refused (exit 2), secrets are \
redacted, a packet over --max-chars is refused, and a --task-id has a budget of \
BATON_ASK_BUDGET consultations (default 2)."
)]
pub struct AskArgs {
    /// Adviser: codex (default), claude, zai (glm), pi, gemini-cli, opencode or qwen. agy cannot advise: it has no read-only mode.
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

    /// pi: provider (e.g. openai, anthropic, zai).
    #[arg(long, value_name = "P")]
    pub provider: Option<String>,

    /// packet (only the packet, tools off, an empty temporary directory) or repo (the repository, read-only).
    #[arg(long, value_name = "SCOPE", default_value = "packet")]
    pub scope: String,

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

    /// Count this consultation against the task's budget.
    #[arg(long, value_name = "ID")]
    pub task_id: Option<String>,

    /// Refuse a packet larger than this many characters (never truncated).
    #[arg(long, value_name = "N", default_value_t = packet::DEFAULT_MAX_CHARS)]
    pub max_chars: usize,

    /// Directory files, --diff and repo scope refer to (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Stop an adviser after this long.
    #[arg(long, value_name = "DURATION", default_value = "20m")]
    pub timeout: String,

    /// Stop an adviser that prints nothing for this long.
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub idle_timeout: String,

    /// Print the packet, the prompt and each adviser's exact argv, and run nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// The question (or give it in --packet, or on stdin).
    #[arg(value_name = "QUESTION")]
    pub question: Vec<String>,
}

/// What the result says about what was sent.
#[derive(Debug, Clone, Serialize)]
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

/// One adviser, as asked for on the command line.
#[derive(Debug, Clone, PartialEq)]
struct AdviserSpec {
    agent: Agent,
    model: Option<String>,
}

/// An adviser ready to run.
struct Prepared {
    plan: Plan,
    spec: CommandSpec,
    program: PathBuf,
    extra: Extra,
    /// Packet scope: the private empty directory (removed on drop).
    workdir: Option<EmptyDir>,
}

/// The shared facts every adviser's result carries.
struct Shared {
    root: PathBuf,
    scope: Scope,
    request_id: String,
    context: Context,
    budget: Option<Budget>,
}

/// A private, empty, temporary directory, removed when dropped.
struct EmptyDir(PathBuf);

impl EmptyDir {
    fn new() -> Result<EmptyDir> {
        let p = std::env::temp_dir().join(format!("baton-ask-{}", ids::new_id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&p)
            .map_err(|e| Error::io(format!("creating {}", p.display()), e))?;
        match p.canonicalize() {
            Ok(c) => Ok(EmptyDir(c)),
            Err(e) => {
                let _ = std::fs::remove_dir(&p);
                Err(Error::io(format!("resolving {}", p.display()), e))
            }
        }
    }

    fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(&self.0)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Drop for EmptyDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn command(args: AskArgs, mode: Mode) -> Result<i32> {
    // Before reading a single file: a delegated peer may not consult either.
    Depth::from_env().check()?;
    let scope = parse_scope(&args.scope)?;
    let (advisers, multi) = advisers(&args)?;
    if args.max_chars == 0 {
        return Err(Error::usage("--max-chars must be more than zero"));
    }
    let cwd = run::resolve_cwd(args.cwd.as_deref())?;
    let root = fsutil::project_root(&cwd);
    let input = packet_input(&args)?;
    let diff = match &args.diff {
        Some(rev) => DiffSource::Git(rev.clone()),
        None => DiffSource::None,
    };
    let built = packet::build(input, &diff, &cwd, &Redactor::from_env(), args.max_chars)?;
    let limit = match &built.task_id {
        Some(t) => {
            budget::validate_task_id(t)?;
            Some(budget::limit_from_env()?)
        }
        None => None,
    };
    let prompt = advice::prompt(scope, &cwd.display().to_string(), &built.text);
    let context = context(scope, &built, &prompt, args.max_chars);
    let request_id = ids::new_id();

    // From here on temporary directories exist: a Ctrl-C must let them be
    // cleaned up (and stops any adviser that starts after it).
    let interrupts = Interrupts::install()?;
    // Every usage problem surfaces here, before the budget is touched.
    let mut prepared = Vec::new();
    for a in &advisers {
        match prepare(a, &args, scope, &cwd, &root, &prompt) {
            Ok(p) => prepared.push(Ok(p)),
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

    if args.dry_run {
        output::json_line(&dry_run(&request_id, &context, &prompt, &built, &prepared));
        return Ok(0);
    }

    if let Some(sig) = interrupts.fired() {
        return Err(Error::Interrupted {
            signal: crate::process::signal_name(sig),
        });
    }
    let budget = match (&built.task_id, limit) {
        (Some(t), Some(l)) => Some(budget::consume(&root, t, l, &request_id)?),
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
        let r = consult(&p, &shared, &mut interrupts.clone())?;
        print_one(&r, mode);
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
    let (value, code) = multi_envelope(&shared, results, started.elapsed());
    match mode {
        Mode::Json => output::json_line(&value),
        Mode::Text => {
            println!("{}", value["summary"].as_str().unwrap_or_default());
            if let Some(rs) = value["results"].as_array() {
                for r in rs {
                    if let Ok(r) = serde_json::from_value::<RunResult>(r.clone()) {
                        println!();
                        print_text(&r);
                    }
                }
            }
        }
    }
    Ok(code)
}

fn parse_scope(s: &str) -> Result<Scope> {
    match s.trim().to_ascii_lowercase().as_str() {
        "packet" => Ok(Scope::Packet),
        "repo" | "repository" => Ok(Scope::Repo),
        _ => Err(Error::usage_hint(
            format!("unknown scope `{s}`"),
            "use packet (only the packet) or repo (the repository, read-only)",
        )),
    }
}

/// The advisers asked for, and whether the multi-adviser envelope is wanted.
fn advisers(args: &AskArgs) -> Result<(Vec<AdviserSpec>, bool)> {
    let mut out = Vec::new();
    let multi = !args.agents.is_empty();
    let names: Vec<String> = if multi {
        args.agents.clone()
    } else {
        vec![args.agent.clone().unwrap_or_else(|| "codex".into())]
    };
    for n in names {
        let n = n.trim();
        if n.is_empty() {
            return Err(Error::usage("--agents has an empty name"));
        }
        let (name, model) = match n.split_once(':') {
            Some((a, m)) if !m.trim().is_empty() => (a, Some(m.trim().to_string())),
            Some((a, _)) => (a, None),
            None => (n, None),
        };
        let agent = Agent::parse(name)?;
        if !agent
            .supported_access()
            .contains(&crate::agent::Access::ReadOnly)
        {
            return Err(Error::Refused {
                kind: "unsupported_access",
                message: format!(
                    "`{}` (agy) cannot be an adviser: it has no enforceable read-only mode (its \
                     sandbox confines terminal commands only, not its file tools)",
                    agent.name()
                ),
                hint: "ask codex, claude, pi, zai, gemini-cli, opencode or qwen instead".into(),
            });
        }
        out.push(AdviserSpec {
            agent,
            model: model.or_else(|| args.model.clone()),
        });
    }
    for (flag, set, agents) in [
        ("--profile", args.profile.is_some(), &[Agent::Codex][..]),
        (
            "--provider",
            args.provider.is_some(),
            &Agent::TAKES_PROVIDER[..],
        ),
    ] {
        if set && !out.iter().any(|a| agents.contains(&a.agent)) {
            return Err(Error::usage(format!(
                "{flag} applies to {} only, which is not among the advisers",
                agents
                    .iter()
                    .map(|a| a.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok((out, multi))
}

/// The packet from `--packet`, with flags added (scalars replace, lists append).
fn packet_input(args: &AskArgs) -> Result<PacketInput> {
    let stdin = Path::new("-");
    if args.packet.as_deref() == Some(stdin) && args.previous_advice.as_deref() == Some(stdin) {
        return Err(Error::usage(
            "--packet and --previous-advice cannot both read stdin",
        ));
    }
    let mut input = match &args.packet {
        Some(p) => PacketInput::parse(
            &packet::read_source(p, "--packet")?,
            &p.display().to_string(),
        )?,
        None => PacketInput::default(),
    };
    if !args.question.is_empty() {
        input.question = Some(args.question.join(" "));
    }
    if let Some(h) = &args.help_type {
        input.help_type = Some(HelpType::parse(h)?);
    }
    for (field, flag) in [
        (&mut input.goal, &args.goal),
        (&mut input.hypothesis, &args.hypothesis),
        (&mut input.follow_up, &args.follow_up),
        (&mut input.task_id, &args.task_id),
    ] {
        if flag.is_some() {
            field.clone_from(flag);
        }
    }
    PacketInput::extend_list(&mut input.constraints, &args.constraints);
    PacketInput::extend_list(&mut input.tried, &args.tried);
    PacketInput::extend_list(&mut input.observations, &args.observations);
    input
        .snippets
        .extend(args.snippets.iter().cloned().map(Snippet::Text));
    input
        .files
        .extend(args.files.iter().cloned().map(FileRef::Spec));
    if let Some(p) = &args.previous_advice {
        let text = packet::read_source(p, "--previous-advice")?;
        input.previous_advice = Some(packet::previous_advice(&text));
    }
    let stdin_free =
        args.packet.as_deref() != Some(stdin) && args.previous_advice.as_deref() != Some(stdin);
    if input.question.is_none() && stdin_free && !std::io::stdin().is_terminal() {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .map_err(|e| Error::io("reading the question from stdin", e))?;
        if !s.trim().is_empty() {
            input.question = Some(s);
        }
    }
    Ok(input)
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

/// The switches that make an adviser safe, beyond read-only access.
fn extra_for(agent: Agent, scope: Scope, schema_path: &Path) -> Extra {
    Extra {
        no_tools: scope == Scope::Packet,
        // qwen's `--json-schema` ends the turn on the first valid answer.
        output_schema: matches!(agent, Agent::Claude | Agent::Codex | Agent::Qwen)
            .then(|| (advice::SCHEMA.to_string(), schema_path.to_path_buf())),
        ..Extra::default()
    }
}

/// Where codex reads the schema from (a constant file, versioned by name).
fn schema_path(root: &Path) -> PathBuf {
    root.join(".baton")
        .join("ask")
        .join("advice-schema-v1.json")
}

fn prepare(
    a: &AdviserSpec,
    args: &AskArgs,
    scope: Scope,
    cwd: &Path,
    root: &Path,
    prompt: &str,
) -> Result<Prepared> {
    let workdir = match scope {
        Scope::Packet => Some(EmptyDir::new()?),
        Scope::Repo => None,
    };
    let dir = workdir.as_ref().map_or(cwd, |w| w.0.as_path());
    let run_args = RunArgs {
        agent: Some(a.agent.name().to_string()),
        model: a.model.clone(),
        effort: args.effort.clone(),
        read_only: true,
        cwd: Some(dir.to_path_buf()),
        timeout: args.timeout.clone(),
        idle_timeout: args.idle_timeout.clone(),
        profile: args.profile.clone().filter(|_| a.agent == Agent::Codex),
        provider: args
            .provider
            .clone()
            .filter(|_| Agent::TAKES_PROVIDER.contains(&a.agent)),
        raw: true,
        ..RunArgs::default()
    };
    let mut plan = run::plan(&run_args, prompt.to_string())?;
    // State (run logs, codex usage records) stays in the caller's project,
    // never in the adviser's empty directory.
    plan.root = root.to_path_buf();
    let extra = extra_for(a.agent, scope, &schema_path(root));
    let spec = plan.command_with(extra.clone())?;
    let program = plan.program(&spec)?;
    Ok(Prepared {
        plan,
        spec,
        program,
        extra,
        workdir,
    })
}

fn dry_run(
    request_id: &str,
    context: &Context,
    prompt: &str,
    built: &Built,
    prepared: &[std::result::Result<Prepared, (Agent, Error)>],
) -> Value {
    let advisers: Vec<Value> = prepared
        .iter()
        .map(|p| match p {
            Ok(p) => {
                let mut v = run::dry_run_json(&p.plan, &p.spec);
                if let Some(o) = v.as_object_mut() {
                    for k in ["schema_version", "dry_run", "prompt"] {
                        o.remove(k);
                    }
                }
                v
            }
            Err((agent, e)) => json!({
                "agent": agent.name(),
                "error": {"kind": e.kind(), "message": e.to_string(), "hint": e.hint()},
            }),
        })
        .collect();
    json!({
        "schema_version": SCHEMA_VERSION,
        "dry_run": true,
        "request_id": request_id,
        "context": context,
        "packet": serde_json::from_str::<Value>(&built.text).unwrap_or(Value::Null),
        "prompt": prompt,
        "advice_schema": advice::schema_value(),
        "advisers": advisers,
    })
}

/// Ask one adviser, with at most one repair round.
fn consult(p: &Prepared, shared: &Shared, interrupts: &mut Interrupts) -> Result<RunResult> {
    if p.extra.output_schema.is_some() && p.plan.agent == Agent::Codex {
        // `.baton/` first, so it gets its `.gitignore` before anything lands in it.
        fsutil::baton_dir(&shared.root)?;
        let path = schema_path(&shared.root);
        fsutil::ensure_private_dir(path.parent().expect("schema dir"))?;
        fsutil::write_atomic(&path, advice::SCHEMA.as_bytes())?;
    }
    let (_, dir) = run::new_run_dir(&shared.root)?;
    let first = run::execute(&p.plan, &p.spec, &p.program, &dir, interrupts, &mut |_| {})?;
    let mut repair = None;
    let plain = qwen::answered_in_plain_text(first.error.as_ref().map(|e| e.message.as_str()));
    let (mut result, verdict) = if first.status != Status::Success && !plain {
        (first, Verdict::RunFailed)
    } else {
        // qwen fails a `--json-schema` turn answered in prose: that is an
        // invalid answer like any other, so it gets the repair round.
        let checked = advice::extract(first.message.as_deref().unwrap_or(""));
        let checked = match checked {
            Ok(_) if plain => Err(vec![
                "the answer was prose, not a call of the structured_output tool".to_string(),
            ]),
            c => c,
        };
        match checked {
            Ok(c) => (first, Verdict::Valid(c)),
            Err(errors) => {
                let raw = first.message.clone().unwrap_or_default();
                let mut plan = p.plan.clone();
                let how = match &first.session {
                    Some(s) => {
                        plan.resume = Some(s.clone());
                        plan.prompt = advice::repair_in_session(&errors);
                        "resume"
                    }
                    None => {
                        plan.resume = None;
                        plan.prompt = advice::repair_fresh(&errors, &raw);
                        "fresh"
                    }
                };
                plan.task = plan.prompt.clone();
                let spec = plan.command_with(p.extra.clone())?;
                let rdir = dir.join("repair");
                fsutil::ensure_private_dir(&rdir)?;
                let second =
                    run::execute(&plan, &spec, &p.program, &rdir, interrupts, &mut |_| {})?;
                repair = Some(json!({
                    "mode": how,
                    "errors": errors,
                    "first_answer": raw,
                    "log_path": second.log_path,
                }));
                let verdict = if second.status != Status::Success {
                    Verdict::RunFailed
                } else {
                    match advice::extract(second.message.as_deref().unwrap_or("")) {
                        Ok(c) => Verdict::Valid(c),
                        Err(e) => Verdict::Invalid(e),
                    }
                };
                (merge(first, second), verdict)
            }
        }
    };

    if let Some(w) = &p.workdir {
        result
            .warnings
            .retain(|w| !w.starts_with("cwd is not in a git repository"));
        let left = w.leftovers();
        if !left.is_empty() {
            result.warnings.push(format!(
                "the adviser left files in its empty directory despite read-only access: {}",
                left.join(", ")
            ));
        }
    } else if !result.changed_files.is_empty() {
        result.warnings.push(format!(
            "the adviser changed files despite read-only access: {}",
            result.changed_files.join(", ")
        ));
    }

    let took = format!("{:.1}s", result.duration_ms as f64 / 1000.0);
    let mut advice_value = Value::Null;
    match verdict {
        Verdict::Valid(Checked { advice, notes }) => {
            result.warnings.extend(notes);
            result.summary = format!(
                "{} advised in {took} (confidence {}): {}",
                result.agent,
                advice.confidence.as_str(),
                crate::agent::clip(
                    advice
                        .recommendation
                        .lines()
                        .find(|l| !l.trim().is_empty())
                        .unwrap_or(""),
                    120
                )
            );
            advice_value = advice::to_value(&advice);
        }
        Verdict::Invalid(errors) => {
            result.status = Status::Failed;
            result.summary = format!(
                "{} failed after {took}: its answer was not valid advice, even after one repair \
                 attempt",
                result.agent
            );
            result.error = Some(ErrorInfo {
                kind: "invalid_advice".into(),
                message: format!(
                    "the adviser's answer is not valid advice after one repair attempt: {}",
                    errors.join("; ")
                ),
                hint: Some(
                    "the raw answers are in `message` and `repair.first_answer`; read them, or \
                     ask again"
                        .into(),
                ),
            });
            result.extra.insert("advice_errors".into(), json!(errors));
        }
        Verdict::RunFailed => {}
    }
    let extra = &mut result.extra;
    extra.insert("request_id".into(), json!(shared.request_id));
    extra.insert("advice".into(), advice_value);
    extra.insert("context".into(), json!(shared.context));
    extra.insert("repair".into(), repair.unwrap_or(Value::Null));
    if let Some(b) = &shared.budget {
        extra.insert("budget".into(), json!(b));
    }
    let bytes = serde_json::to_vec(&result).map_err(|e| Error::Internal(e.to_string()))?;
    fsutil::write_atomic(&dir.join("result.json"), &bytes)?;
    Ok(result)
}

enum Verdict {
    Valid(Checked),
    Invalid(Vec<String>),
    /// The adviser itself failed (error, timeout, cancelled): its run's
    /// status and error stand.
    RunFailed,
}

/// The repair round's result, with the two rounds' costs added up and the
/// first round's log kept as the main log.
fn merge(first: RunResult, mut second: RunResult) -> RunResult {
    second.usage.add(&first.usage);
    second.duration_ms += first.duration_ms;
    second.log_path = first.log_path;
    let mut warnings = first.warnings;
    for w in second.warnings {
        if !warnings.contains(&w) {
            warnings.push(w);
        }
    }
    second.warnings = warnings;
    let mut changed = first.changed_files;
    for f in second.changed_files {
        if !changed.contains(&f) {
            changed.push(f);
        }
    }
    second.changed_files = changed;
    let mut denials = first.denials;
    denials.extend(second.denials);
    second.denials = denials;
    second.session = second.session.or(first.session);
    second
}

/// A result for an adviser that could not be run at all (multi-adviser mode).
fn error_result(agent: Agent, e: &Error, shared: &Shared) -> RunResult {
    let mut extra = serde_json::Map::new();
    extra.insert("request_id".into(), json!(shared.request_id));
    extra.insert("advice".into(), Value::Null);
    extra.insert("context".into(), json!(shared.context));
    extra.insert("repair".into(), Value::Null);
    RunResult {
        schema_version: SCHEMA_VERSION,
        status: Status::Error,
        summary: format!("{}: {e}", agent.name()),
        message: None,
        agent: agent.name().to_string(),
        model: None,
        effort: None,
        access: crate::agent::Access::ReadOnly.as_str().to_string(),
        cwd: String::new(),
        session: None,
        changed_files: Vec::new(),
        usage: Default::default(),
        duration_ms: 0,
        exit_code: None,
        log_path: None,
        warnings: Vec::new(),
        denials: Vec::new(),
        error: Some(ErrorInfo {
            kind: e.kind().to_string(),
            message: e.to_string(),
            hint: e.hint(),
        }),
        verification: None,
        job_id: None,
        extra,
    }
}

/// Several advisers side by side. The exit code is the shared status's when
/// they all ended alike, else 1 (`partial`: some advice, not all).
fn multi_envelope(
    shared: &Shared,
    results: Vec<RunResult>,
    wall: std::time::Duration,
) -> (Value, i32) {
    let statuses: Vec<Status> = results.iter().map(|r| r.status).collect();
    let first = statuses[0];
    let (status, code) = if statuses.iter().all(|s| *s == first) {
        (first.as_str().to_string(), first.exit_code())
    } else if statuses.contains(&Status::Success) {
        ("partial".to_string(), crate::error::exit::FAILED)
    } else {
        ("failed".to_string(), crate::error::exit::FAILED)
    };
    let ok = statuses.iter().filter(|s| **s == Status::Success).count();
    let summary = format!(
        "{ok} of {} advisers answered in {:.1}s: {}",
        results.len(),
        wall.as_secs_f64(),
        results
            .iter()
            .map(|r| format!("{} {}", r.agent, r.status.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut v = json!({
        "schema_version": SCHEMA_VERSION,
        "status": status,
        "summary": summary,
        "request_id": shared.request_id,
        "scope": shared.scope.as_str(),
        "context": shared.context,
        "duration_ms": wall.as_millis() as u64,
        "results": results,
    });
    if let Some(b) = &shared.budget {
        v["budget"] = json!(b);
    }
    (v, code)
}

fn print_one(r: &RunResult, mode: Mode) {
    match mode {
        Mode::Json => output::json_line(r),
        Mode::Text => print_text(r),
    }
}

/// People get the advice laid out, not the raw JSON.
fn print_text(r: &RunResult) {
    let mut s = String::new();
    s.push_str(&format!("{}\n", r.summary));
    s.push_str(&format!(
        "adviser:  {} (model {}, {} scope)\n",
        r.agent,
        r.model.as_deref().unwrap_or("default"),
        r.extra
            .get("context")
            .and_then(|c| c["scope"].as_str())
            .unwrap_or("?")
    ));
    if let Some(sess) = &r.session {
        s.push_str(&format!("session:  {sess}\n"));
    }
    if let Some(p) = &r.log_path {
        s.push_str(&format!("log:      {p}\n"));
    }
    for w in &r.warnings {
        s.push_str(&format!("warning:  {w}\n"));
    }
    if let Some(e) = &r.error {
        s.push_str(&format!("error:    [{}] {}\n", e.kind, e.message));
    }
    match r.extra.get("advice").filter(|a| !a.is_null()) {
        Some(a) => {
            let list = |s: &mut String, title: &str, k: &str| {
                if let Some(items) = a[k].as_array().filter(|i| !i.is_empty()) {
                    s.push_str(&format!("\n{title}:\n"));
                    for i in items {
                        match i.as_str() {
                            Some(t) => s.push_str(&format!("  - {t}\n")),
                            None => s.push_str(&format!(
                                "  - {}: {}\n",
                                i["option"].as_str().unwrap_or(""),
                                i["tradeoffs"].as_str().unwrap_or("")
                            )),
                        }
                    }
                }
            };
            s.push_str(&format!(
                "\nAssessment ({} confidence):\n  {}\n",
                a["confidence"].as_str().unwrap_or("?"),
                a["assessment"].as_str().unwrap_or("")
            ));
            s.push_str(&format!(
                "\nRecommendation:\n  {}\n",
                a["recommendation"].as_str().unwrap_or("")
            ));
            list(&mut s, "Alternatives", "alternatives");
            list(&mut s, "Risks", "risks");
            list(&mut s, "Verification", "verification_steps");
            list(&mut s, "Missing context", "missing_context");
            if let Some(code) = a["proposed_code"].as_str() {
                s.push_str(&format!("\nProposed code:\n{}\n", code.trim_end()));
            }
        }
        None => {
            if let Some(m) = &r.message {
                s.push_str(&format!("\n{}\n", m.trim_end()));
            }
        }
    }
    let _ = std::io::stdout().lock().write_all(s.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: AskArgs,
    }

    fn parse(args: &[&str]) -> AskArgs {
        T::try_parse_from(std::iter::once("ask").chain(args.iter().copied()))
            .unwrap()
            .a
    }

    #[test]
    fn advisers_and_models() {
        let (a, multi) = advisers(&parse(&["q"])).unwrap();
        assert_eq!(
            a,
            [AdviserSpec {
                agent: Agent::Codex,
                model: None
            }]
        );
        assert!(!multi);
        let (a, multi) =
            advisers(&parse(&["--agents", "codex,claude:opus", "-m", "sol", "q"])).unwrap();
        assert!(multi);
        assert_eq!(a[0].model.as_deref(), Some("sol"));
        assert_eq!(
            (a[1].agent, a[1].model.as_deref()),
            (Agent::Claude, Some("opus"))
        );
        // agy cannot be made read-only, so it cannot advise.
        for args in [
            &["--agent", "agy", "q"][..],
            &["--agents", "claude,gemini", "q"][..],
        ] {
            let e = advisers(&parse(args)).unwrap_err();
            assert_eq!(e.kind(), "unsupported_access");
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains("no enforceable read-only mode"));
        }
        assert!(advisers(&parse(&["--agent", "claude", "--profile", "p", "q"])).is_err());
        assert!(advisers(&parse(&["--agents", "codex,pi", "--provider", "x", "q"])).is_ok());
    }

    #[test]
    fn flags_fill_and_extend_the_packet() {
        let d = tempfile::tempdir().unwrap();
        let pf = d.path().join("p.json");
        std::fs::write(
            &pf,
            r#"{"question":"from file","tried":["a"],"goal":"g1","task_id":"t"}"#,
        )
        .unwrap();
        let args = parse(&[
            "--packet",
            pf.to_str().unwrap(),
            "--tried",
            "b",
            "--goal",
            "g2",
            "--help-type",
            "code-review",
            "--snippet",
            "x=1",
            "--file",
            "a.rs:1-2",
        ]);
        let i = packet_input(&args).unwrap();
        assert_eq!(i.question.as_deref(), Some("from file"));
        assert_eq!(i.goal.as_deref(), Some("g2"));
        assert_eq!(i.help_type, Some(HelpType::CodeReview));
        assert_eq!(i.task_id.as_deref(), Some("t"));
        match i.tried {
            Some(packet::OneOrMany::Many(v)) => assert_eq!(v, ["a", "b"]),
            other => panic!("{other:?}"),
        }
        assert_eq!(i.snippets, [Snippet::Text("x=1".into())]);
        assert_eq!(i.files, [FileRef::Spec("a.rs:1-2".into())]);
        let words = packet_input(&parse(&["--packet", pf.to_str().unwrap(), "new", "q"])).unwrap();
        assert_eq!(words.question.as_deref(), Some("new q"));
    }

    #[test]
    fn diff_flag_forms() {
        assert_eq!(parse(&["q"]).diff, None);
        assert_eq!(parse(&["--diff", "q"]).diff.as_deref(), Some("HEAD"));
        assert_eq!(parse(&["--diff=main", "q"]).diff.as_deref(), Some("main"));
        // `--diff q` does not swallow the question.
        assert_eq!(parse(&["--diff", "q"]).question, ["q"]);
    }

    #[test]
    fn packet_scope_switches_tools_off_and_schema_on() {
        let p = Path::new("/r/.baton/ask/advice-schema-v1.json");
        let e = extra_for(Agent::Claude, Scope::Packet, p);
        assert!(e.no_tools);
        assert_eq!(e.output_schema.as_ref().unwrap().0, advice::SCHEMA);
        let e = extra_for(Agent::Pi, Scope::Repo, p);
        assert!(!e.no_tools && e.output_schema.is_none());
        assert_eq!(
            extra_for(Agent::Codex, Scope::Repo, p)
                .output_schema
                .unwrap()
                .1,
            p
        );
    }

    #[test]
    fn empty_dir_is_private_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let d = EmptyDir::new().unwrap();
        let path = d.0.clone();
        assert!(path.is_dir() && path.is_absolute());
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert!(d.leftovers().is_empty());
        std::fs::write(path.join("x"), "y").unwrap();
        assert_eq!(d.leftovers(), ["x"]);
        drop(d);
        assert!(!path.exists());
    }
}

//! One consultation (`consult`): run the adviser, check its advice, and give
//! invalid advice one repair round before the result is final.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use crate::agent::argv::{self, Origin};
use crate::agent::{Agent, qwen};
use crate::error::Result;
use crate::fsutil;
use crate::process::Interrupts;
use crate::result::{ErrorInfo, RunResult, Status, Warning};
use crate::run::{self};

use super::Shared;
use super::advice;
use super::advice::Checked;
use super::adviser::{Prepared, schema_path};

/// Ask one adviser, with at most one repair round.
pub(super) fn consult(
    p: &Prepared,
    shared: &Shared,
    interrupts: &mut Interrupts,
) -> Result<RunResult> {
    if p.extra.output_schema.is_some() && p.plan.agent == Agent::Codex {
        crate::state_dir::ensure_sub(&shared.root, "ask")?;
        let path = schema_path(&shared.root)?;
        fsutil::write_atomic(&path, advice::SCHEMA.as_bytes())?;
    }
    let (dir, not_saved) = run::run_dir_or_warning(&shared.root)?;
    let repair_with = Repair {
        in_session: &advice::repair_in_session,
        fresh: &advice::repair_fresh,
    };
    let (mut result, verdict, repair) = answer(
        p,
        dir.as_deref(),
        interrupts,
        &advice::extract,
        &repair_with,
    )?;
    result.warnings.extend(not_saved.map(Warning::from));
    if let Some(w) = &p.workdir {
        result
            .warnings
            .retain(|w| !matches!(w, Warning::NotInGit(_)));
        let left = w.leftovers();
        if !left.is_empty() {
            result.warnings.push(Warning::Text(format!(
                "the adviser left files in its empty directory despite read-only access: {}",
                left.join(", ")
            )));
        }
    } else if !result.changed_files.is_empty() {
        result.warnings.push(Warning::Text(format!(
            "the adviser changed files despite read-only access: {}",
            result.changed_files.join(", ")
        )));
    }

    let took = format!("{:.1}s", result.duration_ms as f64 / 1000.0);
    let mut advice_value = Value::Null;
    match verdict {
        Verdict::Valid(Checked { advice, notes }) => {
            result.warnings.extend(notes.into_iter().map(Warning::from));
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
                retry_after_s: None,
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
    run::save_result(dir.as_deref(), &mut result);
    Ok(result)
}

/// How to ask for a repaired answer: in the same session (given the
/// errors), or in a fresh run shown its own answer (errors, answer).
pub struct Repair<'a> {
    pub in_session: &'a dyn Fn(&[String]) -> String,
    pub fresh: &'a dyn Fn(&[String], &str) -> String,
}

/// Run a prepared read-only call whose answer must pass `extract` (a schema
/// check), with one repair round when it does not. Shared by `baton ask`
/// (advice) and `baton council` (proposals, critiques, plans, reviews).
/// Returns the (merged) run, the verdict, and what the repair round did.
pub fn answer<T>(
    p: &Prepared,
    dir: Option<&std::path::Path>,
    interrupts: &mut Interrupts,
    extract: &dyn Fn(&str) -> std::result::Result<T, Vec<String>>,
    repair_with: &Repair<'_>,
) -> Result<(RunResult, Verdict<T>, Option<Value>)> {
    // Retries and fallbacks (`run.retry`, `run.fallback`) as for any run,
    // each agent with its own read-only switches and answer schema.
    let extra_of = |a: Agent| super::adviser::extra_with(a, p.scope, &p.schema.0, &p.schema.1);
    let mut on_spawn = |_| {};
    let mut hooks = run::Hooks::new(&mut on_spawn);
    hooks.first = Some((p.spec.clone(), p.program.clone()));
    hooks.extra = Some(&extra_of);
    let first = run::chain::run(&p.plan, dir, interrupts, hooks)?;
    let plain = qwen::answered_in_plain_text(first.error.as_ref().map(|e| e.message.as_str()));
    if first.status != Status::Success && !plain {
        return Ok((first, Verdict::RunFailed, None));
    }
    // qwen fails a `--json-schema` turn answered in prose: that is an
    // invalid answer like any other, so it gets the repair round.
    let checked = match extract(first.message.as_deref().unwrap_or("")) {
        Ok(_) if plain => Err(vec![
            "the answer was prose, not a call of the structured_output tool".to_string(),
        ]),
        c => c,
    };
    let errors = match checked {
        Ok(c) => return Ok((first, Verdict::Valid(c), None)),
        Err(errors) => errors,
    };
    let raw = first.message.clone().unwrap_or_default();
    // The agent that served the first round (after a fallback, not the
    // plan's) answers the repair, in its own session.
    let mut plan = run::chain::served(&p.plan, &first);
    plan.fallback = Vec::new();
    // The session id comes from the adviser's own output: one that
    // `agent::argv` would refuse is not resumed; the repair starts fresh.
    let unsafe_session = first
        .session
        .as_ref()
        .filter(|s| argv::check(s).is_err())
        .map(|s| {
            format!(
                "the adviser reported a session id that baton does not pass to a CLI (`{}`); \
                 the repair round started a fresh session",
                crate::agent::clip(&s.escape_debug().to_string(), 80)
            )
        });
    let how = match first.session.as_ref().filter(|_| unsafe_session.is_none()) {
        Some(s) => {
            plan.resume = Some(s.clone());
            plan.origins.resume = Some(Origin::Recorded {
                what: "the session the adviser reported".into(),
                hint: "ask again without the repair round".into(),
            });
            plan.prompt = (repair_with.in_session)(&errors);
            RepairMode::Resume
        }
        None => {
            plan.resume = None;
            plan.prompt = (repair_with.fresh)(&errors, &raw);
            RepairMode::Fresh
        }
    };
    plan.task = plan.prompt.clone();
    let spec = plan.command_with(extra_of(plan.agent))?;
    let program = plan.program(&spec)?;
    let rdir = dir
        .map(|d| d.join("repair"))
        .filter(|r| fsutil::ensure_private_dir(r).is_ok());
    let mut second = run::execute(
        &plan,
        &spec,
        &program,
        rdir.as_deref(),
        interrupts,
        &mut |_| {},
    )?;
    second.warnings.extend(unsafe_session.map(Warning::from));
    run::save_result(rdir.as_deref(), &mut second);
    let repair = serde_json::to_value(RepairReport {
        mode: how,
        errors: errors.clone(),
        first_answer: raw,
        log_path: second.log_path.clone(),
    })
    .ok();
    let verdict = if second.status != Status::Success {
        Verdict::RunFailed
    } else {
        match extract(second.message.as_deref().unwrap_or("")) {
            Ok(c) => Verdict::Valid(c),
            Err(e) => Verdict::Invalid(e),
        }
    };
    Ok((merge(first, second), verdict, repair))
}

/// The repair turn in the same session for an answer that must follow the
/// schema `id` (`schema`): a council member's, a fan-out reviewer's.
pub fn schema_repair_in_session(errors: &[String], id: &str, schema: &str) -> String {
    format!(
        "Your answer could not be used: {}.\nReply again with only the JSON object the schema \
{id} below describes: one object, no prose, no code fences. Keep your answer; do not add fields.\n\
JSON Schema ({id}): {schema}\n",
        errors.join("; ")
    )
}

/// The repair in a fresh run, shown its own `answer`, for the schema `id`.
pub fn schema_repair_fresh(errors: &[String], answer: &str, id: &str, schema: &str) -> String {
    format!(
        "Below is an answer that was meant to be one JSON object following the schema {id} \
further down, but it could not be used: {}.\nRestate it as that JSON object only: no prose, no \
code fences. Keep its content and add nothing new.\nJSON Schema ({id}): {schema}\n\
\n<answer>\n{answer}\n</answer>\n",
        errors.join("; ")
    )
}

/// The result's `repair`: what the one repair round did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RepairReport {
    pub mode: RepairMode,
    /// Why the first answer was refused.
    pub errors: Vec<String>,
    /// The first answer, as the adviser gave it.
    pub first_answer: String,
    /// The repair round's raw output.
    pub log_path: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RepairMode {
    /// The adviser's own session was resumed and shown the errors.
    Resume,
    /// The CLI reported no session: a fresh run was shown the answer.
    Fresh,
}

pub enum Verdict<T = Checked> {
    Valid(T),
    Invalid(Vec<String>),
    /// The adviser itself failed (error, timeout, cancelled): its run's
    /// status and error stand.
    RunFailed,
}

/// The repair round's result, with the two rounds' costs added up and the
/// first round's log kept as the main log.
pub fn merge(first: RunResult, mut second: RunResult) -> RunResult {
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
    // The first round's retries and fallbacks (the repair round is one call).
    second.attempts = first.attempts;
    second
}

//! One read-only member call with a schema: `ask`'s adviser and repair round,
//! cached under the sha256 of its prompt, classified ok/abstained/timeout/error.

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::store::{Member, Record};
use crate::agent::Agent;
use crate::ask::AskRequest;
use crate::ask::advice::Scope;
use crate::ask::adviser::{AdviserSpec, prepare_with};
use crate::ask::consult::Verdict;
use crate::ask::packet::redact_value;
use crate::error::{Error, Result};
use crate::failure::Failure;
use crate::group::{self, call::Structured};
use crate::process::Interrupts;
use crate::redact::{Counts, Redactor};
use crate::result::{Denial, Usage};
use crate::{fsutil, run};

/// What became of one call, as persisted (and reused by `resume`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    /// `ok`, `abstained`, `timeout` or `error`.
    pub outcome: String,
    pub reason: Option<String>,
    /// Why a call that did not answer ended: its `error.kind`
    /// (`auth_required`, `rate_limited`, `timeout`, … as `baton schema`
    /// lists them). Calls stored by an older baton have none.
    #[serde(default)]
    pub kind: Option<String>,
    pub answer: Option<Value>,
    pub usage: Usage,
    pub duration_ms: u64,
    pub model: Option<String>,
    pub log_path: Option<String>,
    /// Whether a transport failure was retried.
    #[serde(default)]
    pub retried: bool,
    /// Secrets removed from `answer` (per kind) before any other member or
    /// the chair could be shown it.
    #[serde(default, skip_serializing_if = "Counts::is_empty")]
    pub redactions: Counts,
    /// What the member asked to do that its access refused (an
    /// ACP agent's permission requests, a CLI's own denials): kept with the
    /// call, since no other record of a member's run holds them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub denials: Vec<Denial>,
}

impl Call {
    pub fn ok(&self) -> bool {
        self.outcome == "ok"
    }

    pub fn parsed<T: DeserializeOwned>(&self) -> Option<T> {
        self.answer
            .as_ref()
            .and_then(|a| serde_json::from_value(a.clone()).ok())
    }

    pub fn abstain(&mut self, reason: String) {
        self.outcome = "abstained".into();
        self.reason = Some(reason);
    }

    fn tokens(&self) -> u64 {
        self.usage.total_tokens().unwrap_or(0)
    }
}

/// `text` through `ask`'s redaction (the packet's), counted into `counts`.
pub fn redact_text(text: &str, counts: &mut Counts) -> String {
    Redactor::from_env().redact(text, counts)
}

pub fn add_counts(to: &mut Counts, from: &Counts) {
    for (k, n) in from {
        *to.entry(k.clone()).or_default() += n;
    }
}

/// A member's answer redacted where it enters the council: every prompt
/// that forwards it (critics, the chair, revisions, the writer, reviewers,
/// repairs) and the result are built from the stored call, so a member
/// that read a key cannot hand it on. Idempotent: a call stored redacted
/// (or by an older baton, unredacted) comes out the same either way.
fn redact_answer(c: &mut Call) {
    if let Some(a) = c.answer.as_mut() {
        let mut found = Counts::new();
        redact_value(a, &Redactor::from_env(), &mut found);
        add_counts(&mut c.redactions, &found);
    }
}

/// Tokens a set of calls used.
pub fn tokens(calls: &[Call]) -> u64 {
    calls.iter().map(Call::tokens).fold(0, u64::saturating_add)
}

/// The schema a stage's answer must follow: its id (for the file name) and text.
pub struct Schema<'a> {
    pub name: &'a str,
    /// `baton.council.proposal/1`, … (every prompt, repairs too, names it).
    pub id: &'a str,
    pub text: &'a str,
}

pub struct Ask<'a, T> {
    pub rec: &'a Record,
    pub member: &'a Member,
    /// The stage and who (`proposing`, `m0`): part of the cache key.
    pub stage: &'a str,
    pub who: String,
    pub prompt: String,
    pub schema: Schema<'a>,
    pub extract: &'a (dyn Fn(&str) -> std::result::Result<T, Vec<String>> + Sync),
    /// `Some(dir)`: repo scope, read-only in `dir` (reviewers read the
    /// writer's worktree); `None`: packet scope, tools off.
    pub repo: Option<&'a std::path::Path>,
}

/// Run `f` for each member index on its own thread (`group::parallel`); a
/// member's tool error becomes its `error` outcome, an interrupt stops
/// everything.
pub fn parallel<F>(n: usize, ints: &Interrupts, f: F) -> Result<Vec<Option<Call>>>
where
    F: Fn(usize, &mut Interrupts) -> Result<Option<Call>> + Sync,
{
    let out = crate::group::parallel::each(n, ints, f)?;
    Ok(out
        .into_iter()
        .map(|r| match r {
            Ok(c) => c,
            Err(e) => Some(Call {
                outcome: "error".into(),
                reason: Some(format!("{}: {e}", e.kind())),
                kind: Some(e.kind().to_string()),
                answer: None,
                usage: Default::default(),
                duration_ms: 0,
                model: None,
                log_path: None,
                retried: false,
                redactions: Default::default(),
                denials: Vec::new(),
            }),
        })
        .collect())
}

/// One member's call for a stage.
pub fn ask<T: serde::Serialize>(
    rec: &Record,
    m: &Member,
    (stage, who): (&str, String),
    prompt: String,
    schema: (&str, &str, &str),
    extract: &(dyn Fn(&str) -> std::result::Result<T, Vec<String>> + Sync),
    ints: &mut Interrupts,
) -> Result<Call> {
    call(
        &Ask {
            rec,
            member: m,
            stage,
            who,
            prompt,
            schema: Schema {
                name: schema.0,
                id: schema.1,
                text: schema.2,
            },
            extract,
            repo: None,
        },
        ints,
    )
}

/// A member's argv for `--dry-run` (the proposing call).
pub fn member_argv(rec: &Record, m: &Member, prompt: &str) -> Result<Vec<String>> {
    let agent = Agent::parse(&m.agent)?;
    let req = AskRequest {
        effort: rec.settings.effort.clone(),
        timeout: rec.settings.timeout.clone(),
        idle_timeout: rec.settings.idle_timeout.clone(),
        ..Default::default()
    };
    let path = std::env::temp_dir().join("baton-council-proposal-schema.json");
    let p = prepare_with(
        &AdviserSpec {
            agent,
            model: m.model.clone(),
            model_from: Some(crate::agent::argv::Origin::Flag("--members")),
        },
        &req,
        Scope::Packet,
        &rec.cwd,
        &rec.root,
        prompt,
        (super::proposal::SCHEMA, &path),
    )?;
    let mut argv = vec![p.program.display().to_string()];
    argv.extend(p.spec.args_lossy());
    Ok(argv)
}

/// Run (or reuse) the call.
pub fn call<T: Serialize>(a: &Ask<'_, T>, interrupts: &mut Interrupts) -> Result<Call> {
    let path = a.rec.call_path(a.stage, &a.who, &a.prompt)?;
    if let Some(mut c) = super::store::read_json::<Call>(&path)? {
        redact_answer(&mut c);
        return Ok(c);
    }
    let mut c = attempt(a, interrupts)?;
    if c.outcome == "error" && transient(c.kind.as_deref()) {
        let first = c.usage.clone();
        let denied = c.denials.clone();
        c = attempt(a, interrupts)?;
        c.usage.add(&first);
        c.denials.splice(0..0, denied);
        c.retried = true;
    }
    if let Some(sig) = interrupts.fired() {
        // An interrupted call is not an answer: never cache it.
        return Err(Error::Interrupted {
            signal: crate::process::signal_name(sig),
        });
    }
    redact_answer(&mut c);
    super::store::write_json(&path, &c)?;
    Ok(c)
}

/// A failure that may pass (a rate limit, the provider's outage, the
/// network), worth one retry; one that cannot (a wrong key, a spent quota)
/// and a timeout never are. By the kind the member's adapter named, not
/// by the words of its message.
fn transient(kind: Option<&str>) -> bool {
    kind.and_then(Failure::from_kind)
        .is_some_and(Failure::passes)
}

fn attempt<T: Serialize>(a: &Ask<'_, T>, interrupts: &mut Interrupts) -> Result<Call> {
    let agent = Agent::parse(&a.member.agent)?;
    let rec = a.rec;
    let schemas = rec.dir()?.join("schemas");
    fsutil::ensure_private_dir(&schemas)?;
    let schema_path = schemas.join(format!("{}.json", a.schema.name));
    fsutil::write_atomic(&schema_path, a.schema.text.as_bytes())?;
    let req = AskRequest {
        effort: rec.settings.effort.clone(),
        timeout: rec.settings.timeout.clone(),
        idle_timeout: rec.settings.idle_timeout.clone(),
        ..AskRequest::default()
    };
    let spec = AdviserSpec {
        agent,
        model: a.member.model.clone(),
        model_from: Some(crate::agent::argv::Origin::Flag("--members")),
    };
    let (scope, cwd) = match a.repo {
        Some(d) => (Scope::Repo, d),
        None => (Scope::Packet, rec.cwd.as_path()),
    };
    run::observe::set_stage(Some(format!("council: {}", a.stage)));
    let group_dir = rec.dir()?;
    let mut done = group::call::call(
        &Structured {
            spec,
            req,
            scope,
            cwd,
            root: &rec.root,
            prompt: &a.prompt,
            schema: group::call::Schema {
                id: a.schema.id,
                text: a.schema.text,
                path: &schema_path,
            },
            extract: a.extract,
            record: group::call::Record {
                dir: &group_dir,
                stage: a.stage,
                who: &a.who,
                peer: a.member.who(),
            },
        },
        interrupts,
    )?;
    let r = &done.run;
    let mut c = Call {
        outcome: "ok".into(),
        reason: None,
        kind: None,
        answer: None,
        usage: r.usage.clone(),
        duration_ms: r.duration_ms,
        model: r.model.clone(),
        log_path: r.log_path.clone(),
        retried: false,
        redactions: Counts::new(),
        denials: r.denials.clone(),
    };
    match &done.verdict {
        Verdict::Valid(t) => {
            c.answer = Some(serde_json::to_value(t).map_err(|e| Error::Internal(e.to_string()))?)
        }
        Verdict::Invalid(errs) => c.abstain(format!(
            "its answer did not follow the schema, even after one repair round: {}",
            errs.join("; ")
        )),
        Verdict::RunFailed => {
            let (outcome, reason) = group::call::failed(r);
            c.outcome = outcome.into();
            c.reason = Some(reason);
            c.kind = r.error.as_ref().map(|e| e.kind.clone());
        }
    }
    done.end(&c.outcome, &c.usage, c.model.as_deref(), interrupts);
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_redacted_once_and_counted() {
        // A GitHub token's shape, its random part generated here.
        let mut x = 0x9e37_79b9_u64;
        let token: String = (0..36)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let a = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
                a[(x >> 33) as usize % a.len()] as char
            })
            .collect();
        let token = format!("ghp_{token}");
        let mut c = Call {
            outcome: "ok".into(),
            reason: None,
            kind: None,
            answer: Some(serde_json::json!({"summary": format!("use {token}"),
                "steps": [format!("export GH={token}")], "n": 1})),
            usage: Usage::default(),
            duration_ms: 0,
            model: None,
            log_path: None,
            retried: false,
            redactions: Counts::new(),
            denials: Vec::new(),
        };
        redact_answer(&mut c);
        let text = c.answer.as_ref().unwrap().to_string();
        assert!(!text.contains(&token), "{text}");
        assert!(text.contains("[REDACTED:"), "{text}");
        assert_eq!(
            c.redactions.values().sum::<usize>(),
            2,
            "{:?}",
            c.redactions
        );
        // A stored (already redacted) call read again is not counted twice.
        let again = c.clone();
        redact_answer(&mut c);
        assert_eq!(c, again);
    }

    #[test]
    fn only_failures_that_may_pass_are_retried() {
        for k in ["rate_limited", "provider_unavailable", "network"] {
            assert!(transient(Some(k)), "{k}");
        }
        for k in [
            "auth_required",
            "quota_exhausted",
            "model_not_found",
            "agent_error",
            "timeout",
        ] {
            assert!(!transient(Some(k)), "{k}");
        }
        // Words are not evidence: an agent_error that mentions 429 is not retried.
        assert!(!transient(None));
    }
}

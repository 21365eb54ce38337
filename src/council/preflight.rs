//! Stage 1, preflight: members, chair and writer resolved; the packet built
//! once with `ask`'s code; base commit, seed and call estimate recorded.

use std::path::Path;

use serde_json::{Value, json};

use super::machine::Stage;
use super::request::CouncilRequest;
use super::store::{self, Member, Record, Settings};
use crate::agent::{Access, Agent};
use crate::ask::packet::{self, DiffSource};
use crate::error::{Error, Result};
use crate::process::find_program;
use crate::redact::Redactor;

pub struct Preflight {
    pub record: Record,
    pub packet: String,
    pub calls: Value,
}

/// Agents that can advise (read-only), in the order a default council takes
/// them: those whose models come from one known vendor first (zai is Z.AI's
/// GLM through pi), then pi and opencode, whose vendor is whatever their own
/// config says.
const PREFERRED: [Agent; 7] = [
    Agent::Codex,
    Agent::Claude,
    Agent::Zai,
    Agent::GeminiCli,
    Agent::Qwen,
    Agent::Pi,
    Agent::Opencode,
];

fn member(spec: &str) -> Result<(Agent, Member)> {
    let (name, model) = match spec.trim().split_once(':') {
        Some((a, m)) if !m.trim().is_empty() => (a, Some(m.trim().to_string())),
        Some((a, _)) => (a, None),
        None => (spec.trim(), None),
    };
    let agent = Agent::parse(name)?;
    if let Some(m) = &model {
        // Each of the member's calls would be refused (`agent::argv`, where
        // every value meets before an argv); refuse the council now instead.
        let from = crate::agent::argv::Origin::Flag("--members");
        crate::agent::argv::check_value(crate::agent::argv::Field::Model, m, Some(&from))?;
    }
    Ok((
        agent,
        Member {
            agent: agent.name().into(),
            vendor: agent.vendor(None, model.as_deref()),
            model,
        },
    ))
}

fn installed(a: Agent) -> bool {
    find_program(a.binary()).is_some()
}

/// `a` must be installed: the 127 `run` gives for a missing CLI.
fn require_installed(a: Agent) -> Result<()> {
    if installed(a) {
        return Ok(());
    }
    Err(Error::NotInstalled {
        agent: a.name(),
        binary: a.binary().into(),
        hint: format!("install it: {}", a.install_hint()),
    })
}

fn read_only(a: Agent) -> bool {
    a.supported_access().contains(&Access::ReadOnly)
}

/// At most 3 of `avail`, distinct vendors first. An unknown vendor (pi or
/// opencode without a provider) is not known to be distinct: such a member
/// comes after every known vendor not yet taken.
fn pick(avail: &[Member]) -> Vec<Member> {
    let mut out: Vec<Member> = Vec::new();
    for m in avail {
        let known = m.vendor != crate::agent::vendor::UNKNOWN;
        if out.len() < 3 && known && !out.iter().any(|o| o.vendor == m.vendor) {
            out.push(m.clone());
        }
    }
    for m in avail {
        if out.len() < 3 && !out.contains(m) {
            out.push(m.clone());
        }
    }
    out
}

/// The members and a warning per default member that is not installed:
/// as named (each must be installed: a member asked for by name is never
/// dropped silently), or every installed adviser, at most 3, distinct
/// vendors first.
pub fn members(named: &[String]) -> Result<(Vec<Member>, Vec<String>)> {
    if !named.is_empty() {
        let mut out = Vec::new();
        for n in named {
            let (agent, m) = member(n)?;
            if !read_only(agent) {
                return Err(Error::usage_hint(
                    format!(
                        "`{}` cannot be a council member: it has no enforceable read-only mode",
                        agent.name()
                    ),
                    "pick members from codex, claude, zai, pi, gemini-cli, opencode, qwen",
                ));
            }
            require_installed(agent)?;
            out.push(m);
        }
        return Ok((out, Vec::new()));
    }
    let advisers: Vec<(Agent, Member)> = PREFERRED
        .iter()
        .filter(|a| read_only(**a))
        .map(|a| member(a.name()))
        .collect::<Result<_>>()?;
    let avail: Vec<Member> = advisers
        .iter()
        .filter(|(a, _)| installed(*a))
        .map(|(_, m)| m.clone())
        .collect();
    let out = pick(&avail);
    // The members a default council takes where every adviser is
    // installed: each one missing is said, not silently replaced or dropped.
    let all: Vec<Member> = advisers.iter().map(|(_, m)| m.clone()).collect();
    let names = out.iter().map(|m| m.agent.as_str()).collect::<Vec<_>>();
    let warnings = pick(&all)
        .iter()
        .filter_map(|m| advisers.iter().find(|(_, x)| x == m))
        .filter(|(a, _)| !installed(*a))
        .map(|(a, _)| {
            format!(
                "member_not_installed: `{}`, a default member, is not installed (install it: {}); \
                 the council runs with {}",
                a.name(),
                a.install_hint(),
                if names.is_empty() {
                    "no member".to_string()
                } else {
                    names.join(", ")
                }
            )
        })
        .collect();
    Ok((out, warnings))
}

/// The values of `--depth` (also offered as such to MCP hosts).
pub const DEPTHS: [&str; 3] = ["quick", "standard", "deep"];

pub fn preflight(req: &CouncilRequest, cwd: &Path, root: &Path) -> Result<Preflight> {
    if !["discuss", "plan"].contains(&req.kind.as_str()) {
        return Err(Error::Internal(format!(
            "unknown council kind {}",
            req.kind
        )));
    }
    if !DEPTHS.contains(&req.depth.as_str()) {
        return Err(Error::usage_hint(
            format!("unknown depth `{}`", req.depth),
            "use quick (no critique), standard or deep (a revision round after critique)",
        ));
    }
    if req.quorum == 0 {
        return Err(Error::usage("--quorum must be at least 1"));
    }
    let (members, mut warnings) = members(&req.members)?;
    if members.len() < req.quorum {
        return Err(Error::Refused {
            kind: "quorum_unreachable",
            message: format!(
                "only {} council member(s) are installed ({}), fewer than the quorum of {}",
                members.len(),
                members.iter().map(|m| m.agent.as_str()).collect::<Vec<_>>().join(", "),
                req.quorum
            ),
            hint: "install more agent CLIs (`baton agents` lists them), name them with --members, or lower --quorum".into(),
        });
    }
    let chair = match req.chair.as_deref().map(str::trim) {
        Some("none") => None,
        Some(c) => Some(member(c)?.1),
        None => Some(members[0].clone()),
    };
    let writer = match &req.writer {
        Some(w) => Some(member(w)?.1),
        None => None,
    };
    for w in [&chair, &writer].into_iter().flatten() {
        require_installed(Agent::parse(&w.agent)?)?;
    }
    // `--max-usd` must be able to count every call the council makes.
    let max_usd = crate::run::budget(req.max_usd, req.budget_tokens)?.max_usd;
    for m in members.iter().chain(chair.iter()).chain(writer.iter()) {
        crate::run::check_agent_priced(Agent::parse(&m.agent)?, m.model.as_deref(), max_usd)?;
    }
    // The packet, exactly as `ask` builds it: credentials refused, secrets
    // redacted, the size limit enforced on the text sent.
    let mut ask = req.packet.clone();
    let input = crate::ask::packet_input::packet_input(&ask)?;
    let diff = match ask.diff.take() {
        Some(rev) => DiffSource::Git(rev),
        None => DiffSource::None,
    };
    let max_chars = ask.max_chars.unwrap_or(packet::DEFAULT_MAX_CHARS);
    let built = packet::build(input, &diff, cwd, &Redactor::from_env(), max_chars)?;
    let base_commit = crate::git::git(cwd)
        .args(["rev-parse", "--verify", "-q", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if req.kind == "plan" && base_commit.is_none() {
        return Err(Error::usage_hint(
            "`council plan` needs a git repository with at least one commit (the plan is bound to its base commit)",
            "run it inside a git repository, or use `council discuss`",
        ));
    }
    let max_wall_ms = req
        .max_wall
        .as_deref()
        .map(crate::duration::parse)
        .transpose()?
        .map(|d| d.as_millis() as u64);
    let vendors: std::collections::BTreeSet<&str> =
        members.iter().map(|m| m.vendor.as_str()).collect();
    if members.len() > 1 && vendors.len() == 1 {
        warnings.push(format!(
            "single_vendor: every member's models come from {}; independent vendors find more",
            vendors.iter().next().unwrap_or(&"")
        ));
    }
    let seed = req.seed.unwrap_or_else(|| {
        let s = crate::ids::random_suffix(12);
        s.bytes()
            .fold(store::now_ms(), |h, b| h.rotate_left(5) ^ u64::from(b))
    });
    let record = Record {
        council_id: store::new_id(),
        kind: req.kind.clone(),
        stage: Stage::Preflight,
        created_ms: store::now_ms(),
        root: root.to_path_buf(),
        cwd: cwd.to_path_buf(),
        task: req.packet.question.join(" "),
        settings: Settings {
            depth: req.depth.clone(),
            quorum: req.quorum,
            repair_rounds: req.repair_rounds,
            test_cmd: req.test_cmd.clone(),
            allow: req.allow.clone(),
            budget_tokens: req.budget_tokens,
            max_usd: crate::run::budget(req.max_usd, req.budget_tokens)?.max_usd,
            max_wall_ms,
            timeout: req.timeout.clone(),
            idle_timeout: req.idle_timeout.clone(),
            effort: req.effort.clone(),
            scope: "packet".into(),
        },
        members,
        chair,
        writer,
        seed,
        packet_sha256: built.sha256.clone(),
        base_commit,
        warnings,
        approval: None,
        plan_sha256: None,
        reason: None,
        pid: None,
        execute: req.yes,
        updated_ms: 0,
        background: req.run_async,
        cancelled_in: None,
        stop_kind: None,
        notify: req.notify,
        // Here, in the command the user ran (an `--async` runner has no
        // terminal of its own).
        origin: crate::notify::Origin::here(),
    };
    let calls = estimate(&record);
    Ok(Preflight {
        record,
        packet: built.text,
        calls,
    })
}

/// The calls a council will make at most, by stage.
pub fn estimate(rec: &Record) -> Value {
    let n = rec.members.len() as u64;
    let critique = if rec.settings.depth == "quick" { 0 } else { n };
    let chair = u64::from(rec.chair.is_some());
    let mut v = json!({"proposing": n, "critiquing": critique, "synthesizing": chair});
    if rec.settings.depth == "deep" {
        v["revising"] = json!(n);
    }
    if rec.kind == "plan" {
        let rounds = u64::from(rec.settings.repair_rounds);
        v["implementing"] = json!(1 + rounds);
        v["reviewing"] = json!((n.saturating_sub(1)).max(1) * (1 + rounds));
    }
    v
}

/// What `--dry-run` prints: the plan of calls and each member's exact argv.
pub fn dry_run(p: &Preflight) -> Value {
    let rec = &p.record;
    let argv: Vec<Value> = rec
        .members
        .iter()
        .map(|m| {
            let argv =
                super::call::member_argv(rec, m, &super::proposal::prompt(&rec.kind, &p.packet))
                    .unwrap_or_else(|e| vec![format!("<{e}>")]);
            json!({"agent": m.agent, "model": m.model, "vendor": m.vendor, "argv": argv})
        })
        .collect();
    json!({
        "schema_version": crate::result::SCHEMA_VERSION,
        "dry_run": true,
        "kind": rec.kind,
        "members": argv,
        "chair": rec.chair,
        "writer": rec.writer,
        "seed": rec.seed,
        "depth": rec.settings.depth,
        "quorum": rec.settings.quorum,
        "packet_sha256": rec.packet_sha256,
        "base_commit": rec.base_commit,
        "calls": p.calls,
        "warnings": rec.warnings,
        "packet": p.packet,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(name: &str) -> Member {
        member(name).unwrap().1
    }

    /// Issue 29 §7: with codex, claude and pi installed a default council
    /// was codex, claude, pi: pi's vendor is unknown, not a third one.
    #[test]
    fn a_default_council_takes_known_distinct_vendors_first() {
        let names = |v: Vec<Member>| v.into_iter().map(|m| m.agent).collect::<Vec<_>>();
        // Every adviser installed: the first three known vendors.
        let all: Vec<Member> = PREFERRED.iter().map(|a| m(a.name())).collect();
        assert_eq!(names(pick(&all)), ["codex", "claude", "zai"]);
        // pi (unknown vendor) only after the known ones run out.
        let some = [m("codex"), m("pi"), m("claude"), m("gemini-cli")];
        assert_eq!(names(pick(&some)), ["codex", "claude", "gemini-cli"]);
        let few = [m("codex"), m("pi"), m("claude")];
        assert_eq!(names(pick(&few)), ["codex", "claude", "pi"]);
        // One vendor twice only when nothing else is there.
        let two = [m("codex"), m("codex:gpt-5.6-sol")];
        assert_eq!(names(pick(&two)), ["codex", "codex"]);
    }
}

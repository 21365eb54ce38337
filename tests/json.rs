//! The public JSON's contract. Real output of every kind — a plain run, a
//! read-only one, a worktree run, background jobs (the start line with its
//! `handoff`, the result, a continued job), `ask` (one adviser and several),
//! a council, and each error kind — is checked against what `baton schema
//! …` publishes, with unknown fields forbidden (`support::schema`). Three
//! more checks keep the schema, the source and the docs together:
//!
//! - every `error.kind` the source can produce (`Error::kind`,
//!   `Failure::kind`, the literals) is in the schema's list
//!   (`every_error_kind_in_the_source_is_published`);
//! - every kind in that list has a case here, or a stated reason it cannot
//!   have one (`EXEMPT`): a kind added without a case fails;
//! - every field the result schema describes is seen in real output, and
//!   docs/run.md or docs/ask.md names every field and kind.
//!
//! The cases themselves are in `json_cases.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Mutex;

use serde_json::Value;

use crate::json_cases;
use crate::support::schema::Validator;
use crate::support::{Env, Run};

/// Kinds no test can produce on purpose, and why.
pub const EXEMPT: &[(&str, &str)] = &[
    (
        "internal",
        "a bug in baton: nothing a test does reaches it on purpose",
    ),
    (
        "sandbox_unavailable",
        "`--sandbox require` on a machine with neither bubblewrap nor Landlock ≥ 3: this \
         kernel has Landlock (ABI 7), so no run here can lack a backend; the refusal is \
         unit-tested in run::confine (require_with_no_backend_is_refused_before_anything_starts)",
    ),
    (
        "interrupted",
        "`ask` between building its packet and starting its advisers: a window \
         of microseconds with nothing to wait on, so a signal cannot be aimed at it",
    ),
];

/// One group of cases, run on its own thread.
type Group = fn(&Contract);

/// The published schemas, and what real output reached.
pub struct Contract {
    result: Mutex<Validator>,
    error: Mutex<Validator>,
    envelope: Mutex<Validator>,
    council: Mutex<Validator>,
    fanout: Mutex<Validator>,
    /// The schemas of the other commands' JSON and of the MCP tools' outputs
    /// (`NAMED`), by name.
    named: BTreeMap<&'static str, Mutex<Validator>>,
    /// The `NAMED` schemas some real output was checked against.
    named_seen: Mutex<BTreeSet<&'static str>>,
    /// Each `error.kind` seen, with the first case that produced it.
    kinds: Mutex<BTreeMap<String, String>>,
    /// Kinds a case could not produce on this machine (no user namespaces).
    pub skipped: Mutex<BTreeMap<String, String>>,
}

#[derive(Clone, Copy)]
pub enum Shape {
    /// `baton schema`: run, wait, result, cancel, run --async, continue, ask.
    Result,
    /// `baton schema error`.
    Error,
    /// `baton schema ask-envelope`.
    Envelope,
    /// `baton schema council`.
    Council,
    /// `baton schema fanout`.
    Fanout,
    /// `baton schema NAME`, one of `NAMED`: `status`, `jobs`, `agents`,
    /// `doctor`, and the either-shapes the MCP tools publish (`job-result`
    /// for wait/result/cancel, `ask`, `run-or-fanout`).
    Named(&'static str),
}

/// The schemas checked by name (`Shape::Named`); each has a case.
pub const NAMED: &[&str] = &[
    "job-status",
    "jobs",
    "jobs-all-repos",
    "agents",
    "doctor",
    "job-result",
    "ask",
    "run-or-fanout",
];

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub fn published(name: &str) -> Value {
    let r = Env::new().run(&["schema", name]);
    assert_eq!(r.code, 0, "baton schema {name}: {}", r.stderr);
    r.json()
}

/// The kinds `error.kind` may have, as the published schema lists them.
pub fn published_kinds() -> BTreeSet<String> {
    let s = published("result");
    s.pointer("/$defs/ErrorInfo/properties/kind/oneOf")
        .and_then(Value::as_array)
        .expect("error.kind lists its values")
        .iter()
        .map(|k| k["const"].as_str().expect("a const per kind").to_string())
        .collect()
}

impl Contract {
    fn load() -> Contract {
        let v = |n| Mutex::new(Validator::new(published(n)));
        Contract {
            result: v("result"),
            error: v("error"),
            envelope: v("ask-envelope"),
            council: v("council"),
            fanout: v("fanout"),
            named: NAMED.iter().map(|n| (*n, v(n))).collect(),
            named_seen: Mutex::default(),
            kinds: Mutex::default(),
            skipped: Mutex::default(),
        }
    }

    /// The single JSON line of `r`, valid for `shape`, with every
    /// `error.kind` in it counted as produced by `case`.
    pub fn check(&self, case: &str, shape: Shape, r: &Run) -> Value {
        let v = r.json();
        self.check_value(case, shape, &v);
        v
    }

    pub fn check_value(&self, case: &str, shape: Shape, v: &Value) {
        let validator = match shape {
            Shape::Result => &self.result,
            Shape::Error => &self.error,
            Shape::Envelope => &self.envelope,
            Shape::Council => &self.council,
            Shape::Fanout => &self.fanout,
            Shape::Named(n) => self
                .named
                .get(n)
                .unwrap_or_else(|| panic!("{n} is not in NAMED")),
        };
        // Checked with the lock held, reported after it is released: one
        // group's failure must not poison the validator for the others.
        let checked = lock(validator).validate(v);
        if let Err(e) = checked {
            panic!(
                "{case}: the output does not match the published schema:\n  {}\n{v}",
                e.join("\n  ")
            );
        }
        let mut found = Vec::new();
        match shape {
            Shape::Envelope => {
                for r in v["results"].as_array().into_iter().flatten() {
                    found.extend(r["error"]["kind"].as_str());
                }
            }
            Shape::Council | Shape::Named(_) => {}
            _ => found.extend(v["error"]["kind"].as_str()),
        }
        if let Shape::Named(n) = shape {
            lock(&self.named_seen).insert(n);
        }
        let mut kinds = lock(&self.kinds);
        for k in found {
            kinds
                .entry(k.to_string())
                .or_insert_with(|| case.to_string());
        }
    }

    /// `r` ended with `kind`, checked against `shape`.
    pub fn expect_kind(&self, case: &str, shape: Shape, r: &Run, kind: &str) -> Value {
        let v = self.check(case, shape, r);
        assert_eq!(v["error"]["kind"], kind, "{case}: {v}\n{}", r.stderr);
        v
    }
}

#[test]
fn every_kind_of_output_matches_the_published_schema() {
    let c = Contract::load();
    // Each group in its own repository and state directory; many of them
    // wait on peers or timeouts, so they run side by side.
    let groups: [(&str, Group); 9] = [
        ("runs", json_cases::runs),
        ("failures", json_cases::failures),
        ("tool errors", json_cases::tool_errors),
        ("jobs", json_cases::jobs),
        ("worktrees", json_cases::worktrees),
        ("asks", json_cases::asks),
        ("councils", json_cases::councils),
        ("fan-outs", json_cases::fanouts),
        ("a full disk", json_cases::full_disk),
    ];
    let failed: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = groups
            .iter()
            .map(|(name, f)| (name, s.spawn(|| f(&c))))
            .collect();
        handles
            .into_iter()
            .filter_map(|(name, h)| h.join().is_err().then(|| name.to_string()))
            .collect()
    });
    assert!(
        failed.is_empty(),
        "failed: {failed:?} (see the panics above)"
    );

    // Every schema checked by name was checked against real output.
    let unchecked: Vec<&&str> = NAMED
        .iter()
        .filter(|n| !lock(&c.named_seen).contains(*n))
        .collect();
    assert!(unchecked.is_empty(), "no case checks {unchecked:?}");

    // Every kind the schema lists has a case, or a reason it cannot.
    let seen = lock(&c.kinds).clone();
    let skipped = lock(&c.skipped).clone();
    for (k, why) in &skipped {
        eprintln!("not produced here: `{k}`: {why}");
    }
    let exempt: BTreeSet<String> = EXEMPT.iter().map(|(k, _)| k.to_string()).collect();
    let listed = published_kinds();
    let missing: Vec<&String> = listed
        .iter()
        .filter(|k| !seen.contains_key(*k) && !exempt.contains(*k) && !skipped.contains_key(*k))
        .collect();
    assert!(
        missing.is_empty(),
        "kinds with no case in tests/json_cases.rs (add one, or an EXEMPT reason): {missing:?}"
    );
    for k in &exempt {
        assert!(
            listed.contains(k),
            "EXEMPT names `{k}`, which is not a kind"
        );
        assert!(
            !seen.contains_key(k),
            "`{k}` is exempt but `{}` produced it: drop the exemption",
            seen[k]
        );
    }
    let unlisted: Vec<&String> = seen.keys().filter(|k| !listed.contains(*k)).collect();
    assert!(unlisted.is_empty(), "{unlisted:?}");

    // Every field the result schema describes was in some real result;
    // the same for a fan-out's.
    let v = lock(&c.result);
    let never: Vec<String> = v.described().difference(&v.seen).cloned().collect();
    assert!(
        never.is_empty(),
        "described by `baton schema` but in no result of these cases: {never:?}"
    );
    let f = lock(&c.fanout);
    let never: Vec<String> = f.described().difference(&f.seen).cloned().collect();
    assert!(
        never.is_empty(),
        "described by `baton schema fanout` but in no fan-out of these cases: {never:?}"
    );
}

/// Where error kinds are made in the source: the arms of `Error::kind`,
/// `Error::Refused { kind: "…" }` and `ErrorInfo { kind: "…" }` literals,
/// and the literal first argument of helpers that build one from a `kind`
/// parameter (`info("timeout", …)`, `refused("base_moved", …)`). An
/// expression this does not understand fails, naming the file and line.
fn kinds_in_source() -> BTreeMap<String, String> {
    let mut kinds = BTreeMap::new();
    for (rel, text) in crate::layers::sources() {
        // `Error::kind` and `Failure::kind`: one arm per kind.
        for (file, sig, name) in [
            ("error.rs", "pub fn kind(&self)", "Error::kind"),
            ("failure.rs", "pub fn kind(self)", "Failure::kind"),
        ] {
            if rel != file {
                continue;
            }
            let body = &text[text.find(sig).expect(name)..];
            let body = &body[..body.find("\n    }\n").expect("end of kind()")];
            for arm in body.split("=>").skip(1) {
                if let Some(k) = literal(arm.trim_start()) {
                    kinds.insert(k, format!("{rel}: {name}"));
                }
            }
        }
        if rel == "error.rs" {
            continue;
        }
        let mut helpers = BTreeSet::new();
        for ty in ["Refused {", "ErrorInfo {"] {
            for (at, _) in text.match_indices(ty) {
                let before = text[..at].trim_end();
                if before.ends_with("struct") || before.ends_with("->") {
                    continue;
                }
                let Some(block) = braced(&text[at + ty.len() - 1..]) else {
                    continue;
                };
                let Some(expr) = field(block, "kind") else {
                    continue;
                };
                let line = text[..at].lines().count() + 1;
                if let Some(k) = literal(expr) {
                    kinds.insert(k, format!("{rel}:{line}"));
                } else if expr.contains(".kind()") {
                    // Another error's kind, already counted where it is made.
                } else if expr == "kind" || expr.starts_with("kind.") {
                    let f = text[..at].rfind("fn ").expect("inside a function");
                    let name: String = text[f + 3..]
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    helpers.insert(name);
                } else {
                    panic!("{rel}:{line}: `kind: {expr}` — teach kinds_in_source this form");
                }
            }
        }
        for h in helpers {
            let call = format!("{h}(");
            for (at, _) in text.match_indices(&call) {
                if text[..at].ends_with("fn ")
                    || text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '.')
                {
                    continue;
                }
                let arg = text[at + call.len()..].trim_start();
                let line = text[..at].lines().count() + 1;
                if arg.split(',').next().is_some_and(|a| a.contains(".kind()")) {
                    // A `Failure`'s or another error's kind: counted where it is made.
                    continue;
                }
                let k = literal(arg).unwrap_or_else(|| {
                    panic!("{rel}:{line}: `{h}(` without a literal kind — teach kinds_in_source")
                });
                kinds.insert(k, format!("{rel}:{line}"));
            }
        }
    }
    kinds
}

/// The string literal `s` starts with.
fn literal(s: &str) -> Option<String> {
    let rest = s.strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_string())
}

/// The text inside the braces `s` starts with (string literals skipped).
fn braced(s: &str) -> Option<&str> {
    let mut depth = 0;
    let mut in_str = false;
    let mut escaped = false;
    for (i, ch) in s.char_indices() {
        if in_str {
            match (escaped, ch) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match ch {
            '"' => in_str = true,
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&s[1..i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The expression given to `name` in a struct literal's body (`kind` alone
/// for the shorthand); `None` when the body does not set it (a pattern).
fn field<'a>(body: &'a str, name: &'a str) -> Option<&'a str> {
    let t = body.trim_start();
    let mut rest = t;
    loop {
        let at = rest.find(name)?;
        let before = rest[..at].trim_end();
        let after = &rest[at + name.len()..];
        let boundary = before.is_empty() || before.ends_with(',') || before.ends_with('{');
        if boundary {
            let after_t = after.trim_start();
            if let Some(e) = after_t.strip_prefix(':') {
                let e = e.trim_start();
                let end = e.find([',', '\n']).unwrap_or(e.len());
                return Some(e[..end].trim());
            }
            if after_t.starts_with(',') || after_t.is_empty() {
                return Some(name);
            }
        }
        rest = after;
    }
}

#[test]
fn every_error_kind_in_the_source_is_published() {
    let source = kinds_in_source();
    // The scanner itself: it finds the kinds of each form.
    for k in ["usage", "credential_file", "timeout", "base_moved", "lost"] {
        assert!(source.contains_key(k), "the scan missed `{k}`: {source:?}");
    }
    let published = published_kinds();
    let unpublished: Vec<String> = source
        .iter()
        .filter(|(k, _)| !published.contains(*k))
        .map(|(k, at)| format!("{k} ({at})"))
        .collect();
    assert!(
        unpublished.is_empty(),
        "kinds made in the source but not in `baton schema` (add them to error::KINDS or \
         result::OUTCOME_KINDS): {unpublished:?}"
    );
    let stale: Vec<&String> = published
        .iter()
        .filter(|k| !source.contains_key(*k))
        .collect();
    assert!(stale.is_empty(), "published kinds nothing makes: {stale:?}");
}

fn doc(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap()
}

#[test]
fn the_docs_name_every_field_and_every_kind() {
    let docs = doc("docs/run.md") + &doc("docs/ask.md") + &doc("docs/jobs.md");
    let s = published("result");
    let mut missing = Vec::new();
    for f in s["properties"].as_object().unwrap().keys() {
        if !docs.contains(&format!("`{f}`")) {
            missing.push(format!("field {f}"));
        }
    }
    for k in published_kinds() {
        if !docs.contains(&format!("`{k}`")) {
            missing.push(format!("kind {k}"));
        }
    }
    assert!(
        missing.is_empty(),
        "not in docs/run.md, ask.md or jobs.md: {missing:?}"
    );
}

/// README's example result is a real result's shape, with the records where
/// they are now (the state directory, not `.baton/runs` of 0.1).
#[test]
fn the_readme_and_ask_examples_are_true() {
    let mut v = Validator::new(published("result"));
    let readme = doc("README.md");
    let line = readme
        .lines()
        .find(|l| l.starts_with("{\"schema_version\":1,\"status\":\"success\""))
        .expect("README shows a result");
    let example: Value = serde_json::from_str(line).expect("README's result is JSON");
    if let Err(e) = v.validate(&example) {
        panic!("README's example result: {e:?}");
    }
    let log = example["log_path"].as_str().unwrap();
    assert!(log.contains("/.local/state/baton/repos/"), "{log}");
}

/// Records moved from `<repo>/.baton/` to the state directory after 0.1:
/// no page puts them back there (only worktrees and the project's setup
/// manifest stay in `.baton/`), except where it tells 0.1's story.
#[test]
fn no_page_shows_records_under_dot_baton() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        pages.push(e.unwrap().path());
    }
    let mut wrong = Vec::new();
    for p in pages
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
    {
        let text = std::fs::read_to_string(p).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.contains("0.1") {
                continue;
            }
            for dir in ["runs", "jobs", "sessions", "ask-budget", "councils"] {
                let at = format!(".baton/{dir}");
                if line.contains(&at) && !line.contains(&format!("not `{at}")) {
                    wrong.push(format!("{}:{}: {at}", p.display(), n + 1));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "records are in the state directory: {wrong:?}"
    );
}

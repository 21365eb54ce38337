//! The council for people: `report` (the whole record as markdown), the
//! `--text` result, and the one-line `status`/`list` forms.

use serde_json::Value;

use super::store::Record;

fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn list(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().map(s).collect())
        .unwrap_or_default()
}

pub fn status_text(rec: &Record) -> String {
    let mut t = format!(
        "{}  {}  {}  {}\n",
        rec.council_id,
        rec.kind,
        rec.stage.as_str(),
        crate::agent::clip(&rec.task, 80)
    );
    if let Some(r) = &rec.reason {
        t.push_str(&format!("  reason: {r}\n"));
    }
    t
}

pub fn list_text(all: &[Record]) -> String {
    if all.is_empty() {
        return "no councils in this repository\n".into();
    }
    all.iter().map(status_text).collect()
}

/// The `--text` result (`discuss`, `plan`, `approve`, `execute`, `result`):
/// what the JSON says a person needs, in the order they need it. The
/// summary and warnings; the error; the synthesis (the chair's summary) and
/// the plan with what stays disputed; the next command while it waits; once
/// executed, the branch, the test result, each reviewer's verdict and the
/// merge hint. Every field is one line (`one`): a member's text cannot lay
/// out lines of its own.
pub fn text(rec: &Record, v: &Value) -> String {
    text_of(&rec.council_id, rec.kind == "discuss", v)
}

fn text_of(id: &str, discuss: bool, v: &Value) -> String {
    let mut t = format!("{}\n", one(&s(&v["summary"])));
    for w in list(&v["warnings"]) {
        t.push_str(&format!("warning: {}\n", one(&w)));
    }
    if let Some(e) = v["error"].as_object() {
        t.push_str(&format!(
            "error:   [{}] {}\n",
            e.get("kind").map(s).unwrap_or_default(),
            one(&e.get("message").map(s).unwrap_or_default())
        ));
        if let Some(h) = e.get("hint").filter(|h| !h.is_null()) {
            t.push_str(&format!("hint:    {}\n", one(&s(h))));
        }
    }
    if let Some(p) = v["plan"]["content"].as_object() {
        plan_text(&mut t, p, v, discuss);
    }
    match s(&v["stage"]).as_str() {
        "awaiting_approval" => t.push_str(&format!(
            "\nnext:    read the plan (`baton council report {id}`), then \
             `baton council approve {id} --plan-sha256 {}`\n",
            s(&v["plan"]["sha256"])
        )),
        "approved" => t.push_str(&format!(
            "\nnext:    `baton council execute {id}` carries out the approved plan\n"
        )),
        _ => {}
    }
    execution_text(&mut t, v);
    t
}

/// The synthesis, and for a plan its steps, files, test and disputes.
fn plan_text(t: &mut String, p: &serde_json::Map<String, Value>, v: &Value, discuss: bool) {
    let field = |k: &str| p.get(k).map(s).unwrap_or_default();
    let items = |k: &str| p.get(k).map(list).unwrap_or_default();
    t.push_str(&format!(
        "\nsynthesis ({}): {}\n",
        s(&v["plan"]["by"]),
        one(&field("summary"))
    ));
    if !discuss {
        t.push_str(&format!("plan (sha256 {}):\n", s(&v["plan"]["sha256"])));
        for (i, step) in items("steps").iter().enumerate() {
            t.push_str(&format!("  {}. {}\n", i + 1, one(step)));
        }
        t.push_str(&format!(
            "files:   {}\n",
            one(&items("authorized_files").join(", "))
        ));
        t.push_str(&format!(
            "test:    {}\n",
            match field("test_cmd") {
                c if c.is_empty() => "none".to_string(),
                c => one(&c).into_owned(),
            }
        ));
        for a in items("acceptance") {
            t.push_str(&format!("accept:  {}\n", one(&a)));
        }
    }
    for d in p
        .get("disagreements")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        t.push_str(&format!(
            "disagreement: {}: ruled {} (would settle it: {})\n",
            one(&s(&d["topic"])),
            one(&s(&d["ruling"])),
            one(&s(&d["would_settle"]))
        ));
    }
}

/// The writer's branch, the test, the reviews and the merge hint.
fn execution_text(t: &mut String, v: &Value) {
    let w = &v["worktree"];
    if w.is_object() {
        t.push_str(&format!("\nworktree: {}\n", one(&s(&w["path"]))));
        t.push_str(&format!(
            "branch:  {} (commit {}), {} file(s) changed\n",
            one(&s(&w["branch"])),
            match s(&w["commit"]) {
                c if c.is_empty() => "none".to_string(),
                c => c.chars().take(12).collect(),
            },
            w["changed_files"].as_array().map_or(0, Vec::len)
        ));
        let reverted = list(&w["reverted"]);
        if !reverted.is_empty() {
            t.push_str(&format!("reverted: {}\n", one(&reverted.join(", "))));
        }
        t.push_str(&format!(
            "writer:  {}{}\n",
            s(&w["writer"]),
            match s(&w["writer_summary"]) {
                m if m.is_empty() => String::new(),
                m => format!(": {}", one(&m)),
            }
        ));
    }
    let c = &v["verification"];
    if c.is_object() {
        let verdict = match (c["passed"].as_bool(), s(&c["not_run"])) {
            (_, why) if !why.is_empty() => format!("not run ({})", one(&why)),
            (Some(true), _) => "passed".to_string(),
            _ if c["timed_out"] == true => "FAILED (timed out)".to_string(),
            _ => format!("FAILED (exit {})", s(&c["exit_code"])),
        };
        t.push_str(&format!("test:    {verdict}: {}\n", one(&s(&c["command"]))));
        if c["passed"] != true {
            for l in s(&c["output_tail"])
                .lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .iter()
                .rev()
            {
                t.push_str(&format!("  | {}\n", one(l)));
            }
        }
    }
    for r in v["reviews"].as_array().into_iter().flatten() {
        let said = match r["review"].as_object() {
            Some(rv) => format!(
                "{}: {}",
                rv.get("verdict").map(s).unwrap_or_default(),
                one(&rv.get("summary").map(s).unwrap_or_default())
            ),
            None => format!("{} ({})", s(&r["outcome"]), one(&s(&r["reason"]))),
        };
        t.push_str(&format!(
            "review:  {} ({}) {said}\n",
            s(&r["reviewer"]),
            s(&r["vendor"])
        ));
    }
    if v["repair_rounds"].as_u64().is_some_and(|n| n > 0) {
        t.push_str(&format!("repairs: {}\n", v["repair_rounds"]));
    }
    if !v["merge_hint"].is_null() {
        t.push_str(&format!("merge:   {}\n", one(&s(&v["merge_hint"]))));
    }
}

/// One line of a field, whatever a member put in it.
fn one(text: &str) -> std::borrow::Cow<'_, str> {
    crate::output::render::clean(text, crate::output::render::Shape::Line)
}

/// The whole record, for people.
pub fn markdown(rec: &Record, v: &Value) -> String {
    let mut m = format!("# Council {} ({})\n\n", rec.council_id, rec.kind);
    m.push_str(&format!(
        "**Status:** {}  \n**Task:** {}\n\n",
        s(&v["status"]),
        rec.task
    ));
    m.push_str(&format!("{}\n\n", s(&v["summary"])));
    if let Some(e) = v["error"].as_object() {
        m.push_str(&format!(
            "> **{}**: {}\n\n",
            e.get("kind").map(s).unwrap_or_default(),
            e.get("message").map(s).unwrap_or_default()
        ));
    }
    let warnings = list(&v["warnings"]);
    if !warnings.is_empty() {
        m.push_str("## Warnings\n\n");
        for w in warnings {
            m.push_str(&format!("- {w}\n"));
        }
        m.push('\n');
    }
    m.push_str("## Members\n\n| label | agent | model | vendor | proposing | critiquing |\n|---|---|---|---|---|---|\n");
    for mem in v["members"].as_array().into_iter().flatten() {
        m.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            s(&mem["label"]),
            s(&mem["agent"]),
            s(&mem["model"]),
            s(&mem["vendor"]),
            s(&mem["outcomes"]["proposing"]["outcome"]),
            s(&mem["outcomes"]["critiquing"]["outcome"]),
        ));
    }
    m.push_str(&format!(
        "\nSeed {}; {} identifying strings removed from what critics and the chair saw.\n\n",
        v["seed"], v["blinding"]["strips"]
    ));
    m.push_str("## Proposals\n\n");
    for p in v["proposals"].as_array().into_iter().flatten() {
        m.push_str(&format!("### {} ({})\n\n", s(&p["label"]), s(&p["agent"])));
        if p["outcome"] != "ok" {
            m.push_str(&format!("*{}*: {}\n\n", s(&p["outcome"]), s(&p["reason"])));
            continue;
        }
        m.push_str(&format!(
            "{}\n\n{}\n\n",
            s(&p["proposal"]["summary"]),
            s(&p["proposal"]["approach"])
        ));
    }
    m.push_str("## Critiques\n\n");
    for c in v["critiques"].as_array().into_iter().flatten() {
        m.push_str(&format!(
            "### by {} ({})\n\n",
            s(&c["critic"]),
            s(&c["agent"])
        ));
        for f in c["critique"]["findings"].as_array().into_iter().flatten() {
            m.push_str(&format!(
                "- [{}] on its {}: {}\n",
                s(&f["severity"]),
                s(&f["proposal"]),
                s(&f["description"])
            ));
        }
        m.push('\n');
    }
    if let Some(p) = v["plan"]["content"].as_object() {
        m.push_str(&format!(
            "## Plan (by {}, sha256 {})\n\n",
            s(&v["plan"]["by"]),
            s(&v["plan"]["sha256"])
        ));
        m.push_str(&format!(
            "{}\n\n",
            p.get("summary").map(s).unwrap_or_default()
        ));
        for (i, step) in p
            .get("steps")
            .map(list)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            m.push_str(&format!("{}. {step}\n", i + 1));
        }
        m.push_str(&format!(
            "\nAuthorized files: {}  \nTest command: {}  \nAdopted from: {}\n\n",
            p.get("authorized_files")
                .map(list)
                .unwrap_or_default()
                .join(", "),
            p.get("test_cmd").map(s).unwrap_or_default(),
            p.get("adopted_from")
                .map(list)
                .unwrap_or_default()
                .join(", "),
        ));
        for e in p
            .get("evidence")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            m.push_str(&format!(
                "- evidence `{}` {}: {}\n",
                s(&e["file"]),
                s(&e["check"]),
                s(&e["claim"])
            ));
        }
        for d in p
            .get("disagreements")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            m.push_str(&format!(
                "- disagreement: {} — ruling: {} — would settle: {}\n",
                s(&d["topic"]),
                s(&d["ruling"]),
                s(&d["would_settle"])
            ));
        }
        m.push('\n');
    }
    if !v["verification"].is_null() {
        m.push_str(&format!(
            "## Verification\n\n`{}`: passed {}\n\n{}\n\n",
            s(&v["verification"]["command"]),
            v["verification"]["passed"],
            crate::prompt::fence("", &s(&v["verification"]["output_tail"]))
        ));
    }
    for r in v["reviews"].as_array().into_iter().flatten() {
        m.push_str(&format!(
            "## Review by {}: {}\n\n{}\n\n",
            s(&r["reviewer"]),
            s(&r["review"]["verdict"]),
            s(&r["review"]["summary"])
        ));
    }
    if !v["merge_hint"].is_null() {
        m.push_str(&format!("## Merge\n\n{}\n", s(&v["merge_hint"])));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_failed_test_shows_its_last_lines_and_a_silent_reviewer_why() {
        let v = json!({
            "summary": "council X stopped (needs_human): the tests fail",
            "stage": "needs_human",
            "warnings": ["fell_back: the writer codex could not answer"],
            "error": {"kind": "needs_human", "message": "the tests fail", "hint": "read it"},
            "worktree": {"path": "/w", "branch": "baton/council-X", "commit": null,
                "changed_files": [], "reverted": ["b.txt"], "writer": "claude",
                "writer_summary": null},
            "verification": {"command": "make test", "exit_code": 2, "passed": false,
                "timed_out": false, "output_tail": "one\ntwo\nthree\nfour\nfive\nsix\nFAILED: x\n"},
            "reviews": [{"reviewer": "codex", "vendor": "openai", "outcome": "timeout",
                "reason": "no answer in 10m", "review": null}],
            "repair_rounds": 2,
            "merge_hint": null,
        });
        let t = text_of("X", false, &v);
        for want in [
            "warning: fell_back: the writer codex could not answer\n",
            "error:   [needs_human] the tests fail\nhint:    read it\n",
            "branch:  baton/council-X (commit none), 0 file(s) changed\n",
            "reverted: b.txt\n",
            "writer:  claude\n",
            "test:    FAILED (exit 2): make test\n  | three\n  | four\n  | five\n  | six\n  | FAILED: x\n",
            "review:  codex (openai) timeout (no answer in 10m)\n",
            "repairs: 2\n",
        ] {
            assert!(t.contains(want), "{want:?} not in:\n{t}");
        }
        assert!(!t.contains("merge:") && !t.contains("  | two"), "{t}");
    }
}

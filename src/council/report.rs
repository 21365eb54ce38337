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

pub fn text(_rec: &Record, v: &Value) -> String {
    let mut t = format!("{}\n", s(&v["summary"]));
    for w in list(&v["warnings"]) {
        t.push_str(&format!("warning: {w}\n"));
    }
    if let Some(p) = v["plan"]["content"].as_object() {
        t.push_str("\nplan:\n");
        for (i, step) in p
            .get("steps")
            .map(list)
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            t.push_str(&format!("  {}. {step}\n", i + 1));
        }
    }
    t
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

//! A child's output as a tool result: its JSON line as `structuredContent`
//! and, as the spec asks of a tool that returns structured content, the
//! same JSON serialised in a text block beside it (hosts such as gemini-cli
//! hand their model only the text: it then reads the whole result, not a
//! summary of it). A tool error (baton could not do the job) is an error
//! result that never carries `structuredContent`, so a client checking it
//! against the output schema is never misled.

use rmcp::model::{CallToolResult, ContentBlock as Content};
use serde_json::{Value, json};

use super::child::Ended;
use crate::result::ErrorReport;

/// The result of a call whose child ended.
pub fn from_child(ended: &Ended) -> CallToolResult {
    if let Some(e) = &ended.spawn_error {
        return tool_error("spawn_failed", e, None);
    }
    let line = String::from_utf8_lossy(&ended.stdout);
    let last = line.lines().rev().find(|l| !l.trim().is_empty());
    let Some(value) = last.and_then(|l| serde_json::from_str::<Value>(l).ok()) else {
        let how = match (ended.code, ended.signal) {
            (Some(c), _) => format!("exit code {c}"),
            (None, Some(s)) => format!("signal {s}"),
            _ => "no exit status".into(),
        };
        let tail = ended.stderr_tail.trim();
        return tool_error(
            "internal",
            &format!("baton printed no result ({how}){}", detail(tail)),
            None,
        );
    };
    from_value(value)
}

fn detail(tail: &str) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!(": {tail}")
    }
}

/// `value` is what the command printed.
pub fn from_value(value: Value) -> CallToolResult {
    if is_error_report(&value) {
        return CallToolResult::error(vec![Content::text(value.to_string())]);
    }
    // `structured` puts the serialised value in the text block as well.
    CallToolResult::structured(value)
}

/// An error result the caller can read (and a program can parse): baton's
/// error envelope (`status: "error"`, `error.kind`), as the CLI prints it.
pub fn tool_error(kind: &str, message: &str, hint: Option<&str>) -> CallToolResult {
    let v = json!({
        "schema_version": crate::result::SCHEMA_VERSION,
        "status": "error",
        "summary": format!("baton: {message}"),
        "error": {"kind": kind, "message": message, "hint": hint},
    });
    CallToolResult::error(vec![Content::text(v.to_string())])
}

/// baton's error envelope has exactly these keys; a result has more.
fn is_error_report(v: &Value) -> bool {
    let Some(o) = v.as_object() else {
        return false;
    };
    o.get("status").and_then(Value::as_str) == Some("error")
        && o.keys().all(|k| {
            matches!(
                k.as_str(),
                "schema_version" | "status" | "summary" | "error" | "exit_code"
            )
        })
        && serde_json::from_value::<ErrorReport>(v.clone()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(stdout: &str, code: i32) -> Ended {
        Ended {
            stdout: stdout.as_bytes().to_vec(),
            code: Some(code),
            ..Ended::default()
        }
    }

    #[test]
    fn an_error_envelope_is_an_error_result_without_structure() {
        let line = r#"{"schema_version":1,"status":"error","summary":"baton: no task given","error":{"kind":"usage","message":"no task given","hint":null},"exit_code":2}"#;
        let r = from_child(&ended(line, 2));
        assert_eq!(r.is_error, Some(true));
        assert!(r.structured_content.is_none());
        let text = serde_json::to_value(&r.content[0]).unwrap();
        assert!(
            text["text"]
                .as_str()
                .unwrap()
                .contains("\"kind\":\"usage\"")
        );
    }

    #[test]
    fn a_result_is_structured_with_a_summary_beside_it() {
        let line = "{\"schema_version\":1,\"summary\":\"none\",\"jobs\":[],\"total\":0}\n";
        let r = from_child(&ended(line, 0));
        assert_eq!(r.is_error, Some(false));
        let s = r.structured_content.unwrap();
        assert_eq!(s["total"], 0);
        // The text is the same JSON, serialised (MCP 2025-06-18), not the summary.
        assert_eq!(r.content.len(), 1);
        let text = serde_json::to_value(&r.content[0]).unwrap();
        let back: Value = serde_json::from_str(text["text"].as_str().unwrap()).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn no_output_is_a_tool_error_naming_the_exit_and_stderr() {
        let mut e = ended("", 101);
        e.stderr_tail = "thread main panicked\n".into();
        let r = from_child(&e);
        assert_eq!(r.is_error, Some(true));
        let text = serde_json::to_value(&r.content[0]).unwrap()["text"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            text.contains("exit code 101") && text.contains("panicked"),
            "{text}"
        );
    }
}

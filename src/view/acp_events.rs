//! ACP messages (`session/update` notifications and the prompt's answer) as
//! activities: any agent driven over ACP is shown the same way, whatever its
//! name, because the protocol types its tool calls, diffs and plans.
//!
//! Pure functions of one message; the text chunks are joined by the
//! `Reducer` (they arrive a few words at a time).

use serde_json::Value;

use super::activity::{Activity, Change, Step, Tally};
use super::events::s;
use crate::agent::acp::client::{ID_PROMPT, ID_SESSION};
use crate::agent::clip;

/// What one message adds: activities, and text to append to the message
/// being streamed (`None`: the message so far is complete).
pub(super) struct Read {
    pub acts: Vec<Activity>,
    pub text: Option<String>,
}

fn acts(acts: Vec<Activity>) -> Read {
    Read { acts, text: None }
}

pub(super) fn acp(v: &Value) -> Read {
    let id = v.get("id").and_then(Value::as_u64);
    match (v.get("method").and_then(Value::as_str), id) {
        (Some("session/update"), _) => update(v.pointer("/params/update").unwrap_or(&Value::Null)),
        (Some("session/request_permission"), Some(_)) => {
            let tc = v.pointer("/params/toolCall").unwrap_or(&Value::Null);
            acts(vec![Activity::Waiting {
                reason: format!("asks permission: {}", clip(s(tc, "title"), 120)),
            }])
        }
        (None, Some(ID_SESSION)) => match v.pointer("/result/sessionId").and_then(Value::as_str) {
            Some(sid) => acts(vec![Activity::Session {
                id: sid.to_string(),
                model: None,
            }]),
            None => acts(Vec::new()),
        },
        (None, Some(ID_PROMPT)) => {
            if let Some(e) = v.get("error") {
                return acts(vec![Activity::Error {
                    message: s(e, "message").to_string(),
                }]);
            }
            let r = v.get("result").unwrap_or(&Value::Null);
            match s(r, "stopReason") {
                "end_turn" => acts(vec![Activity::Done { tally: tally(r) }]),
                "" => acts(Vec::new()),
                other => acts(vec![Activity::Error {
                    message: format!("the turn stopped: {other}"),
                }]),
            }
        }
        (None, Some(_)) => match v.get("error") {
            Some(e) => acts(vec![Activity::Error {
                message: s(e, "message").to_string(),
            }]),
            None => acts(Vec::new()),
        },
        _ => acts(Vec::new()),
    }
}

fn tally(r: &Value) -> Tally {
    let u = r.get("usage").unwrap_or(&Value::Null);
    match (
        u.get("inputTokens").and_then(Value::as_u64),
        u.get("outputTokens").and_then(Value::as_u64),
    ) {
        (Some(input), Some(output)) => Tally::InOut { input, output },
        _ => Tally::None,
    }
}

fn update(u: &Value) -> Read {
    match s(u, "sessionUpdate") {
        "agent_message_chunk" => Read {
            acts: Vec::new(),
            text: Some(
                u.pointer("/content/text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            ),
        },
        "agent_thought_chunk" => match u.pointer("/content/text").and_then(Value::as_str) {
            Some(t) if !t.trim().is_empty() => acts(vec![Activity::Thinking { text: t.into() }]),
            _ => acts(Vec::new()),
        },
        "tool_call" => acts(tool_call(u)),
        "tool_call_update" => acts(match s(u, "status") {
            "failed" => vec![Activity::ToolFailed {
                message: failure(u),
            }],
            _ => Vec::new(),
        }),
        "plan" => acts(vec![Activity::Plan {
            steps: u
                .get("entries")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|e| Step {
                            text: s(e, "content").to_string(),
                            done: s(e, "status") == "completed",
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }]),
        _ => acts(Vec::new()),
    }
}

/// A tool call by its ACP kind: commands, file changes (one per diff or
/// location), or another tool named by its title.
fn tool_call(u: &Value) -> Vec<Activity> {
    let input = u.get("rawInput").unwrap_or(&Value::Null);
    let title = s(u, "title");
    let paths = crate::agent::acp::policy::paths_of(u);
    match s(u, "kind") {
        "execute" => vec![Activity::Command {
            command: match s(input, "command") {
                "" => title.to_string(),
                c => c.to_string(),
            },
        }],
        k @ ("edit" | "delete" | "move") if !paths.is_empty() => {
            let change = match k {
                "delete" => Change::Delete,
                "move" => Change::Edit,
                _ if is_new_file(u) => Change::Add,
                _ => Change::Edit,
            };
            paths
                .into_iter()
                .take(1)
                .map(|path| Activity::FileChange { change, path })
                .collect()
        }
        _ => vec![Activity::Tool {
            label: clip(if title.is_empty() { "tool" } else { title }, 200),
        }],
    }
}

/// A diff whose old text is empty (or absent) creates the file.
fn is_new_file(u: &Value) -> bool {
    u.get("content").and_then(Value::as_array).is_some_and(|c| {
        c.iter().any(|d| {
            s(d, "type") == "diff" && d.get("oldText").is_none_or(|o| o.as_str() == Some(""))
        })
    })
}

fn failure(u: &Value) -> String {
    if let Some(m) = u.pointer("/rawOutput/message").and_then(Value::as_str) {
        return m.to_string();
    }
    u.get("content")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find_map(|x| x.pointer("/content/text")?.as_str()))
        .unwrap_or("the tool call failed")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_copilot_create_is_a_new_file_and_its_rejection_a_failure() {
        let call = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {
            "sessionUpdate": "tool_call", "toolCallId": "c", "title": "Creating /w/a.txt",
            "kind": "edit", "status": "pending", "rawInput": {"path": "/w/a.txt"},
            "locations": [{"path": "/w/a.txt"}],
            "content": [{"type": "diff", "path": "/w/a.txt", "oldText": "", "newText": "x"}]}}});
        assert_eq!(
            acp(&call).acts,
            [Activity::FileChange {
                change: Change::Add,
                path: "/w/a.txt".into()
            }]
        );
        let rejected = json!({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {
            "sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "failed",
            "rawOutput": {"message": "The user rejected this tool call.", "code": "rejected"}}}});
        assert_eq!(
            acp(&rejected).acts,
            [Activity::ToolFailed {
                message: "The user rejected this tool call.".into()
            }]
        );
    }

    #[test]
    fn commands_plans_and_the_end() {
        let cmd = json!({"method": "session/update", "params": {"update": {
            "sessionUpdate": "tool_call", "kind": "execute", "title": "x",
            "rawInput": {"command": "ls -l"}}}});
        assert_eq!(
            acp(&cmd).acts,
            [Activity::Command {
                command: "ls -l".into()
            }]
        );
        let plan = json!({"method": "session/update", "params": {"update": {
            "sessionUpdate": "plan", "entries": [
                {"content": "a", "status": "completed", "priority": "high"},
                {"content": "b", "status": "pending", "priority": "low"}]}}});
        assert_eq!(
            acp(&plan).acts,
            [Activity::Plan {
                steps: vec![
                    Step {
                        text: "a".into(),
                        done: true
                    },
                    Step {
                        text: "b".into(),
                        done: false
                    }
                ]
            }]
        );
        let end = json!({"jsonrpc": "2.0", "id": ID_PROMPT, "result": {"stopReason": "end_turn",
            "usage": {"inputTokens": 10, "outputTokens": 2}}});
        assert_eq!(
            acp(&end).acts,
            [Activity::Done {
                tally: Tally::InOut {
                    input: 10,
                    output: 2
                }
            }]
        );
        let chunk = json!({"method": "session/update", "params": {"update": {
            "sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}}});
        assert_eq!(acp(&chunk).text.as_deref(), Some("hi"));
    }
}

//! Each agent's events mapped to `Activity` values: codex exec JSONL, claude
//! (and qwen) stream-json, opencode JSON lines, pi JSON, gemini-cli stream-json and agy's final object.
//!
//! Pure functions of one parsed event; the only state (gemini-cli's text
//! deltas, agy's buffered object) lives in `activity::Reducer`.

use serde_json::Value;

use super::activity::{Activity, Change, Step, Tally};
use crate::agent::{Agent, clip};

pub(super) fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Whether this event carries token counts (the agent's parser is then asked).
pub(super) fn carries_usage(agent: Agent, v: &Value) -> bool {
    match agent {
        Agent::Codex => s(v, "type") == "turn.completed",
        // Qwen Code's stream-json is claude's event shape.
        Agent::Claude | Agent::Qwen => matches!(s(v, "type"), "result" | "assistant"),
        Agent::Opencode => s(v, "type") == "step_finish",
        Agent::Zai | Agent::Pi => s(v, "type") == "message_end",
        Agent::GeminiCli => s(v, "type") == "result",
        Agent::Agy
        | Agent::Copilot
        | Agent::Kilo
        | Agent::Nanocoder
        | Agent::Cline
        | Agent::Byo(_) => false,
    }
}

fn session(id: &str, model: Option<&Value>) -> Activity {
    Activity::Session {
        id: id.to_string(),
        model: model
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .map(str::to_string),
    }
}

fn error(msg: &str) -> Activity {
    Activity::Error {
        message: readable(msg),
    }
}

/// API error bodies arrive as JSON text; keep their message.
fn readable(msg: &str) -> String {
    serde_json::from_str::<Value>(msg)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| msg.to_string())
}

fn failed(message: String) -> Activity {
    Activity::ToolFailed { message }
}

/// A tool call, classified the way people think of it: commands, file
/// changes, plans, or another tool named by its verb and target.
fn tool(name: &str, input: &Value) -> Vec<Activity> {
    let arg = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
            .unwrap_or("")
            .to_string()
    };
    let path = || arg(&["file_path", "path", "filePath", "notebook_path"]);
    let change = |change| Activity::FileChange {
        change,
        path: path(),
    };
    let lower = name.to_ascii_lowercase();
    vec![match lower.as_str() {
        "bash" | "shell" | "run_shell_command" | "exec_command" => Activity::Command {
            command: arg(&["command", "cmd"]),
        },
        "write" | "write_file" | "create" => change(Change::Write),
        "edit" | "multiedit" | "replace" | "str_replace" | "notebookedit" => change(Change::Edit),
        "read" | "read_file" | "read_many_files" => Activity::Tool {
            label: format!("read {}", path()),
        },
        "grep" | "glob" | "find" | "ls" | "search_file_content" | "list_directory" => {
            let what = arg(&["pattern", "query", "path", "dir_path"]);
            Activity::Tool {
                label: format!("{lower} {}", clip(&what, 200))
                    .trim_end()
                    .to_string(),
            }
        }
        "todowrite" | "write_todos" => {
            return vec![
                Activity::Tool {
                    label: format!("tool {name}"),
                },
                Activity::Plan {
                    steps: steps(input.get("todos"), "content", "description"),
                },
            ];
        }
        _ => Activity::Tool {
            label: format!("tool {name}"),
        },
    }]
}

/// Plan items from a todo array: text under `text_key` (or `alt`), done
/// when `status` is completed or `completed` is true.
fn steps(items: Option<&Value>, text_key: &str, alt: &str) -> Vec<Step> {
    items
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|i| Step {
                    text: match s(i, text_key) {
                        "" => s(i, alt).to_string(),
                        t => t.to_string(),
                    },
                    done: s(i, "status") == "completed"
                        || i.get("completed").and_then(Value::as_bool) == Some(true),
                })
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn codex(v: &Value) -> Vec<Activity> {
    let item = v.get("item").unwrap_or(&Value::Null);
    match (s(v, "type"), s(item, "type")) {
        ("thread.started", _) => vec![session(s(v, "thread_id"), None)],
        ("item.started", "command_execution") => vec![Activity::Command {
            command: s(item, "command").to_string(),
        }],
        ("item.completed", "command_execution") => {
            let exit_code = item.get("exit_code").and_then(Value::as_i64);
            let last_line = s(item, "aggregated_output")
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string();
            vec![Activity::CommandEnd {
                exit_code,
                failed: s(item, "status") == "failed" || exit_code.is_some_and(|c| c != 0),
                last_line,
            }]
        }
        ("item.completed", "agent_message") => vec![Activity::Message {
            text: s(item, "text").into(),
        }],
        ("item.completed", "reasoning") => vec![Activity::Thinking {
            text: s(item, "text").into(),
        }],
        ("item.completed", "file_change") => item
            .get("changes")
            .and_then(Value::as_array)
            .map(|cs| {
                cs.iter()
                    .map(|c| Activity::FileChange {
                        change: match s(c, "kind") {
                            "add" => Change::Add,
                            "delete" => Change::Delete,
                            _ => Change::Edit,
                        },
                        path: s(c, "path").to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        ("item.completed", "mcp_tool_call") => vec![Activity::Tool {
            label: format!("tool {}.{}", s(item, "server"), s(item, "tool")),
        }],
        ("item.completed", "web_search") => vec![Activity::Tool {
            label: format!("search {}", s(item, "query")),
        }],
        ("item.started" | "item.updated" | "item.completed", "todo_list") => vec![Activity::Plan {
            steps: steps(item.get("items"), "text", "content"),
        }],
        ("item.completed", "error") => vec![error(s(item, "message"))],
        ("turn.completed", _) => {
            let u = v.get("usage").unwrap_or(&Value::Null);
            let n = |k: &str| u.get(k).and_then(Value::as_u64);
            let tally = match (n("input_tokens"), n("output_tokens")) {
                (Some(input), Some(output)) => Tally::InOut { input, output },
                _ => Tally::None,
            };
            vec![Activity::Done { tally }]
        }
        ("turn.failed", _) => vec![error(
            v.pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("the turn failed"),
        )],
        // A retry announced as an error event (`Reconnecting... n/N`): not fatal.
        ("error", _) if s(v, "message").starts_with("Reconnecting") => vec![Activity::Waiting {
            reason: s(v, "message").to_string(),
        }],
        ("error", _) => vec![error(s(v, "message"))],
        _ => Vec::new(),
    }
}

fn blocks(v: &Value) -> &[Value] {
    v.pointer("/message/content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

pub(super) fn claude(v: &Value) -> Vec<Activity> {
    match s(v, "type") {
        "system" if s(v, "subtype") == "init" => {
            vec![session(s(v, "session_id"), v.get("model"))]
        }
        "assistant" => blocks(v)
            .iter()
            .flat_map(|b| match s(b, "type") {
                "text" if !s(b, "text").trim().is_empty() => vec![Activity::Message {
                    text: s(b, "text").into(),
                }],
                "thinking" => vec![Activity::Thinking {
                    text: s(b, "thinking").into(),
                }],
                "tool_use" => tool(s(b, "name"), b.get("input").unwrap_or(&Value::Null)),
                _ => Vec::new(),
            })
            .collect(),
        "user" => blocks(v)
            .iter()
            .filter(|b| {
                s(b, "type") == "tool_result"
                    && b.get("is_error").and_then(Value::as_bool).unwrap_or(false)
            })
            .map(|b| {
                failed(match b.get("content") {
                    Some(Value::String(t)) => t.clone(),
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .map(|p| s(p, "text"))
                        .collect::<Vec<_>>()
                        .join(" "),
                    _ => String::new(),
                })
            })
            .collect(),
        "result" => {
            let mut out: Vec<Activity> = v
                .get("permission_denials")
                .and_then(Value::as_array)
                .map(|ds| {
                    ds.iter()
                        .map(|d| {
                            let input = d.get("tool_input").unwrap_or(&Value::Null);
                            let what = ["file_path", "command", "path", "url"]
                                .iter()
                                .find_map(|k| input.get(*k).and_then(Value::as_str))
                                .unwrap_or("");
                            Activity::Denied {
                                tool: s(d, "tool_name").to_string(),
                                target: what.to_string(),
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            if v.get("is_error").and_then(Value::as_bool).unwrap_or(false) {
                out.push(error(s(v, "result")));
            } else {
                let tally = match v.get("num_turns").and_then(Value::as_u64) {
                    Some(turns) => Tally::Turns {
                        turns,
                        cost_usd: v.get("total_cost_usd").and_then(Value::as_f64),
                    },
                    None => Tally::None,
                };
                out.push(Activity::Done { tally });
            }
            out
        }
        _ => Vec::new(),
    }
}

/// opencode's `run --format json` lines: `text`, `tool_use` (with its
/// state), `step_finish`, `error`; every line carries `sessionID`.
pub(super) fn opencode(v: &Value) -> Vec<Activity> {
    let part = v.get("part").unwrap_or(&Value::Null);
    match s(v, "type") {
        "text" if !s(part, "text").trim().is_empty() => vec![Activity::Message {
            text: s(part, "text").into(),
        }],
        "tool_use" => {
            let state = part.get("state").unwrap_or(&Value::Null);
            let mut out = tool(s(part, "tool"), state.get("input").unwrap_or(&Value::Null));
            if s(state, "status") == "error" {
                out.push(failed(s(state, "error").to_string()));
            }
            out
        }
        "step_finish" if s(part, "reason") == "stop" => {
            let tally = match part.pointer("/tokens/total").and_then(Value::as_u64) {
                Some(tokens) => Tally::Total { tokens },
                None => Tally::None,
            };
            vec![Activity::Done { tally }]
        }
        "error" => {
            let msg = v
                .pointer("/error/data/message")
                .or_else(|| v.pointer("/error/name"))
                .and_then(Value::as_str)
                .unwrap_or("error");
            vec![error(msg)]
        }
        _ => Vec::new(),
    }
}

pub(super) fn pi(v: &Value) -> Vec<Activity> {
    match s(v, "type") {
        "session" => vec![session(s(v, "id"), None)],
        "message_end"
            if v.pointer("/message/role").and_then(Value::as_str) == Some("assistant") =>
        {
            let m = &v["message"];
            let mut out: Vec<Activity> = m
                .get("content")
                .and_then(Value::as_array)
                .map(|bs| {
                    bs.iter()
                        .flat_map(|b| match s(b, "type") {
                            "text" if !s(b, "text").trim().is_empty() => {
                                vec![Activity::Message {
                                    text: s(b, "text").into(),
                                }]
                            }
                            "thinking" => vec![Activity::Thinking {
                                text: s(b, "thinking").into(),
                            }],
                            "toolCall" => {
                                tool(s(b, "name"), b.get("arguments").unwrap_or(&Value::Null))
                            }
                            _ => Vec::new(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            if s(m, "stopReason") == "error" {
                let e = s(m, "errorMessage");
                out.push(error(if e.is_empty() {
                    "the model call failed"
                } else {
                    e
                }));
            }
            out
        }
        "tool_execution_end" if v.get("isError").and_then(Value::as_bool) == Some(true) => {
            vec![failed(
                v.pointer("/result/content/0/text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            )]
        }
        _ => Vec::new(),
    }
}

/// gemini-cli events other than assistant text (joined by the reducer).
pub(super) fn gemini_cli(v: &Value) -> Vec<Activity> {
    match s(v, "type") {
        "init" => vec![session(s(v, "session_id"), v.get("model"))],
        "tool_use" => tool(
            s(v, "tool_name"),
            v.get("parameters").unwrap_or(&Value::Null),
        ),
        "tool_result" if s(v, "status") != "success" => vec![failed(
            v.pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or(s(v, "status"))
                .to_string(),
        )],
        "result" => {
            if s(v, "status") == "success" {
                let tally = match v.pointer("/stats/total_tokens").and_then(Value::as_u64) {
                    Some(tokens) => Tally::Total { tokens },
                    None => Tally::None,
                };
                vec![Activity::Done { tally }]
            } else {
                vec![error(
                    v.pointer("/error/message")
                        .and_then(Value::as_str)
                        .unwrap_or("the turn failed"),
                )]
            }
        }
        "error" => vec![error(
            v.pointer("/error/message")
                .or_else(|| v.get("message"))
                .and_then(Value::as_str)
                .unwrap_or("error"),
        )],
        _ => Vec::new(),
    }
}

/// agy's whole output: one object at the end (sometimes inside an event
/// wrapper), or plain text when it failed before printing one.
pub(super) fn agy(out: &str) -> Vec<Activity> {
    let obj = serde_json::from_str::<Value>(out.trim()).ok().or_else(|| {
        out.lines()
            .rev()
            .find_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
    });
    let Some(mut v) = obj.filter(Value::is_object) else {
        return out
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| Activity::Text { line: l.into() })
            .collect();
    };
    if v.get("event").is_some()
        && let Some(r) = v.get("result")
    {
        v = r.clone();
    }
    let mut acts = Vec::new();
    let id = v
        .get("conversation_id")
        .or_else(|| v.get("session_id"))
        .and_then(Value::as_str);
    if let Some(id) = id {
        acts.push(session(id, v.get("model")));
    }
    let resp = s(&v, "response");
    if !resp.trim().is_empty() {
        acts.push(Activity::Message { text: resp.into() });
    }
    let ok = s(&v, "status").eq_ignore_ascii_case("success")
        && !v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
    if ok {
        acts.push(Activity::Done { tally: Tally::None });
    } else {
        let e = match v.get("error") {
            Some(Value::String(e)) => e.clone(),
            Some(e) if !e.is_null() => s(e, "message").to_string(),
            _ => format!("agy status: {}", s(&v, "status")),
        };
        acts.push(error(&e));
    }
    acts
}

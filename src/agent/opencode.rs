//! opencode (`opencode-ai`): `opencode run --format json`, prompt on stdin.
//! Access through opencode's own permission rules, its session id and usage.
//!
//! Facts this relies on (measured with opencode 1.18.33 against the e2e
//! mock, see docs/agents-opencode-qwen.md): with the default `build` agent,
//! edits and commands in the project run without asking, and a path outside
//! it needs the `external_directory` permission, which is "ask"; a headless
//! run answers every "ask" with a rejection, and a rejection ends the run
//! after that step (`step_finish` with reason `tool-calls`, exit 0); `--auto`
//! approves every "ask". A tool whose permission is "deny" is not offered to
//! the model at all, and a call to it comes back through the `invalid` tool.
//! Agent-level permissions in a project's `opencode.json` override top-level
//! ones, so read-only is a baton-defined agent (agent config from
//! `OPENCODE_CONFIG_CONTENT` is merged last). An API error is a `type:
//! "error"` event and exit 1.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Access, CommandSpec, Outcome, ProcessExit, Request, Signal, clip, last_line};
use crate::error::{Error, Result};
use crate::failure::{self, Failure, Named};
use crate::result::{Denial, Usage};

/// The agent baton defines for read-only runs.
pub const READ_ONLY_AGENT: &str = "baton-read-only";

/// The variable opencode reads inline config from (merged after every
/// config file, so what baton puts there wins over the project's).
pub const CONFIG_ENV: &str = "OPENCODE_CONFIG_CONTENT";

/// Usage errors the pure `command` cannot express.
pub fn check(req: &Request) -> Result<()> {
    if let Some(p) = &req.provider {
        match req.model.as_deref() {
            None => {
                return Err(Error::usage_hint(
                    format!("`--provider {p}` needs `--model` for opencode"),
                    "add --model <id> (baton passes `-m <provider>/<id>`), or drop --provider \
                     and let opencode use its configured model",
                ));
            }
            Some(m) if m.contains('/') && !m.starts_with(&format!("{p}/")) => {
                return Err(Error::usage_hint(
                    format!("--model `{m}` names another provider than `--provider {p}`"),
                    "give the model without its provider, or drop --provider",
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// `existing`: the caller's own `OPENCODE_CONFIG_CONTENT`, kept (the agent
/// is added to it) so a provider configured there still works.
pub fn command(req: &Request, existing: Option<&str>) -> CommandSpec {
    let mut c = CommandSpec::new("opencode");
    c.args(["run", "--format", "json"]);
    if let Some(m) = &req.model {
        let model = match &req.provider {
            Some(p) if !m.contains('/') => format!("{p}/{m}"),
            _ => m.clone(),
        };
        c.args(["-m", &model]);
    }
    if let Some(e) = &req.effort {
        c.args(["--variant", e]);
    }
    if let Some(id) = &req.resume {
        c.args(["--session", id]);
    }
    // Under baton's sandbox the file system holds read-only access, so
    // opencode keeps its tools (its bash can run the project's tests).
    if (req.access == Access::ReadOnly && !req.confined) || req.extra.no_tools {
        let (config, warning) = read_only_config(existing, req.extra.no_tools);
        c.args(["--agent", READ_ONLY_AGENT]);
        c.env_set.push((CONFIG_ENV.into(), config));
        c.warnings.extend(warning);
    } else if req.access != Access::Full && req.confined {
        // baton's sandbox confines its bash tool too: no warning.
    } else if req.access == Access::Workspace {
        c.warnings.push(
            "opencode has no sandbox: with workspace access its bash tool is not confined to \
             the working directory (only its file tools are, by the external_directory rule)"
                .into(),
        );
    } else {
        // Full: approve every "ask" (paths outside the project); "deny"
        // rules of the user's own config still hold.
        c.arg("--auto");
    }
    c.stdin = Some(req.prompt.clone());
    c
}

/// `baton attach`: opencode's TUI on the job's session (`opencode
/// --session <id>`), with the read-only agent or `--auto` as the job had.
pub fn interactive_resume(req: &Request, session: &str, existing: Option<&str>) -> CommandSpec {
    let mut c = CommandSpec::new("opencode");
    if let Some(m) = &req.model {
        let model = match &req.provider {
            Some(p) if !m.contains('/') => format!("{p}/{m}"),
            _ => m.clone(),
        };
        c.args(["-m", &model]);
    }
    match req.access {
        Access::ReadOnly => {
            let (config, warning) = read_only_config(existing, false);
            c.args(["--agent", READ_ONLY_AGENT]);
            c.env_set.push((CONFIG_ENV.into(), config));
            c.warnings.extend(warning);
        }
        Access::Workspace => {}
        Access::Full => {
            c.arg("--auto");
        }
    }
    c.args(["--session", session]);
    c
}

/// The inline config that defines baton's read-only agent: every
/// permission denied except reading and searching (`no_tools`: all denied).
/// Rules are matched last-first, so the allows after `*` win for those tools.
pub fn read_only_config(existing: Option<&str>, no_tools: bool) -> (String, Option<String>) {
    let permission = if no_tools {
        json!({"*": "deny"})
    } else {
        json!({"*": "deny", "read": "allow", "glob": "allow", "grep": "allow",
               "list": "allow", "todowrite": "allow"})
    };
    let agent = json!({
        "mode": "primary",
        "description": "baton: read-only (reading and searching only)",
        "permission": permission,
    });
    let mut warning = None;
    let mut config = match existing.map(serde_json::from_str::<Value>) {
        Some(Ok(v @ Value::Object(_))) => v,
        Some(_) => {
            warning = Some(format!(
                "{CONFIG_ENV} is not a JSON object; baton replaced it for this read-only run"
            ));
            json!({})
        }
        None => json!({}),
    };
    if !config.get("agent").is_some_and(Value::is_object) {
        config["agent"] = json!({});
    }
    config["agent"][READ_ONLY_AGENT] = agent;
    (config.to_string(), warning)
}

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(rename = "sessionID")]
    session_id: Option<String>,
    part: Option<Part>,
    error: Option<ErrorEvent>,
}

#[derive(Deserialize)]
struct Part {
    text: Option<String>,
    tool: Option<String>,
    state: Option<ToolState>,
    reason: Option<String>,
    tokens: Option<Tokens>,
    cost: Option<f64>,
}

#[derive(Deserialize)]
struct ToolState {
    status: Option<String>,
    input: Option<Value>,
    error: Option<String>,
}

#[derive(Deserialize)]
struct Tokens {
    input: Option<u64>,
    output: Option<u64>,
    reasoning: Option<u64>,
    cache: Option<Cache>,
}

#[derive(Deserialize)]
struct Cache {
    read: Option<u64>,
    write: Option<u64>,
}

#[derive(Deserialize)]
struct ErrorEvent {
    name: Option<String>,
    data: Option<ErrorData>,
}

#[derive(Deserialize)]
struct ErrorData {
    message: Option<String>,
    #[serde(rename = "statusCode")]
    status: Option<u16>,
    /// The provider's body as it came (codes the message leaves out).
    #[serde(rename = "responseBody")]
    response_body: Option<String>,
    #[serde(rename = "responseHeaders")]
    response_headers: Option<serde_json::Map<String, Value>>,
}

#[derive(Debug, Clone, Default)]
pub struct Parser {
    session: Option<String>,
    /// Text since the last tool call: the final answer.
    text: String,
    last_reason: Option<String>,
    error: Option<String>,
    failure: Option<Named>,
    usage: Usage,
    denials: Vec<Denial>,
    recognised: bool,
}

impl Parser {
    pub fn feed(&mut self, line: &[u8]) -> Signal {
        let Ok(ev) = serde_json::from_slice::<Event>(line) else {
            return Signal::Nothing;
        };
        self.recognised = true;
        if self.session.is_none() {
            self.session = ev.session_id;
        }
        let part = ev.part;
        match ev.kind.as_ref() {
            "text" => {
                if let Some(t) = part.and_then(|p| p.text) {
                    if !self.text.is_empty() {
                        self.text.push('\n');
                    }
                    self.text.push_str(&t);
                }
            }
            "tool_use" => {
                self.text.clear();
                if let Some(p) = part {
                    self.tool(p);
                }
            }
            "step_finish" => {
                if let Some(p) = part {
                    self.last_reason = p.reason;
                    if let Some(t) = p.tokens {
                        let cached = t.cache.as_ref().and_then(|c| c.read).unwrap_or(0);
                        let written = t.cache.as_ref().and_then(|c| c.write).unwrap_or(0);
                        let reasoning = t.reasoning.unwrap_or(0);
                        self.usage.add(&Usage {
                            // opencode's `input` excludes cache reads and
                            // writes, and `output` excludes reasoning.
                            input_tokens: t
                                .input
                                .map(|i| i.saturating_add(cached).saturating_add(written)),
                            output_tokens: t.output.map(|o| o.saturating_add(reasoning)),
                            cached_input_tokens: Some(cached),
                            reasoning_output_tokens: (reasoning > 0).then_some(reasoning),
                            // 0: no price known; a negative one is
                            // refused (with a warning) by `run::execute`.
                            cost_usd: p.cost.filter(|c| *c != 0.0),
                            cost_estimated: false,
                        });
                    }
                    if self.last_reason.as_deref() == Some("stop") {
                        return Signal::TurnFinished;
                    }
                }
            }
            "error" => {
                let e = ev.error;
                let name = e.as_ref().and_then(|e| e.name.clone());
                let data = e.and_then(|e| e.data);
                let status = data.as_ref().and_then(|d| d.status);
                self.failure = classify(name.as_deref(), data.as_ref());
                let msg = data
                    .and_then(|d| d.message)
                    .or(name)
                    .unwrap_or_else(|| "opencode reported an error".into());
                self.error = Some(match status {
                    Some(s) if !msg.contains(&s.to_string()) => format!("{msg} (HTTP {s})"),
                    _ => msg,
                });
                return Signal::TurnFinished;
            }
            _ => {}
        }
        Signal::Nothing
    }

    /// A refused call: a rejected "ask", a "deny" rule, or a tool not
    /// offered at all (opencode routes that call to its `invalid` tool).
    fn tool(&mut self, p: Part) {
        let Some(state) = p.state else { return };
        let tool = p.tool.unwrap_or_else(|| "tool".into());
        let input = state.input.unwrap_or(Value::Null);
        if tool == "invalid" {
            let err = input.get("error").and_then(Value::as_str).unwrap_or("");
            if err.contains("unavailable tool") {
                self.denials.push(Denial {
                    tool: input
                        .get("tool")
                        .and_then(Value::as_str)
                        .unwrap_or("tool")
                        .to_string(),
                    detail: clip(err, 300),
                });
            }
            return;
        }
        if state.status.as_deref() != Some("error") {
            return;
        }
        let err = state.error.unwrap_or_default();
        // A rejected "ask", a "deny" rule, and (with baton's read-only agent,
        // which also denies `invalid`) a call to a tool it does not offer.
        if err.contains("rejected permission")
            || err.contains("prevents you from using")
            || err.contains("unavailable tool")
        {
            let target = ["filePath", "command", "path", "url"]
                .iter()
                .find_map(|k| input.get(*k).and_then(Value::as_str));
            let detail = match target {
                Some(t) => format!("{t}: {err}"),
                None => err,
            };
            self.denials.push(Denial {
                tool,
                detail: clip(&detail, 300),
            });
        }
    }

    pub fn finish(self, end: &ProcessExit) -> Outcome {
        let stopped = self.last_reason.as_deref() == Some("stop");
        let success = self.error.is_none() && stopped;
        let error = if success {
            None
        } else if let Some(e) = self.error {
            Some(e)
        } else if let (Some(reason), Some(d)) = (&self.last_reason, self.denials.last()) {
            // A rejected permission ends opencode's loop with no answer.
            Some(format!(
                "opencode stopped (last step: {reason}) after a refused `{}` call: {}",
                d.tool, d.detail
            ))
        } else {
            last_line(&end.stderr_tail).or_else(|| {
                Some(match &self.last_reason {
                    Some(r) => format!("opencode ended without a final answer (last step: {r})"),
                    None => "opencode ended without a final answer".into(),
                })
            })
        };
        Outcome {
            failure: if success { None } else { self.failure },
            success,
            error,
            session: self.session,
            message: (!self.text.is_empty()).then_some(self.text),
            usage: self.usage,
            model: None,
            denials: self.denials,
            warnings: Vec::new(),
            unparsable: !self.recognised,
        }
    }
}

/// The kind of opencode's `error` event (1.18.33, measured in
/// tests/fixtures/failures/opencode): its own name for a context overflow,
/// else the provider's status, message and body (with the codes the
/// message leaves out), or Bun's words for a connection that failed; the
/// wait from the provider's `retry-after` header, which it passes on.
fn classify(name: Option<&str>, data: Option<&ErrorData>) -> Option<Named> {
    let d = data?;
    let text = format!(
        "{} {}",
        d.message.as_deref().unwrap_or(""),
        d.response_body.as_deref().unwrap_or("")
    );
    let failure = if name == Some("ContextOverflowError") {
        Failure::ContextTooLong
    } else {
        failure::from_provider(d.status, &text)
            .or_else(|| failure::is_network(&text).then_some(Failure::Network))?
    };
    let header = d
        .response_headers
        .as_ref()
        .and_then(|h| h.get("retry-after"))
        .and_then(Value::as_str)
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|s| s.ceil() as u64);
    Some(Named {
        failure,
        retry_after_s: header.or_else(|| failure::retry_after_in(&text)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Agent;

    fn req(access: Access) -> Request {
        Request::test(access)
    }

    #[test]
    fn argv_per_access() {
        let ro = command(&req(Access::ReadOnly), None);
        assert_eq!(
            ro.args_lossy(),
            ["run", "--format", "json", "--agent", READ_ONLY_AGENT]
        );
        let (k, v) = &ro.env_set[0];
        assert_eq!(k, CONFIG_ENV);
        let cfg: Value = serde_json::from_str(v).unwrap();
        let perm = &cfg["agent"][READ_ONLY_AGENT]["permission"];
        assert_eq!(perm["*"], "deny");
        assert_eq!(perm["read"], "allow");
        assert!(perm.get("edit").is_none() && perm.get("bash").is_none());
        assert_eq!(ro.stdin.as_deref(), Some("task"));

        let ws = command(&req(Access::Workspace), None);
        assert_eq!(ws.args_lossy(), ["run", "--format", "json"]);
        assert!(ws.env_set.is_empty());
        assert_eq!(ws.warnings.len(), 1);

        let full = command(&req(Access::Full), None);
        assert_eq!(full.args_lossy(), ["run", "--format", "json", "--auto"]);
        assert!(full.env_set.is_empty() && full.warnings.is_empty());
    }

    #[test]
    fn model_provider_variant_resume() {
        let mut r = req(Access::Workspace);
        r.model = Some("glm-5.2".into());
        r.provider = Some("zai".into());
        r.effort = Some("high".into());
        r.resume = Some("ses_1".into());
        assert_eq!(
            command(&r, None).args_lossy(),
            [
                "run",
                "--format",
                "json",
                "-m",
                "zai/glm-5.2",
                "--variant",
                "high",
                "--session",
                "ses_1"
            ]
        );
        r.model = Some("zai/glm-5.2".into());
        assert_eq!(command(&r, None).args_lossy()[4], "zai/glm-5.2");
        r.provider = None;
        assert_eq!(command(&r, None).args_lossy()[4], "zai/glm-5.2");
    }

    #[test]
    fn provider_needs_a_matching_model() {
        let mut r = req(Access::Workspace);
        r.provider = Some("zai".into());
        assert_eq!(Agent::Opencode.command(&r).unwrap_err().kind(), "usage");
        r.model = Some("openai/gpt-5".into());
        assert_eq!(Agent::Opencode.command(&r).unwrap_err().kind(), "usage");
        r.model = Some("gpt-5".into());
        assert!(Agent::Opencode.command(&r).is_ok());
    }

    #[test]
    fn read_only_config_keeps_the_callers_config() {
        let (c, w) = read_only_config(Some(r#"{"provider":{"x":{}},"agent":{"a":{}}}"#), false);
        let v: Value = serde_json::from_str(&c).unwrap();
        assert!(v["provider"]["x"].is_object() && v["agent"]["a"].is_object());
        assert!(v["agent"][READ_ONLY_AGENT].is_object());
        assert!(w.is_none());
        let (c, w) = read_only_config(Some("// jsonc"), true);
        let v: Value = serde_json::from_str(&c).unwrap();
        assert_eq!(
            v["agent"][READ_ONLY_AGENT]["permission"],
            json!({"*": "deny"})
        );
        assert!(w.is_some());
    }

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/tests/fixtures/opencode/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn parse(name: &str, code: i32) -> Outcome {
        Agent::Opencode.parse_transcript(
            &fixture(name),
            &ProcessExit {
                code: Some(code),
                stderr_tail: String::new(),
            },
        )
    }

    #[test]
    fn parses_basic() {
        let o = parse("opencode-run-json-basic.jsonl", 0);
        assert!(o.success, "{o:?}");
        assert_eq!(o.session.as_deref(), Some("ses_dd2000f2bffetACuusqlHfAkk0"));
        assert_eq!(o.message.as_deref(), Some("bars plain answer 7731"));
        assert_eq!(o.usage.input_tokens, Some(120));
        assert_eq!(o.usage.output_tokens, Some(12));
        assert_eq!(o.usage.cost_usd, None);
    }

    #[test]
    fn final_answer_after_the_tool_and_usage_summed() {
        let o = parse("opencode-write.jsonl", 0);
        assert!(o.success);
        assert_eq!(
            o.message.as_deref(),
            Some("WRITE-DONE tool_output=<Wrote file successfully.>")
        );
        // Two model calls of 1234 input (200 cached) each.
        assert_eq!(o.usage.input_tokens, Some(2468));
        assert_eq!(o.usage.cached_input_tokens, Some(400));
        assert!(o.denials.is_empty());
    }

    #[test]
    fn unavailable_tool_is_a_denial() {
        let o = parse("opencode-deny-write-unavailable.jsonl", 0);
        assert!(o.success);
        assert_eq!(o.denials.len(), 1);
        assert_eq!(o.denials[0].tool, "write");
    }

    #[test]
    fn rule_denial_is_reported() {
        let o = parse("opencode-plan-agent-write.jsonl", 0);
        assert!(o.success);
        assert_eq!(o.denials[0].tool, "write");
        assert!(o.denials[0].detail.contains("out.txt"));
    }

    /// baton's own read-only agent, with a project opencode.json that
    /// allows edits for the build agent: the write is still refused.
    #[test]
    fn read_only_agent_refuses_the_write() {
        let o = parse("opencode-read-only-agent-write.jsonl", 0);
        assert!(o.success);
        assert_eq!(o.denials.len(), 1);
        assert_eq!(o.denials[0].tool, "write");
        assert!(o.denials[0].detail.contains("unavailable tool"));
    }

    /// Workspace: a file outside the project needs external_directory,
    /// an "ask" that the headless run rejects; `--auto` (full) allows it.
    #[test]
    fn external_write_refused_in_workspace_allowed_in_full() {
        let ws = parse("opencode-workspace-external-write.jsonl", 0);
        assert!(!ws.success);
        assert!(ws.denials[0].detail.starts_with("/tmp/scratch/ext/out.txt"));
        let full = parse("opencode-full-auto-external-write.jsonl", 0);
        assert!(full.success && full.denials.is_empty());
    }

    #[test]
    fn auto_rejected_ask_ends_the_run_as_a_failure() {
        let o = parse("opencode-ask-auto-rejected.jsonl", 0);
        assert!(!o.success);
        assert_eq!(o.denials.len(), 1);
        assert!(o.error.unwrap().contains("refused `write` call"));
    }

    #[test]
    fn api_error() {
        let o = parse("opencode-api-error.jsonl", 1);
        assert!(!o.success);
        assert_eq!(
            o.error.as_deref(),
            Some("mock: scripted bad request (HTTP 400)")
        );
        assert!(o.session.is_some());
    }
}

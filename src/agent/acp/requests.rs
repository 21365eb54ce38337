//! What the ACP client sends: `initialize`, the session (new or loaded),
//! the session mode an access needs, the prompt, and the end of input; and
//! the part of the `initialize` answer it reads.

use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Value, json};

use super::client::ID_INITIALIZE;
use super::client::{Client, ID_MODE, ID_PROMPT, ID_SESSION, Outgoing, Setup, Stage};

impl Client {
    /// Attach the outbox and send `initialize`. Called once the process runs.
    pub fn start(&mut self, out: std::sync::mpsc::Sender<Outgoing>) {
        self.out = Some(out);
        self.send_request(ID_INITIALIZE, "initialize", initialize_params());
    }

    pub(super) fn open_session(&mut self) {
        let Some(s) = &self.setup else {
            return;
        };
        let cwd = s.policy.cwd.clone();
        match s.resume.clone() {
            Some(id) => {
                self.session = Some(id.clone());
                let p = LoadSession {
                    mcp_servers: [],
                    cwd,
                    session_id: id,
                };
                self.send_request(ID_SESSION, "session/load", to_value(p));
            }
            None => {
                let p = NewSession {
                    cwd,
                    mcp_servers: [],
                };
                self.send_request(ID_SESSION, "session/new", to_value(p));
            }
        }
    }

    /// Set the session mode this access needs, if the profile names one; a
    /// session that does not offer it cannot be trusted to ask first.
    pub(super) fn set_mode_or_prompt(&mut self, session_result: &Value) {
        let Some(s) = &self.setup else {
            self.stage = Stage::Prompting;
            return;
        };
        let Some(mode) = self.profile.mode_for(s.policy.access) else {
            self.send_prompt();
            return;
        };
        let offered: Vec<&str> = session_result
            .pointer("/modes/availableModes")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|m| m.get("id").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default();
        if !offered.is_empty() && !offered.contains(&mode) {
            let _ = self.fail(format!(
                "the agent does not offer session mode `{mode}` (it offers {}), which baton \
                 needs to enforce {} access",
                offered.join(", "),
                s.policy.access.as_str()
            ));
            return;
        }
        let session = self.session.clone().unwrap_or_default();
        self.stage = Stage::SettingMode;
        let p = SetMode {
            session_id: session,
            mode_id: mode,
        };
        self.send_request(ID_MODE, "session/set_mode", to_value(p));
    }

    pub(super) fn send_prompt(&mut self) {
        self.stage = Stage::Prompting;
        let Some(s) = &self.setup else {
            return;
        };
        let session = self.session.clone().unwrap_or_default();
        let prompt = s.prompt.clone();
        let logged = format!("[the prompt: {} bytes, as in prompt.txt]", prompt.len());
        let p = Prompt {
            session_id: session,
            prompt: [Text {
                kind: "text",
                text: prompt,
            }],
        };
        let msg =
            json!({"jsonrpc": "2.0", "id": ID_PROMPT, "method": "session/prompt", "params": p});
        let mut log = msg.clone();
        if let Some(t) = log.pointer_mut("/params/prompt/0/text") {
            *t = Value::String(logged);
        }
        self.send(msg, Some(log));
    }

    pub(super) fn send_request(&mut self, id: u64, method: &str, params: Value) {
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
            None,
        );
    }

    pub(super) fn send(&mut self, msg: Value, logged: Option<Value>) {
        let Some(out) = &self.out else {
            return;
        };
        let wire = msg.to_string();
        let logged = logged.map_or_else(|| wire.clone(), |l| l.to_string());
        let _ = out.send(Outgoing::Line { wire, logged });
    }

    pub(super) fn close(&mut self) {
        if let Some(out) = self.out.take() {
            let _ = out.send(Outgoing::Close);
        }
    }

    /// The messages a run would send before any answer (`--dry-run`).
    pub fn planned(setup: &Setup) -> Vec<Value> {
        let (tx, rx) = std::sync::mpsc::channel();
        let mut c = Client::new(setup.clone(), None);
        c.start(tx);
        // Pretend the agent answered, to show what follows.
        let _ = c.feed(
            json!({"jsonrpc": "2.0", "id": ID_INITIALIZE, "result":
                {"protocolVersion": 1, "agentCapabilities": {"loadSession": true}}})
            .to_string()
            .as_bytes(),
        );
        let _ = c.feed(
            json!({"jsonrpc": "2.0", "id": ID_SESSION, "result": {"sessionId": "<session id>"}})
                .to_string()
                .as_bytes(),
        );
        if c.stage == Stage::SettingMode {
            let _ = c.feed(
                json!({"jsonrpc": "2.0", "id": ID_MODE, "result": {}})
                    .to_string()
                    .as_bytes(),
            );
        }
        drop(c);
        rx.try_iter()
            .filter_map(|o| match o {
                Outgoing::Line { logged, .. } => serde_json::from_str(&logged).ok(),
                Outgoing::Close => None,
            })
            .collect()
    }
}

fn to_value(v: impl serde::Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// `initialize` as baton sends it: protocol 1, and no file-system or
/// terminal capability (the agent uses its own tools, under the policy).
/// The `initialize` parameters baton sends (protocol 1, no file-system or
/// terminal capability); `doctor` sends the same.
pub fn initialize_params() -> Value {
    json!({
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": {"readTextFile": false, "writeTextFile": false},
            "terminal": false,
            "auth": {"terminal": false},
        },
        "clientInfo": {"name": "baton", "version": env!("CARGO_PKG_VERSION")},
    })
}

// The parameters of the requests baton sends, in ACP v1's wire form (field
// order as the protocol's published types write it). Ours rather than the
// `agent-client-protocol` crate's: five small shapes did not justify its
// dependency tree (futures, tracing, serde_with, a second syn), ~0.2 MB of
// the binary. A path that is not UTF-8 fails to serialise, as it did there.

/// `session/new`: baton offers no MCP servers.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NewSession {
    cwd: PathBuf,
    mcp_servers: [(); 0],
}

/// `session/load`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LoadSession {
    mcp_servers: [(); 0],
    cwd: PathBuf,
    session_id: String,
}

/// `session/set_mode`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SetMode<'a> {
    session_id: String,
    mode_id: &'a str,
}

/// `session/prompt`: the prompt as one text block.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Prompt {
    session_id: String,
    prompt: [Text; 1],
}

#[derive(Serialize)]
struct Text {
    #[serde(rename = "type")]
    kind: &'static str,
    text: String,
}

/// `session/cancel` (a notification).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Cancel {
    pub session_id: String,
}

/// The part of ACP v1's `initialize` answer baton reads. As in the
/// protocol's published types, only `protocolVersion` (a u16) is required,
/// unknown fields are ignored, and a malformed optional part reads as absent.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct InitializeResponse {
    pub protocol_version: u16,
    #[serde(default, deserialize_with = "or_default")]
    pub agent_capabilities: AgentCapabilities,
    #[serde(default, deserialize_with = "or_default")]
    pub agent_info: Option<Implementation>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct AgentCapabilities {
    #[serde(default, deserialize_with = "or_default")]
    pub load_session: bool,
}

#[derive(Deserialize)]
pub(super) struct Implementation {
    pub name: String,
    #[allow(dead_code)] // required by the protocol: an `agentInfo` without it is dropped
    version: String,
}

/// The value, or its default when it does not have the expected shape.
fn or_default<'de, D: Deserializer<'de>, T: serde::de::DeserializeOwned + Default>(
    d: D,
) -> Result<T, D::Error> {
    let v = Value::deserialize(d)?;
    Ok(T::deserialize(v).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parameters as the `agent-client-protocol` crate (5.2, schema
    /// 1.17) wrote them when baton used it: the same bytes, field order too.
    #[test]
    fn the_parameters_are_acp_v1_as_the_published_types_wrote_them() {
        let cwd = PathBuf::from("/tmp/x");
        let s = |v: Value| v.to_string();
        assert_eq!(
            s(initialize_params()),
            format!(
                "{{\"protocolVersion\":1,\"clientCapabilities\":{{\"fs\":{{\"readTextFile\":false,\
                 \"writeTextFile\":false}},\"terminal\":false,\"auth\":{{\"terminal\":false}}}},\
                 \"clientInfo\":{{\"name\":\"baton\",\"version\":\"{}\"}}}}",
                env!("CARGO_PKG_VERSION")
            )
        );
        let load = LoadSession {
            mcp_servers: [],
            cwd: cwd.clone(),
            session_id: "s1".into(),
        };
        assert_eq!(
            s(to_value(load)),
            r#"{"mcpServers":[],"cwd":"/tmp/x","sessionId":"s1"}"#
        );
        let new = NewSession {
            cwd,
            mcp_servers: [],
        };
        assert_eq!(s(to_value(new)), r#"{"cwd":"/tmp/x","mcpServers":[]}"#);
        let mode = SetMode {
            session_id: "s1".into(),
            mode_id: "plan",
        };
        assert_eq!(s(to_value(mode)), r#"{"sessionId":"s1","modeId":"plan"}"#);
        let prompt = Prompt {
            session_id: "s1".into(),
            prompt: [Text {
                kind: "text",
                text: "hi \"x\"".into(),
            }],
        };
        assert_eq!(
            s(to_value(prompt)),
            r#"{"sessionId":"s1","prompt":[{"type":"text","text":"hi \"x\""}]}"#
        );
        let cancel = Cancel {
            session_id: "s1".into(),
        };
        assert_eq!(s(to_value(cancel)), r#"{"sessionId":"s1"}"#);
    }

    /// A working directory that is not UTF-8 cannot be written as JSON: the
    /// parameters are `null` (and the agent refuses them), as before.
    #[cfg(unix)]
    #[test]
    fn a_cwd_that_is_not_utf8_gives_null_parameters() {
        use std::os::unix::ffi::OsStrExt;
        let cwd = PathBuf::from(std::ffi::OsStr::from_bytes(b"/tmp/\xff"));
        let new = NewSession {
            cwd,
            mcp_servers: [],
        };
        assert_eq!(to_value(new), Value::Null);
    }
}

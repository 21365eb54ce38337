//! The stdio transport: one JSON-RPC message per line on stdin and stdout.
//!
//! baton's own rather than the SDK's, for three answers the SDK does not
//! give: a line that is not JSON gets a `-32700` parse error (the SDK drops
//! it in silence), a well-formed message of the wrong shape gets an error
//! with its id when it has one (the SDK's has none), and a notification or
//! response that arrives before the handshake is dropped (the SDK would end
//! the session on it). One writer task owns stdout, so the protocol's lines
//! are the only bytes there and are never interleaved.

use std::future::Future;
use std::io;

use rmcp::model::{ErrorData, GetMeta, ProtocolVersion, RequestId};
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::{StdioReader, Transport, stdio_pipes};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

/// A longer line is answered with an error and skipped (never buffered whole).
pub const MAX_LINE: usize = 16 << 20;

/// What one line of input is.
#[derive(Debug)]
pub enum Line {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Answer this error, then read on.
    Reply(Box<TxJsonRpcMessage<RoleServer>>),
    /// Nothing to answer (an empty line, a malformed notification or response).
    Skip,
}

pub struct Stdio {
    reader: BufReader<StdioReader>,
    line: Vec<u8>,
    discarding: bool,
    out: Option<mpsc::UnboundedSender<Vec<u8>>>,
    writer: Option<JoinHandle<()>>,
    /// Whether the session started (an `initialize`, or a request carrying
    /// its whole lifecycle in `_meta`).
    started: bool,
    gone: watch::Sender<bool>,
}

impl Stdio {
    /// The transport over this process's stdin and stdout, and a receiver
    /// that turns true when the client is gone (stdin closed).
    pub fn new() -> (Stdio, watch::Receiver<bool>) {
        let (reader, mut writer) = stdio_pipes();
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let task = tokio::spawn(async move {
            while let Some(b) = rx.recv().await {
                if writer.write_all(&b).await.is_err() || writer.flush().await.is_err() {
                    break;
                }
            }
        });
        let (gone, gone_rx) = watch::channel(false);
        (
            Stdio {
                reader: BufReader::with_capacity(64 << 10, reader),
                line: Vec::new(),
                discarding: false,
                out: Some(tx),
                writer: Some(task),
                started: false,
                gone,
            },
            gone_rx,
        )
    }

    fn queue(&self, m: &TxJsonRpcMessage<RoleServer>) -> io::Result<()> {
        let mut b = serde_json::to_vec(m).map_err(io::Error::other)?;
        b.push(b'\n');
        match &self.out {
            Some(out) => out.send(b).map_err(|_| io::ErrorKind::BrokenPipe.into()),
            None => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    /// The next whole line into `self.line`: `Some(false)` when it was too
    /// long (skipped), `None` at the end of input. Cancel-safe: a read cut
    /// short keeps its bytes here and the next call goes on with them.
    async fn read_line(&mut self) -> io::Result<Option<bool>> {
        loop {
            let buf = self.reader.fill_buf().await?;
            if buf.is_empty() {
                return Ok(None);
            }
            match buf.iter().position(|b| *b == b'\n') {
                Some(i) => {
                    if !self.discarding {
                        self.line.extend_from_slice(&buf[..i]);
                    }
                    self.reader.consume(i + 1);
                    let whole = !self.discarding;
                    self.discarding = false;
                    return Ok(Some(whole));
                }
                None => {
                    let n = buf.len();
                    if !self.discarding {
                        self.line.extend_from_slice(buf);
                        if self.line.len() > MAX_LINE {
                            self.discarding = true;
                            self.line = Vec::new();
                        }
                    }
                    self.reader.consume(n);
                }
            }
        }
    }
}

impl Transport<RoleServer> for Stdio {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let queued = self.queue(&item);
        async move { queued }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let whole = match self.read_line().await {
                Ok(Some(w)) => w,
                Ok(None) | Err(_) => {
                    let _ = self.gone.send(true);
                    return None;
                }
            };
            let line = std::mem::take(&mut self.line);
            let parsed = if whole {
                parse(&line)
            } else {
                Line::Reply(Box::new(TxJsonRpcMessage::<RoleServer>::error(
                    ErrorData::invalid_request(
                        format!("message longer than {MAX_LINE} bytes"),
                        None,
                    ),
                    None,
                )))
            };
            match parsed {
                Line::Message(m) => {
                    if let Some(m) = self.admit(*m) {
                        return Some(m);
                    }
                }
                Line::Reply(r) => {
                    let _ = self.queue(&r);
                }
                Line::Skip => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Everything queued is written before the writer ends.
        drop(self.out.take());
        if let Some(w) = self.writer.take() {
            let _ = w.await;
        }
        Ok(())
    }
}

impl Stdio {
    /// Before the session starts only requests pass: the SDK ends a session
    /// that opens with anything else, and a notification needs no answer.
    fn admit(&mut self, m: RxJsonRpcMessage<RoleServer>) -> Option<RxJsonRpcMessage<RoleServer>> {
        if self.started {
            return Some(m);
        }
        match &m {
            rmcp::model::JsonRpcMessage::Request(r) => {
                if starts_session(&r.request) {
                    self.started = true;
                }
                Some(m)
            }
            _ => None,
        }
    }
}

fn starts_session(r: &rmcp::model::ClientRequest) -> bool {
    use rmcp::model::ClientRequest as R;
    match r {
        R::InitializeRequest(_) => true,
        R::PingRequest(_) | R::DiscoverRequest(_) => false,
        other => {
            let meta = other.get_meta();
            meta.missing_required_keys(&ProtocolVersion::V_2026_07_28)
                .is_empty()
                && meta
                    .protocol_version()
                    .is_some_and(|v| ProtocolVersion::KNOWN_VERSIONS.contains(&v))
        }
    }
}

/// One line of input: a message, the error to answer, or nothing.
pub fn parse(line: &[u8]) -> Line {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::Skip;
    }
    let reply = |e: ErrorData, id: Option<RequestId>| {
        Line::Reply(Box::new(TxJsonRpcMessage::<RoleServer>::error(e, id)))
    };
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return reply(ErrorData::parse_error(format!("not JSON: {e}"), None), None),
    };
    let Some(obj) = value.as_object() else {
        return reply(
            ErrorData::invalid_request("a message is one JSON object (no batches)", None),
            None,
        );
    };
    let id = obj
        .get("id")
        .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok());
    let has_method = obj.get("method").is_some_and(Value::is_string);
    match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value.clone()) {
        Ok(m) => Line::Message(Box::new(m)),
        Err(e) => {
            if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
                return reply(
                    ErrorData::invalid_request("`jsonrpc` must be \"2.0\"", None),
                    id,
                );
            }
            match (has_method, obj.contains_key("id"), id.clone()) {
                (true, true, Some(id)) => reply(
                    ErrorData::invalid_params(format!("invalid params: {e}"), None),
                    Some(id),
                ),
                // A malformed notification: there is no one to answer.
                (true, false, _) => Line::Skip,
                // A response to a request this server never sends.
                (false, _, _) if obj.contains_key("result") || obj.contains_key("error") => {
                    Line::Skip
                }
                _ => reply(
                    ErrorData::invalid_request(format!("not a JSON-RPC message: {e}"), None),
                    id,
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(line: &str) -> Value {
        match parse(line.as_bytes()) {
            Line::Reply(r) => serde_json::to_value(&r).unwrap(),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn every_bad_line_gets_its_json_rpc_error() {
        let r = reply("{not json");
        assert_eq!(r["error"]["code"], -32700);
        assert!(r.get("id").is_none_or(Value::is_null));
        assert_eq!(reply("[1,2]")["error"]["code"], -32600);
        assert_eq!(reply("42")["error"]["code"], -32600);
        let r = reply(r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#);
        assert_eq!(
            (r["error"]["code"].clone(), r["id"].clone()),
            (json(-32600), json(7))
        );
        let r = reply(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":5}"#);
        assert_eq!(
            (r["error"]["code"].clone(), r["id"].clone()),
            (json(-32602), json("a"))
        );
        let r = reply(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#);
        assert_eq!(r["error"]["code"], -32600);
    }

    fn json(v: impl Into<Value>) -> Value {
        v.into()
    }

    #[test]
    fn good_lines_are_messages_and_silent_ones_skip() {
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Line::Message(_)
        ));
        // A byte-order mark and a CR line end are tolerated.
        assert!(matches!(
            parse(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r"),
            Line::Message(_)
        ));
        assert!(matches!(parse(b"   "), Line::Skip));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":7}"#),
            Line::Skip
        ));
        assert!(matches!(
            parse(br#"{"jsonrpc":"2.0","id":3,"result":5}"#),
            Line::Message(_) | Line::Skip
        ));
    }
}

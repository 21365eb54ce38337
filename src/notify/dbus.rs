//! Just enough D-Bus for `baton doctor` to ask the session bus whether a
//! notification server is there: authenticate (`EXTERNAL`, as our uid),
//! `Hello`, then `NameHasOwner("org.freedesktop.Notifications")` and, when
//! nothing owns it now, `ListActivatableNames` (the bus may start a server
//! on demand, which is as good for `notify-send`).
//!
//! Why our own and not a crate or `dbus-send`: three method calls with
//! string arguments are a page of code (the wire format: little-endian
//! header, fields as `(byte, variant)` structs aligned to 8), where a D-Bus
//! crate would add to every plugin binary and `dbus-send` is not always
//! installed where `notify-send` is. Notifications themselves still go
//! through `notify-send` (`desktop`).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// The name a freedesktop notification server owns on the session bus.
pub const NOTIFICATIONS: &str = "org.freedesktop.Notifications";

/// Whether a notification server is on the bus behind `stream`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// It runs now (something owns the name).
    Running,
    /// Nothing owns the name, but the bus starts a server when asked.
    Activatable,
    /// Neither: a notification would not be shown.
    Missing,
}

/// Ask the bus behind `stream` (connected, nothing sent yet), each read
/// waiting at most `wait`.
pub fn notification_server(stream: UnixStream, wait: Duration) -> Result<Server, String> {
    stream
        .set_read_timeout(Some(wait))
        .and_then(|()| stream.set_write_timeout(Some(wait)))
        .map_err(|e| e.to_string())?;
    let mut bus = Bus::new(stream)?;
    bus.call("Hello", None)?;
    let owned = bus.call("NameHasOwner", Some(NOTIFICATIONS))?;
    if read_bool(&owned)? {
        return Ok(Server::Running);
    }
    let names = bus.call("ListActivatableNames", None)?;
    Ok(
        if read_strings(&names)?.iter().any(|n| n == NOTIFICATIONS) {
            Server::Activatable
        } else {
            Server::Missing
        },
    )
}

struct Bus {
    reader: BufReader<UnixStream>,
    serial: u32,
}

impl Bus {
    /// Authenticate as our uid, the way every client does (`EXTERNAL`: the
    /// bus checks it against the socket's peer credentials).
    fn new(mut stream: UnixStream) -> Result<Bus, String> {
        let uid = crate::sys::proc::euid().to_string();
        let hex: String = uid.bytes().map(|b| format!("{b:02x}")).collect();
        let hello = format!("\0AUTH EXTERNAL {hex}\r\n");
        stream
            .write_all(hello.as_bytes())
            .map_err(|e| format!("writing to the bus: {e}"))?;
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        let n = reader
            .read_line(&mut line)
            .map_err(|e| format!("no answer to the authentication: {e}"))?;
        if n == 0 {
            return Err("it closed the connection".into());
        }
        if !line.starts_with("OK ") {
            return Err(format!("the bus refused authentication: {}", line.trim()));
        }
        reader
            .get_mut()
            .write_all(b"BEGIN\r\n")
            .map_err(|e| format!("writing to the bus: {e}"))?;
        Ok(Bus { reader, serial: 0 })
    }

    /// Call `member` of the bus itself with one string argument (or none);
    /// the reply's body. Signals that come first (`NameAcquired`) are
    /// skipped; an error reply is the error.
    fn call(&mut self, member: &str, arg: Option<&str>) -> Result<Vec<u8>, String> {
        self.serial += 1;
        let msg = method_call(self.serial, member, arg);
        self.reader
            .get_mut()
            .write_all(&msg)
            .map_err(|e| format!("writing to the bus: {e}"))?;
        loop {
            let m = read_message(&mut self.reader)?;
            if m.reply_serial != Some(self.serial) {
                continue;
            }
            return match m.kind {
                METHOD_RETURN => Ok(m.body),
                _ => Err(format!(
                    "{member}: {}",
                    m.error.unwrap_or_else(|| "an error".into())
                )),
            };
        }
    }
}

const METHOD_CALL: u8 = 1;
const METHOD_RETURN: u8 = 2;
/// The most a reply may hold (`ListActivatableNames` is a few KiB).
const MAX_MESSAGE: usize = 1 << 20;

/// Little-endian marshalling into one buffer; alignment is from its start,
/// which is the message's.
struct Out(Vec<u8>);

impl Out {
    fn pad(&mut self, to: usize) {
        while !self.0.len().is_multiple_of(to) {
            self.0.push(0);
        }
    }
    fn u32(&mut self, v: u32) {
        self.pad(4);
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A string or an object path (`s`, `o`).
    fn string(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
        self.0.push(0);
    }
    /// A signature (`g`): one length byte, no alignment.
    fn signature(&mut self, s: &str) {
        self.0.push(s.len() as u8);
        self.0.extend_from_slice(s.as_bytes());
        self.0.push(0);
    }
    /// One header field: a `(byte, variant)` struct, aligned to 8.
    fn field(&mut self, code: u8, sig: &str, value: &str) {
        self.pad(8);
        self.0.push(code);
        self.signature(sig);
        match sig {
            "g" => self.signature(value),
            _ => self.string(value),
        }
    }
}

fn method_call(serial: u32, member: &str, arg: Option<&str>) -> Vec<u8> {
    let mut body = Out(Vec::new());
    if let Some(a) = arg {
        body.string(a);
    }
    let mut m = Out(vec![b'l', METHOD_CALL, 0, 1]);
    m.u32(body.0.len() as u32);
    m.u32(serial);
    // The fields' length, patched once they are written.
    m.u32(0);
    let start = m.0.len();
    m.field(1, "o", "/org/freedesktop/DBus");
    m.field(6, "s", "org.freedesktop.DBus");
    m.field(2, "s", "org.freedesktop.DBus");
    m.field(3, "s", member);
    if arg.is_some() {
        m.field(8, "g", "s");
    }
    let len = (m.0.len() - start) as u32;
    m.0[12..16].copy_from_slice(&len.to_le_bytes());
    m.pad(8);
    m.0.extend_from_slice(&body.0);
    m.0
}

/// A message as far as `call` needs it.
struct Message {
    kind: u8,
    reply_serial: Option<u32>,
    error: Option<String>,
    body: Vec<u8>,
}

/// Reads from a message in either byte order.
struct In<'a> {
    b: &'a [u8],
    at: usize,
    big: bool,
}

impl In<'_> {
    fn align(&mut self, to: usize) {
        self.at = self.at.next_multiple_of(to);
    }
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.b.len());
        let end = end.ok_or("a message cut short")?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, String> {
        self.align(4);
        let b: [u8; 4] = self.take(4)?.try_into().map_err(|_| "a short number")?;
        Ok(if self.big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    }
    fn string(&mut self) -> Result<String, String> {
        let n = self.u32()? as usize;
        let s = String::from_utf8_lossy(self.take(n)?).into_owned();
        self.take(1)?;
        Ok(s)
    }
    fn signature(&mut self) -> Result<String, String> {
        let n = self.u8()? as usize;
        let s = String::from_utf8_lossy(self.take(n)?).into_owned();
        self.take(1)?;
        Ok(s)
    }
}

fn read_message(r: &mut impl Read) -> Result<Message, String> {
    let mut fixed = [0u8; 16];
    r.read_exact(&mut fixed)
        .map_err(|e| format!("no answer from the bus: {e}"))?;
    let big = match fixed[0] {
        b'l' => false,
        b'B' => true,
        _ => return Err("the bus did not answer in D-Bus".into()),
    };
    let num = |b: &[u8]| {
        let b: [u8; 4] = b.try_into().unwrap_or_default();
        (if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }) as usize
    };
    let (body_len, fields_len) = (num(&fixed[4..8]), num(&fixed[12..16]));
    let rest = (16 + fields_len).next_multiple_of(8) - 16 + body_len;
    if rest > MAX_MESSAGE {
        return Err("a message larger than the bus would send".into());
    }
    let mut all = fixed.to_vec();
    all.resize(16 + rest, 0);
    r.read_exact(&mut all[16..])
        .map_err(|e| format!("a message cut short: {e}"))?;
    let mut m = In {
        b: &all[..16 + fields_len],
        at: 16,
        big,
    };
    let (mut reply_serial, mut error) = (None, None);
    while m.at < m.b.len() {
        m.align(8);
        let code = m.u8()?;
        let sig = m.signature()?;
        match sig.as_str() {
            "u" => {
                let v = m.u32()?;
                if code == 5 {
                    reply_serial = Some(v);
                }
            }
            "s" | "o" => {
                let v = m.string()?;
                if code == 4 {
                    error = Some(v);
                }
            }
            "g" => {
                m.signature()?;
            }
            other => return Err(format!("a header field of type `{other}`")),
        }
    }
    let body_at = (16 + fields_len).next_multiple_of(8);
    Ok(Message {
        kind: fixed[1],
        reply_serial,
        error,
        body: all[body_at..].to_vec(),
    })
}

/// A body that is one boolean (`b`), in little-endian (the bus answers in
/// its own order; one byte of the four is enough either way).
fn read_bool(body: &[u8]) -> Result<bool, String> {
    let b = body.get(..4).ok_or("an empty answer")?;
    Ok(b.iter().any(|x| *x != 0))
}

/// A body that is one array of strings (`as`).
fn read_strings(body: &[u8]) -> Result<Vec<String>, String> {
    // The byte order does not reach here: try little-endian, then big.
    for big in [false, true] {
        let mut r = In {
            b: body,
            at: 0,
            big,
        };
        let Ok(len) = r.u32() else { continue };
        let end = 4 + len as usize;
        if end > body.len() {
            continue;
        }
        let mut out = Vec::new();
        while r.at < end {
            match r.string() {
                Ok(s) => out.push(s),
                Err(_) => break,
            }
        }
        if r.at == end {
            return Ok(out);
        }
    }
    Err("an answer that is not a list of names".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_marshalled_as_the_spec_lays_it_out() {
        let m = method_call(7, "NameHasOwner", Some("a.b"));
        assert_eq!(&m[..4], b"l\x01\x00\x01");
        assert_eq!(u32::from_le_bytes(m[4..8].try_into().unwrap()), 8, "body");
        assert_eq!(u32::from_le_bytes(m[8..12].try_into().unwrap()), 7);
        let fields = u32::from_le_bytes(m[12..16].try_into().unwrap()) as usize;
        let body_at = (16 + fields).next_multiple_of(8);
        assert_eq!(m.len(), body_at + 8);
        assert_eq!(&m[body_at..], b"\x03\0\0\0a.b\0");
        // The first field: PATH, signature `o`, the string aligned to 4.
        assert_eq!(&m[16..20], b"\x01\x01o\0");
        assert_eq!(&m[20..24], &21u32.to_le_bytes());
        assert_eq!(&m[24..46], b"/org/freedesktop/DBus\0");
        // Read back with our own reader: a reply with serial 7 and a body.
        let mut reply = Out(vec![b'l', METHOD_RETURN, 0, 1]);
        reply.u32(4);
        reply.u32(9);
        reply.u32(0);
        let start = reply.0.len();
        reply.pad(8);
        reply.0.push(5);
        reply.signature("u");
        reply.u32(7);
        let len = (reply.0.len() - start) as u32;
        reply.0[12..16].copy_from_slice(&len.to_le_bytes());
        reply.pad(8);
        reply.u32(1);
        let got = read_message(&mut &reply.0[..]).unwrap();
        assert_eq!((got.kind, got.reply_serial), (METHOD_RETURN, Some(7)));
        assert!(read_bool(&got.body).unwrap());
    }

    #[test]
    fn a_list_of_names_reads_in_either_byte_order() {
        let mut le = Out(Vec::new());
        le.u32(0);
        le.string("org.x");
        le.string(NOTIFICATIONS);
        let n = (le.0.len() - 4) as u32;
        le.0[..4].copy_from_slice(&n.to_le_bytes());
        assert_eq!(read_strings(&le.0).unwrap(), ["org.x", NOTIFICATIONS]);
        let be: Vec<u8> = [&n.to_be_bytes()[..], &5u32.to_be_bytes(), b"org.x\0"].concat();
        let n2 = (be.len() - 4) as u32;
        let mut be = be;
        be[..4].copy_from_slice(&n2.to_be_bytes());
        assert_eq!(read_strings(&be).unwrap(), ["org.x"]);
        assert!(read_strings(b"\xff\xff\xff\x7f").is_err());
    }

    #[test]
    fn a_cut_or_foreign_answer_is_an_error_not_a_panic() {
        assert!(read_message(&mut &b"HTTP/1.1 200 OK\r\n\r\n"[..]).is_err());
        let mut huge = vec![b'l', 2, 0, 1];
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        huge.extend_from_slice(&[0; 8]);
        assert!(read_message(&mut &huge[..]).is_err());
        assert!(read_bool(&[]).is_err());
    }
}

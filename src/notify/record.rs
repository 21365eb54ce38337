//! `notify.json` in a piece of work's record folder: every announcement
//! made for it and what each channel did, so a failed channel can be seen
//! after the fact (`baton show`, a look at the folder). Never the token,
//! never more than the cleaned event.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Delivery, Event, Trigger};

pub const FILE: &str = "notify.json";
/// The most announcements one record keeps (a stall re-announced, a
/// long-lived council): the oldest go first.
const KEEP: usize = 100;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Record {
    pub schema_version: u32,
    pub notifications: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub trigger: Trigger,
    pub status: String,
    pub at_ms: u64,
    pub deliveries: Vec<Delivery>,
}

/// Append one announcement to `<dir>/notify.json` (atomic, 0600). A folder
/// that is gone or a write that fails is ignored: a notification never
/// fails the work.
///
/// Only the process that owns the work writes its record, but in it a
/// stall watch's thread and the driver may both announce: the read, the
/// change and the write happen under one lock, so neither loses the
/// other's entry.
pub fn append(dir: &Path, event: &Event, deliveries: &[Delivery]) {
    static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    if !dir.is_dir() {
        return;
    }
    let _writing = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    let path = dir.join(FILE);
    let mut rec = read(dir).unwrap_or_default();
    rec.schema_version = crate::result::SCHEMA_VERSION;
    rec.notifications.push(Entry {
        trigger: event.trigger,
        status: event.status.clone(),
        at_ms: event.at_ms,
        deliveries: deliveries.to_vec(),
    });
    let over = rec.notifications.len().saturating_sub(KEEP);
    rec.notifications.drain(..over);
    if let Ok(mut bytes) = serde_json::to_vec_pretty(&rec) {
        bytes.push(b'\n');
        let _ = crate::fsutil::write_atomic(&path, &bytes);
    }
}

/// What `<dir>/notify.json` holds, if it is there and readable.
pub fn read(dir: &Path) -> Option<Record> {
    let text = std::fs::read_to_string(dir.join(FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::super::Work;
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn announcements_are_appended_privately() {
        let d = tempfile::tempdir().unwrap();
        let e = Event::new(Trigger::Ended, Work::Job, "failed");
        let ok = Delivery::ok("command");
        let bad = Delivery::failed("url", "HTTP 500");
        append(d.path(), &e, std::slice::from_ref(&ok));
        append(d.path(), &e, &[ok.clone(), bad.clone()]);
        let r = read(d.path()).unwrap();
        assert_eq!(r.notifications.len(), 2);
        assert_eq!(r.notifications[1].deliveries, vec![ok, bad]);
        assert_eq!(r.notifications[1].status, "failed");
        let mode = std::fs::metadata(d.path().join(FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // A folder that is gone: nothing written, no panic.
        append(&d.path().join("gone"), &e, &[]);
        assert!(!d.path().join("gone").exists());
    }

    #[test]
    fn announcements_from_several_threads_are_all_kept() {
        let d = tempfile::tempdir().unwrap();
        let e = Event::new(Trigger::Stalled, Work::Fanout, "running");
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..5 {
                        append(d.path(), &e, &[]);
                    }
                });
            }
        });
        assert_eq!(read(d.path()).unwrap().notifications.len(), 40);
    }
}

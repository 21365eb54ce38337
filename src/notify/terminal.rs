//! The terminal channel: a bell, OSC 9 (`ESC ] 9 ; text BEL`, iTerm2,
//! WezTerm, Windows Terminal, kitty…) and OSC 777 (`ESC ] 777 ; notify ;
//! title ; body BEL`, foot, rxvt, VTE) written to the terminal that started
//! the work, if it is still there. Terminals ignore the sequences they do
//! not know.
//!
//! The path came from a record, so it is checked before anything is
//! written: a character device owned by this user (a pts that was closed
//! and handed to someone else's login is refused), opened write-only,
//! without becoming our controlling terminal, without blocking.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};

use super::{Event, clean};

/// Ring `tty` with `title` and `body` (both are cleaned again here: no ESC
/// or BEL can end a sequence early).
pub fn deliver(origin: &super::Origin, title: &str, body: &str) -> Result<(), String> {
    let Some(tty) = origin.tty.as_deref() else {
        return Err("the work was started without a terminal".into());
    };
    let shown = tty.display();
    let meta = std::fs::metadata(tty).map_err(|e| format!("{shown} is gone ({e})"))?;
    if !meta.file_type().is_char_device() {
        return Err(format!("{shown} is not a terminal"));
    }
    if meta.uid() != crate::sys::proc::euid() {
        return Err(format!("{shown} belongs to another user now"));
    }
    let same = |m: &std::fs::Metadata| origin.tty_ctime_ns.is_none_or(|c| ctime_ns(m) == c);
    if !same(&meta) {
        return Err(format!(
            "{shown} is another terminal now (the one that started the work was closed)"
        ));
    }
    let mut f = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(tty)
        .map_err(|e| format!("opening {shown}: {e}"))?;
    // Same file, checked again on the descriptor (the path could have been
    // swapped since the first look).
    let opened = f.metadata().map_err(|e| format!("{shown}: {e}"))?;
    if !opened.file_type().is_char_device()
        || opened.uid() != crate::sys::proc::euid()
        || !same(&opened)
    {
        return Err(format!("{shown} changed while it was opened"));
    }
    f.write_all(&sequences(title, body))
        .map_err(|e| format!("writing to {shown}: {e}"))
}

/// A terminal device's ctime in ns: set when the pts is made (and by a
/// chmod such as `mesg n`), not by writing to it.
pub fn ctime_ns(m: &std::fs::Metadata) -> i64 {
    m.ctime()
        .saturating_mul(1_000_000_000)
        .saturating_add(m.ctime_nsec())
}

/// BEL, OSC 9 and OSC 777 for one notification.
pub fn sequences(title: &str, body: &str) -> Vec<u8> {
    // `;` separates OSC 777's fields: none inside them.
    let title = clean(title).replace(';', ",");
    let body = clean(body).replace(';', ",");
    let text = if body.is_empty() {
        title.clone()
    } else {
        format!("{title}: {body}")
    };
    format!("\u{7}\u{1b}]9;{text}\u{7}\u{1b}]777;notify;{title};{body}\u{7}").into_bytes()
}

/// The title and body every visual channel shows for `event`.
pub fn title_and_body(event: &Event) -> (String, String) {
    let what = match event.work {
        super::Work::Run => "run",
        super::Work::Job => "job",
        super::Work::Fanout => "fan-out",
        super::Work::Council => "council",
        super::Work::Bench => "bench",
    };
    let state = match event.trigger {
        super::Trigger::Ended => event.status.clone(),
        super::Trigger::NeedsApproval => "needs your approval".into(),
        super::Trigger::Stopped => match &event.failure_kind {
            Some(k) => format!("stopped ({k})"),
            None => "stopped".into(),
        },
        super::Trigger::Stalled => "stalled".into(),
        super::Trigger::Test => "test notification".into(),
    };
    let mut title = format!("baton {what} {state}");
    if let Some(id) = &event.id {
        title.push_str(&format!(" · {id}"));
    }
    let mut body = event.summary.clone();
    if let Some(repo) = event.repo.as_ref().and_then(|r| r.file_name()) {
        let repo = repo.to_string_lossy();
        body = if body.is_empty() {
            repo.into_owned()
        } else {
            format!("{repo}: {body}")
        };
    }
    (clean(&title), clean(&body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn the_sequences_carry_clean_text() {
        let s = String::from_utf8(sequences("t\u{7}x", "a;b\u{1b}]0;evil\u{7}c")).unwrap();
        assert_eq!(
            s,
            "\u{7}\u{1b}]9;tx: a,bc\u{7}\u{1b}]777;notify;tx;a,bc\u{7}"
        );
        // One BEL to ring, one to end each sequence; ESC only to start them.
        assert_eq!(s.matches('\u{7}').count(), 3);
        assert_eq!(s.matches('\u{1b}').count(), 2);
    }

    #[test]
    fn no_terminal_or_a_gone_one_is_an_error_not_a_panic() {
        assert!(
            deliver(&super::super::Origin::default(), "t", "b")
                .unwrap_err()
                .contains("without a terminal")
        );
        let at = |p: &Path| super::super::Origin {
            tty: Some(p.to_path_buf()),
            tty_ctime_ns: None,
        };
        let e = deliver(&at(Path::new("/dev/pts/999999")), "t", "b").unwrap_err();
        assert!(e.contains("is gone"), "{e}");
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("file");
        std::fs::write(&f, "").unwrap();
        assert!(
            deliver(&at(&f), "t", "b")
                .unwrap_err()
                .contains("not a terminal")
        );
        assert_eq!(std::fs::read(&f).unwrap(), b"");
    }

    #[test]
    fn a_terminal_made_after_the_work_started_is_not_rung() {
        use std::io::Read;
        use std::os::fd::AsFd;
        let (master, slave) = crate::sys::fd::openpty().unwrap();
        let tty = crate::sys::fd::ttyname(slave.as_fd()).unwrap();
        let meta = std::fs::metadata(&tty).unwrap();
        let mut origin = super::super::Origin {
            tty: Some(tty.clone()),
            tty_ctime_ns: Some(ctime_ns(&meta)),
        };
        // The terminal that started the work: rung.
        deliver(&origin, "t", "b").unwrap();
        let mut got = [0u8; 64];
        let n = std::fs::File::from(master.try_clone().unwrap())
            .read(&mut got)
            .unwrap();
        assert!(got[..n].starts_with(b"\x07\x1b]9;t: b"), "{:?}", &got[..n]);
        // Writing to it did not change who it is.
        assert_eq!(ctime_ns(&std::fs::metadata(&tty).unwrap()), ctime_ns(&meta));
        // The same path made by a later open (a closed pts's number is
        // handed on): refused, nothing written.
        origin.tty_ctime_ns = Some(ctime_ns(&meta) - 1);
        let e = deliver(&origin, "t", "b").unwrap_err();
        assert!(e.contains("another terminal now"), "{e}");
        drop(slave);
    }

    #[test]
    fn the_title_names_the_work_and_the_body_the_summary() {
        let e = Event::ended(
            super::super::Work::Council,
            "failed",
            Some("quota_exhausted"),
        )
        .id("c-1")
        .repo("/src/shop")
        .summary("out of quota")
        .finish();
        let (t, b) = title_and_body(&e);
        assert_eq!(t, "baton council stopped (quota_exhausted) · c-1");
        assert_eq!(b, "shop: out of quota");
    }
}

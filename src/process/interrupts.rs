//! Ctrl-C and friends: `Interrupts` turns SIGINT/SIGTERM/SIGHUP into messages
//! for every supervisor subscribed, so a signal stops peers instead of orphaning them.

use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use crate::error::{Error, Result};

/// Handle to the signals baton reacts to while peers run. Installed before
/// any child is spawned so a Ctrl-C can never leave an unsupervised peer.
///
/// Several supervisors may run at once (`baton ask --agents a,b`): each
/// `supervise` call subscribes for its own lifetime and every subscriber gets
/// every signal. A signal that arrives while nobody is subscribed is
/// remembered (`fired`), so a supervisor that starts afterwards stops its
/// peer at once instead of missing the Ctrl-C. Clones share the handlers,
/// which are removed when the last clone is dropped.
#[derive(Clone)]
pub struct Interrupts {
    hub: Arc<Hub>,
    _close: Arc<CloseOnDrop>,
}

pub(super) type Subscriber = Box<dyn Fn(i32) + Send>;

#[derive(Default)]
pub(super) struct Hub {
    pub(super) subscribers: Mutex<Vec<(u64, Subscriber)>>,
    pub(super) next_id: AtomicU64,
    /// The last signal received, 0 for none.
    pub(super) fired: AtomicI32,
}

pub(super) struct CloseOnDrop(pub(super) signal_hook::iterator::Handle);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

impl Interrupts {
    pub fn install() -> Result<Self> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
            .map_err(|e| Error::io("installing signal handlers", e))?;
        let handle = signals.handle();
        let hub = Arc::new(Hub::default());
        {
            let hub = hub.clone();
            thread::spawn(move || {
                for s in signals.forever() {
                    hub.fired.store(s, Ordering::SeqCst);
                    for (_, notify) in hub.subscribers.lock().unwrap().iter() {
                        notify(s);
                    }
                }
            });
        }
        Ok(Interrupts {
            hub,
            _close: Arc::new(CloseOnDrop(handle)),
        })
    }

    /// The last signal received since `install`, if any.
    pub fn fired(&self) -> Option<i32> {
        match self.hub.fired.load(Ordering::SeqCst) {
            0 => None,
            s => Some(s),
        }
    }

    /// Wait `d`, or less if a signal arrives (or arrived): the signal, if so.
    /// A run waiting to retry is stopped by Ctrl-C or `baton cancel` at once.
    pub fn sleep(&self, d: std::time::Duration) -> Option<i32> {
        let (tx, rx) = std::sync::mpsc::channel();
        let _sub = self.subscribe(Box::new(move |s| {
            let _ = tx.send(s);
        }));
        if let Some(s) = self.fired() {
            return Some(s);
        }
        rx.recv_timeout(d).ok()
    }

    /// Call `notify` for every signal until the returned guard is dropped.
    pub(super) fn subscribe(&self, notify: Subscriber) -> Subscription<'_> {
        let id = self.hub.next_id.fetch_add(1, Ordering::Relaxed);
        self.hub.subscribers.lock().unwrap().push((id, notify));
        Subscription { hub: &self.hub, id }
    }
}

pub(super) struct Subscription<'a> {
    pub(super) hub: &'a Hub,
    pub(super) id: u64,
}

impl Drop for Subscription<'_> {
    fn drop(&mut self) {
        self.hub
            .subscribers
            .lock()
            .unwrap()
            .retain(|(id, _)| *id != self.id);
    }
}

pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        libc::SIGKILL => "SIGKILL",
        _ => "a signal",
    }
}

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
///
/// A `child` is the same for one of several peers that baton may stop on
/// its own (a fan-out's candidate, stopped when another won): it gets
/// every signal its parent gets, and `fire` stops its peers alone.
#[derive(Clone)]
pub struct Interrupts {
    hub: Arc<Hub>,
    _close: Arc<CloseOnDrop>,
}

pub type Subscriber = Box<dyn Fn(i32) + Send>;

#[derive(Default)]
pub(super) struct Hub {
    pub(super) subscribers: Mutex<Vec<(u64, Subscriber)>>,
    pub(super) next_id: AtomicU64,
    /// The last signal received, 0 for none.
    pub(super) fired: AtomicI32,
}

/// What ends with the last clone: the signal handlers, or a child's place
/// among its parent's subscribers.
pub(super) enum CloseOnDrop {
    Signals(signal_hook::iterator::Handle),
    #[allow(dead_code)] // Held for its drop.
    Child(Forward),
}

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        if let CloseOnDrop::Signals(h) = self {
            h.close();
        }
    }
}

/// A subscription that owns its place (`Interrupts::forward`): removed
/// from the hub when dropped.
pub struct Forward {
    hub: Arc<Hub>,
    id: u64,
}

impl Drop for Forward {
    fn drop(&mut self) {
        self.hub
            .subscribers
            .lock()
            .unwrap()
            .retain(|(i, _)| *i != self.id);
    }
}

impl Hub {
    /// A signal arrived (or was fired): remember it, tell every subscriber.
    fn deliver(&self, s: i32) {
        self.fired.store(s, Ordering::SeqCst);
        for (_, notify) in self.subscribers.lock().unwrap().iter() {
            notify(s);
        }
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
                    hub.deliver(s);
                }
            });
        }
        Ok(Interrupts {
            hub,
            _close: Arc::new(CloseOnDrop::Signals(handle)),
        })
    }

    /// Interrupts of their own for one peer among several: every signal of
    /// `self` reaches them (one that already arrived too), and `fire` on
    /// them reaches no one else.
    pub fn child(&self) -> Interrupts {
        let hub = Arc::new(Hub::default());
        let fwd = {
            let hub = hub.clone();
            self.forward(Box::new(move |s| hub.deliver(s)))
        };
        Interrupts {
            hub,
            _close: Arc::new(CloseOnDrop::Child(fwd)),
        }
    }

    /// Call `notify` for every signal (and at once for one that already
    /// arrived) until the returned `Forward` is dropped: how something
    /// other than a peer's supervisor (a test command's) follows these
    /// interrupts. A signal that lands while this subscribes may be told twice.
    pub fn forward(&self, notify: Subscriber) -> Forward {
        let id = self.hub.next_id.fetch_add(1, Ordering::Relaxed);
        self.hub.subscribers.lock().unwrap().push((id, notify));
        let f = Forward {
            hub: self.hub.clone(),
            id,
        };
        if let Some(s) = self.fired() {
            for (i, n) in self.hub.subscribers.lock().unwrap().iter() {
                if *i == id {
                    n(s);
                }
            }
        }
        f
    }

    /// Act as if `sig` had arrived: every peer supervised with these
    /// interrupts (or a child of them) is stopped, and `fired` says so.
    pub fn fire(&self, sig: i32) {
        self.hub.deliver(sig);
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicI32;

    #[test]
    fn a_child_hears_its_parent_and_fires_alone() {
        let parent = Interrupts::install().unwrap();
        let a = parent.child();
        let b = parent.child();
        let heard = Arc::new(AtomicI32::new(0));
        let h = heard.clone();
        let _sub = b.subscribe(Box::new(move |s| h.store(s, Ordering::SeqCst)));
        a.fire(libc::SIGTERM);
        assert_eq!(a.fired(), Some(libc::SIGTERM));
        assert_eq!((parent.fired(), b.fired()), (None, None));
        assert_eq!(heard.load(Ordering::SeqCst), 0);
        parent.fire(libc::SIGINT);
        assert_eq!(b.fired(), Some(libc::SIGINT));
        assert_eq!(heard.load(Ordering::SeqCst), libc::SIGINT);
        // A child made after the signal knows of it at once.
        assert_eq!(parent.child().fired(), Some(libc::SIGINT));
        // A dropped child leaves its parent's subscribers.
        let before = parent.hub.subscribers.lock().unwrap().len();
        drop(a);
        assert_eq!(parent.hub.subscribers.lock().unwrap().len(), before - 1);
    }
}

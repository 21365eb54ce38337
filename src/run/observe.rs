//! A hook told when a peer starts writing its log and when it ends, so a
//! caller that lives above `run` (the command line) can show live progress.
//!
//! `baton ask` runs advisers on threads, with repair rounds, and `run
//! --worktree` runs deep inside `worktree`: one hook here reaches every
//! foreground peer without `run`, `ask` or `worktree` knowing about the view
//! (which sits above them; `tests/layers.rs`). Background job runners never set it.

use std::path::Path;
use std::sync::RwLock;

use crate::agent::Agent;

/// Called with the peer's stdout log when it starts; what it returns is
/// dropped when that peer has ended.
pub type Hook = Box<dyn Fn(&Path, Agent) -> Option<Box<dyn Send>> + Send + Sync>;

static HOOK: RwLock<Option<Hook>> = RwLock::new(None);

/// What the peers started from now on are part of (`council: critiquing`),
/// for a view that says more than which agent runs. A council sets it
/// before each stage's calls: they run side by side, all in one stage.
static STAGE: RwLock<Option<String>> = RwLock::new(None);

/// Name the stage the next peers belong to (`None`: no stage).
pub fn set_stage(stage: Option<String>) {
    if let Ok(mut s) = STAGE.write() {
        *s = stage;
    }
}

/// The stage named last, if any.
pub fn stage() -> Option<String> {
    STAGE.read().ok()?.clone()
}

/// Install (or with `None` remove) the hook for this process.
pub fn set(hook: Option<Hook>) {
    if let Ok(mut h) = HOOK.write() {
        *h = hook;
    }
}

/// A peer started writing `log`; keep the returned value until it ends.
pub(super) fn started(log: &Path, agent: Agent) -> Option<Box<dyn Send>> {
    HOOK.read().ok()?.as_ref()?(log, agent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Ends(Arc<AtomicUsize>);
    impl Drop for Ends {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn the_hook_sees_a_start_and_its_end() {
        let ended = Arc::new(AtomicUsize::new(0));
        let e = ended.clone();
        // Only this test's start is counted: a peer another test starts
        // meanwhile passes through the same process-wide hook.
        set(Some(Box::new(move |log, agent| {
            (log == Path::new("/l") && agent == Agent::Pi)
                .then(|| Box::new(Ends(e.clone())) as Box<dyn Send>)
        })));
        let guard = started(Path::new("/l"), Agent::Pi);
        assert!(guard.is_some());
        drop(guard);
        assert_eq!(ended.load(Ordering::SeqCst), 1);
        set(None);
        assert!(started(Path::new("/l"), Agent::Pi).is_none());
    }
}

//! The fleets of every repository the server shows, watched by one thread.
//!
//! Theory of operation: each shown repository keeps its own `fleet::Watcher`
//! (its jobs, councils and fan-outs, watched as for one repository), and one
//! thread drives them all from one `Waker` whose inotify instance listens to
//! every shown project's jobs directory, every running job's directory and
//! the folder of the projects. A wake updates every watcher (a stat of its
//! jobs directory, more only for running jobs); a repository whose fleet
//! changed gets a new `Arc<Fleet>`, the others keep theirs, so the event
//! stream finds what changed by pointer, as for one repository. The
//! listing (`repos`) is read again when the folder of the projects changes
//! and on a slow clock (a project's root deleted under us), and replaced
//! only when it reads differently.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::clock;
use super::fleet::{Fleet, TICK, Watcher};
use super::repos::{self, Listing, RepoInfo, Scope};
use super::wake::Waker;
use crate::job::store::Store;
use crate::view::group::group_dirs;
use crate::view::group_watch::Groups;

/// How often the listing is read again when nothing told us to.
const RELIST: Duration = Duration::from_secs(5);

/// One shown repository's fleet.
#[derive(Debug, Clone)]
pub struct Part {
    pub repo: Arc<str>,
    pub fleet: Arc<Fleet>,
}

/// What the server publishes: the listing and the shown repositories' fleets.
#[derive(Debug, Default)]
pub struct Fleets {
    /// `--all`: the page shows a repository column and its filter.
    pub all: bool,
    pub repos: Listing,
    pub parts: Vec<Part>,
}

/// `obj` (a JSON object) with `"repo": KEY` first.
pub fn tag(obj: &str, repo: &str) -> String {
    let key = serde_json::to_string(repo).unwrap_or_else(|_| "\"\"".into());
    match obj.strip_prefix('{') {
        Some(rest) if rest.trim_start().starts_with('}') => format!("{{\"repo\":{key}}}"),
        Some(rest) => format!("{{\"repo\":{key},{rest}"),
        None => obj.to_string(),
    }
}

impl Fleets {
    /// Everything, with its clocks at `now_ms` (the first SSE event).
    pub fn to_json(&self, now_ms: u64) -> String {
        let mut jobs = Vec::new();
        for p in &self.parts {
            for (_, j) in &p.fleet.jobs {
                jobs.push(tag(&clock::json(j, now_ms), &p.repo));
            }
        }
        format!(
            r#"{{"now_ms":{now_ms},"all":{},"repos":{},"jobs":[{}],"councils":{}}}"#,
            self.all,
            self.repos_json(),
            jobs.join(","),
            self.councils_json(now_ms)
        )
    }

    pub fn repos_json(&self) -> String {
        serde_json::to_string(&*self.repos).unwrap_or_else(|_| "[]".into())
    }

    /// Every council and fan-out of every shown repository, each tagged.
    pub fn councils_json(&self, now_ms: u64) -> String {
        let all: Vec<String> = self
            .parts
            .iter()
            .flat_map(|p| {
                p.fleet
                    .councils
                    .iter()
                    .map(|c| tag(&clock::json(c, now_ms), &p.repo))
            })
            .collect();
        format!("[{}]", all.join(","))
    }
}

struct Member {
    repo: Arc<str>,
    watcher: Watcher,
    fleet: Arc<Fleet>,
}

/// The watchers of every shown repository.
pub struct Many {
    scope: Scope,
    here: Option<PathBuf>,
    listing: Listing,
    members: Vec<Member>,
    /// The folder of the projects and its last change time.
    repos_dir: Option<PathBuf>,
    repos_sig: Option<(i64, i64)>,
    listed: Instant,
}

fn dir_sig(p: Option<&Path>) -> Option<(i64, i64)> {
    p.and_then(|p| p.metadata().ok())
        .map(|m| (m.mtime(), m.mtime_nsec()))
}

fn same(a: &[RepoInfo], b: &[RepoInfo]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            (&x.repo, &x.label, x.exists, x.shown) == (&y.repo, &y.label, y.exists, y.shown)
        })
}

impl Many {
    pub fn new(scope: Scope, here: Option<PathBuf>) -> crate::error::Result<Many> {
        let repos_dir = crate::state_dir::base().ok().map(|b| b.join("repos"));
        let mut m = Many {
            scope,
            here,
            listing: Arc::default(),
            members: Vec::new(),
            repos_sig: dir_sig(repos_dir.as_deref()),
            repos_dir,
            listed: Instant::now(),
        };
        m.install(repos::list(&m.scope, m.here.as_deref())?);
        Ok(m)
    }

    /// Take `listing`: keep the watchers of repositories still shown, start
    /// those of new ones, drop the rest.
    fn install(&mut self, listing: Vec<RepoInfo>) {
        let mut old = std::mem::take(&mut self.members);
        for r in listing.iter().filter(|r| r.shown) {
            let Some(store) = &r.store else { continue };
            let kept = old
                .iter()
                .position(|m| *m.repo == *r.repo)
                .map(|i| old.swap_remove(i));
            self.members.push(kept.unwrap_or_else(|| {
                let mut watcher = Watcher::with(
                    Store::in_dir(&store.dir),
                    Groups::in_folders(group_dirs(store)),
                );
                watcher.update();
                Member {
                    repo: r.repo.as_str().into(),
                    fleet: Arc::new(watcher.fleet()),
                    watcher,
                }
            }));
        }
        self.listing = Arc::new(listing);
    }

    /// Read the listing again if the folder of the projects changed or it
    /// is time; whether it reads differently.
    fn relist(&mut self) -> bool {
        let sig = dir_sig(self.repos_dir.as_deref());
        if sig == self.repos_sig && self.listed.elapsed() < RELIST {
            return false;
        }
        self.repos_sig = sig;
        self.listed = Instant::now();
        match repos::list(&self.scope, self.here.as_deref()) {
            Ok(l) if !same(&l, &self.listing) => {
                self.install(l);
                true
            }
            _ => false,
        }
    }

    /// One wake; whether anything changed.
    pub fn update(&mut self) -> bool {
        let mut changed = self.relist();
        for m in &mut self.members {
            if m.watcher.update() {
                m.fleet = Arc::new(m.watcher.fleet());
                changed = true;
            }
        }
        changed
    }

    pub fn fleets(&self) -> Fleets {
        Fleets {
            all: self.scope.is_all(),
            repos: self.listing.clone(),
            parts: self
                .members
                .iter()
                .map(|m| Part {
                    repo: m.repo.clone(),
                    fleet: m.fleet.clone(),
                })
                .collect(),
        }
    }

    /// What the waker listens to for changes of the set: every shown jobs
    /// directory and the folder of the projects.
    fn bases(&self) -> Vec<PathBuf> {
        self.members
            .iter()
            .map(|m| m.watcher.jobs_dir().to_path_buf())
            .chain(self.repos_dir.clone().filter(|_| self.scope.is_all()))
            .collect()
    }

    fn running_dirs(&self) -> Vec<PathBuf> {
        self.members
            .iter()
            .flat_map(|m| m.watcher.running_dirs())
            .collect()
    }
}

/// Run the watchers on their own thread until the receiver side is gone.
pub fn spawn(mut many: Many) -> watch::Receiver<Arc<Fleets>> {
    let (tx, rx) = watch::channel(Arc::new(many.fleets()));
    std::thread::Builder::new()
        .name("baton-serve-fleet".into())
        .spawn(move || {
            let mut bases = many.bases();
            let mut waker = Waker::over(bases.clone());
            loop {
                waker.wait(TICK, &many.running_dirs());
                if many.update() {
                    let now = many.bases();
                    if now != bases {
                        waker.set_bases(now.clone());
                        bases = now;
                    }
                    if tx.send(Arc::new(many.fleets())).is_err() {
                        return;
                    }
                }
                if tx.is_closed() {
                    return;
                }
            }
        })
        .expect("spawning a thread");
    rx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_is_tagged_with_its_repository() {
        assert_eq!(tag(r#"{"a":1}"#, "x-1"), r#"{"repo":"x-1","a":1}"#);
        assert_eq!(tag("{}", "x"), r#"{"repo":"x"}"#);
        // A key is JSON-escaped, never spliced raw.
        assert_eq!(tag(r#"{"a":1}"#, "q\"}"), r#"{"repo":"q\"}","a":1}"#);
    }

    #[test]
    fn the_listing_is_replaced_only_when_it_reads_differently() {
        let r = |exists| RepoInfo {
            repo: "a-1".into(),
            label: "/a".into(),
            exists,
            shown: exists,
            store: None,
            dir: PathBuf::new(),
        };
        assert!(same(&[r(true)], &[r(true)]));
        assert!(!same(&[r(true)], &[r(false)]), "a root deleted");
        assert!(!same(&[r(true)], &[]));
    }
}

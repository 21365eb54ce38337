//! The interactive `baton watch`: a terminal UI (ratatui, crossterm) over the
//! job store — the fleet by attention, a detail pane per job, cancel/continue.
//!
//! Theory of operation:
//! - One loop on one channel (`wake::Wake`): keys from an input thread,
//!   inotify wake-ups for the store directory and each running job's
//!   directory, a thread per running job asleep on its runner's lock, the
//!   results of actions run on threads, and SIGTERM/SIGHUP.
//! - Each wake refreshes the `tracker` (stats, and reads from remembered
//!   offsets only), hands the views to the pure `app`, and draws a frame;
//!   ratatui writes only the cells that changed. Wakes are coalesced (at most
//!   `MIN_GAP` apart); with nothing happening the loop wakes once a second,
//!   for the clocks (every `wake::POLL` where inotify is unavailable).
//! - The terminal is restored on `q`, Ctrl-C, a signal, an error, and a panic.

mod actions;
mod alerts;
mod app;
mod detail;
mod feed;
mod fleet;
mod group;
mod input;
mod repos;
mod screen;
mod theme;
mod tracker;
mod wake;

#[cfg(test)]
mod golden;

use std::collections::HashMap;
use std::io::{self, IsTerminal, Stdout, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event};
use ratatui::crossterm::{cursor, execute, terminal};

use self::actions::Outcome;
use self::alerts::OnChange;
use self::app::{Action, App, Pane, is_running};
use self::feed::Feed;
use self::theme::Theme;
use self::tracker::Tracker;
use self::wake::{Wake, Watcher};
use crate::error::{Error, Result};
use crate::job::store::{Store, now_ms};
use crate::view::group::GroupKind;
use crate::view::group_watch::Groups;
use crate::view::watch::Row;

/// Wakes closer together than this are handled as one refresh. A frame of
/// 50 streaming peers costs ~2 ms (`make bench-view`); 80 ms between frames
/// keeps the view under 5 % of a core while an event still reaches the
/// screen within 100 ms (the first event after a quiet spell at once).
const MIN_GAP: Duration = Duration::from_millis(80);

/// The store directory is listed again at least this often (a job created
/// while its directory was not watched yet).
const RELIST: Duration = Duration::from_secs(5);

/// What `baton watch` was asked for.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// `--on-change CMD`.
    pub on_change: Option<String>,
    /// `--all [--repo PATTERN]`: every repository's work.
    pub all: Option<crate::view::repos::Filter>,
}

type Term = Terminal<CrosstermBackend<Stdout>>;

/// `baton watch`: until `q`, Ctrl-C or a signal.
pub fn run(opts: Options) -> Result<i32> {
    if !io::stdout().is_terminal() || !io::stdin().is_terminal() {
        return Err(Error::usage_hint(
            "the interactive `baton watch` needs a terminal",
            "use `baton watch --once` (JSON) or `baton watch --once --text` for one snapshot",
        ));
    }
    let on_change = opts.on_change.as_deref().map(OnChange::parse).transpose()?;
    let (tx, rx) = mpsc::channel();
    let (sources, labels) = match &opts.all {
        Some(filter) => all_sources(filter, &tx)?,
        None => (vec![here(&tx)?], Vec::new()),
    };
    let watcher = Watcher::start(tx.clone());
    let mut term = enter().map_err(|e| Error::io("preparing the terminal", e))?;
    spawn_input(tx.clone());
    spawn_signals(tx.clone());
    let mut app = App::default();
    app.repos.labels = labels;
    let mut w = Loop {
        app,
        sources,
        watcher,
        feed: None,
        before: None,
        on_change,
        theme: Theme::from_env(),
        tx,
    };
    let r = w.run(&mut term, &rx);
    leave();
    r.map(|()| 0)
        .map_err(|e| Error::io("drawing the terminal view", e))
}

/// The cwd's repository, every job of it followed.
fn here(tx: &Sender<Wake>) -> Result<Source> {
    let store = Store::here()?;
    // Created now so that its directory can be watched for the first job.
    store.create()?;
    let root = store.root().map(std::path::Path::to_path_buf);
    let councils = Groups::in_folders(crate::view::group::watch_dirs(&store));
    Ok(Source {
        tracker: Tracker::new(store, tx.clone()),
        councils,
        root,
    })
}

/// `--all`: every repository the filter keeps, each followed bounded (its
/// open work and newest jobs: `view::repos`); their labels.
fn all_sources(
    filter: &crate::view::repos::Filter,
    tx: &Sender<Wake>,
) -> Result<(Vec<Source>, Vec<String>)> {
    let mut sources = Vec::new();
    let mut labels = Vec::new();
    for r in crate::state_dir::repos()?
        .into_iter()
        .filter(|r| filter.matches(r))
    {
        let store = Store::of_project(&r.dir, r.root.as_deref());
        let councils = Groups::in_folders(
            [GroupKind::Council, GroupKind::Fanout, GroupKind::Bench]
                .into_iter()
                .map(|k| (k, r.dir.join(k.folder())))
                .collect(),
        );
        let label = r.label();
        labels.push(if r.exists {
            label
        } else {
            format!("{label} (gone)")
        });
        sources.push(Source {
            // The newest `filter.recent` per repository, as `--once` lists:
            // 20 repositories × 50 would be 1,000 views copied per frame.
            tracker: Tracker::bounded(store, r.dir.clone(), filter.recent, tx.clone()),
            councils,
            root: r.root.clone(),
        });
    }
    Ok((sources, labels))
}

/// One repository's work followed: its jobs and its groups.
struct Source {
    tracker: Tracker,
    /// The project's councils and fan-outs, shown as groups of their runs.
    councils: Groups,
    /// The project (where a council is looked up to be cancelled).
    root: Option<std::path::PathBuf>,
}

struct Loop {
    app: App,
    /// The repository (`watch`) or repositories (`watch --all`) followed.
    sources: Vec<Source>,
    watcher: Watcher,
    feed: Option<Feed>,
    /// Statuses at the last look (`None` before the first).
    before: Option<HashMap<String, String>>,
    on_change: Option<OnChange>,
    theme: Theme,
    tx: Sender<Wake>,
}

impl Loop {
    fn run(&mut self, term: &mut Term, rx: &Receiver<Wake>) -> io::Result<()> {
        let mut listed = Instant::now();
        let mut relist = true;
        loop {
            let started = Instant::now();
            self.refresh(term, relist)?;
            if relist {
                listed = Instant::now();
            }
            let tick = if self.watcher.notifies() {
                Duration::from_secs(1)
            } else {
                wake::POLL
            };
            let first = match rx.recv_timeout(tick) {
                Ok(w) => Some(w),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            };
            let mut pending: Vec<Wake> = first.into_iter().collect();
            // Coalesce a burst of file events into one refresh (keys wait
            // no longer than MIN_GAP either).
            if pending.iter().all(|w| matches!(w, Wake::Files)) && !pending.is_empty() {
                let gap = MIN_GAP.saturating_sub(started.elapsed());
                std::thread::sleep(gap);
            }
            pending.extend(rx.try_iter());
            for w in pending {
                if self.handle(w, term)? {
                    return Ok(());
                }
            }
            relist = listed.elapsed() >= RELIST;
        }
    }

    /// Look at the stores, alert, and draw.
    fn refresh(&mut self, term: &mut Term, relist: bool) -> io::Result<()> {
        let now = now_ms();
        let mut jobs = Vec::new();
        let mut unlisted = 0;
        let mut failed = None;
        let spans = self.app.repos.shown();
        for (i, src) in self.sources.iter_mut().enumerate() {
            match src.tracker.refresh(now, relist) {
                Ok((js, n)) => {
                    if spans {
                        for v in &js {
                            self.app.repos.of.insert(v.job_id.clone(), i);
                        }
                    }
                    jobs.extend(js);
                    unlisted += n;
                }
                // One repository that cannot be read does not hide the others.
                Err(e) => failed = Some(actions::said(&e)),
            }
        }
        let alerts = alerts::changes(self.before.as_ref(), &jobs);
        for a in &alerts {
            term.backend_mut()
                .write_all(alerts::terminal_bytes(a).as_bytes())?;
            if let Some(c) = &self.on_change {
                c.fire(a);
            }
        }
        self.before = Some(alerts::statuses(&jobs));
        for (i, src) in self.sources.iter_mut().enumerate() {
            src.councils.refresh(now, relist);
            for c in src.councils.views() {
                if spans {
                    self.app.repos.of.insert(c.council_id.clone(), i);
                }
                jobs.extend(group::rows(&c, now));
            }
        }
        self.app.set_jobs(jobs, unlisted);
        if let Some(e) = failed {
            self.app.status.get_or_insert(e);
        }
        let mut dirs = Vec::new();
        for src in &self.sources {
            dirs.push(src.tracker.store_dir());
            dirs.extend(src.tracker.running_dirs());
            dirs.extend(src.councils.watch_dirs());
        }
        self.watcher.sync(&dirs);
        self.feed_transcript();
        let size = term.size()?;
        self.app.page = screen::transcript_rows(size.height);
        term.draw(|f| screen::draw(f, &self.app, &self.theme))?;
        Ok(())
    }

    /// The repository a row id belongs to (the only one without `--all`).
    fn source_of(&self, id: &str) -> Option<&Source> {
        if !self.app.repos.shown() {
            return self.sources.first();
        }
        let council = id.split('/').next().unwrap_or(id);
        let i = self.app.repos.of.get(council)?;
        self.sources.get(*i)
    }

    /// New lines of the open job's transcript.
    fn feed_transcript(&mut self) {
        let (Pane::Detail, Some(f)) = (self.app.pane, self.feed.as_mut()) else {
            return;
        };
        let ended = self
            .app
            .jobs
            .iter()
            .find(|v| v.job_id == f.id)
            .is_none_or(|v| !is_running(v.status));
        for l in f.lines(ended) {
            self.app.transcript.push(l);
        }
    }

    /// One wake; true to quit.
    fn handle(&mut self, w: Wake, term: &mut Term) -> io::Result<bool> {
        match w {
            Wake::Quit => return Ok(true),
            Wake::Files => {}
            Wake::RunnerGone(id) => {
                for src in &mut self.sources {
                    src.tracker.runner_gone(&id);
                }
            }
            Wake::Input(Event::Resize(..)) => term.autoresize()?,
            Wake::Input(Event::Key(k)) => {
                if let Some(k) = input::key(k)
                    && let Some(a) = self.app.key(k)
                {
                    return Ok(self.act(a));
                }
            }
            Wake::Input(_) => {}
            Wake::Done(o) => self.done(o),
        }
        Ok(false)
    }

    /// Start what the app asked for; true to quit.
    fn act(&mut self, a: Action) -> bool {
        let job = |id: &str| self.source_of(id).and_then(|s| s.tracker.job(id).cloned());
        match a {
            Action::Quit => return true,
            Action::Open(id) => {
                let run = self.app.selected_job().and_then(|v| match &v.row {
                    Row::Run { log, .. } => Some((log.clone(), v.agent.clone())),
                    _ => None,
                });
                self.feed = match run {
                    Some((log, agent)) => Some(Feed::run(id, log, &agent)),
                    None => job(&id).map(|j| {
                        let agent = self.app.selected_job().map_or("", |v| v.agent.as_str());
                        Feed::open(&j, agent)
                    }),
                };
            }
            Action::Cancel(id) if matches!(self.app.noun(&id), "council" | group::FANOUT) => {
                match self.source_of(&id).and_then(|s| s.root.clone()) {
                    Some(root) => actions::cancel_council(root, id, &self.tx),
                    None => {
                        self.app.status = Some(format!("council {id}: no project to find it in"))
                    }
                }
            }
            Action::Cancel(id) => match job(&id) {
                Some(j) => actions::cancel(j, &self.tx),
                None => self.app.status = Some(format!("job {id} is no longer in the store")),
            },
            Action::Continue { id, task } => match self.source_of(&id) {
                Some(s) => actions::continue_job(s.tracker.store().clone(), id, task, &self.tx),
                None => self.app.status = Some(format!("job {id} is no longer in the store")),
            },
            Action::Refilter => {}
            Action::Diff(id) => {
                let files = self
                    .app
                    .selected_job()
                    .map(|v| v.files_changed.clone())
                    .unwrap_or_default();
                match job(&id) {
                    Some(j) => actions::diff(j, files, &self.tx),
                    None => self.app.status = Some(format!("job {id} is no longer in the store")),
                }
            }
        }
        false
    }

    fn done(&mut self, o: Outcome) {
        match o {
            Outcome::Said(s) => self.app.status = Some(s),
            Outcome::Continued { from, id } => {
                self.app.status = Some(format!("job {from} continues as job {id}"));
                if self.app.pane == Pane::Fleet {
                    self.app.selected = Some(id);
                }
            }
            Outcome::Diff { id, lines } => {
                if self.app.pane == Pane::Detail && self.app.selected.as_deref() == Some(&id) {
                    self.app.diff = Some(lines);
                    self.app.diff_top = 0;
                    self.app.status = None;
                }
            }
        }
    }
}

/// Raw mode and the alternate screen; a panic restores the terminal before
/// its message is printed (also with `panic = "abort"`).
fn enter() -> io::Result<Term> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        leave();
        hook(info);
    }));
    terminal::enable_raw_mode()?;
    let mut out = io::stdout();
    if let Err(e) = execute!(out, terminal::EnterAlternateScreen, cursor::Hide) {
        leave();
        return Err(e);
    }
    Terminal::new(CrosstermBackend::new(out))
}

/// Give the terminal back as it was (safe to call twice).
fn leave() {
    let _ = terminal::disable_raw_mode();
    let _ = execute!(io::stdout(), terminal::LeaveAlternateScreen, cursor::Show);
}

fn spawn_input(tx: Sender<Wake>) {
    std::thread::spawn(move || {
        while let Ok(e) = event::read() {
            if tx.send(Wake::Input(e)).is_err() {
                break;
            }
        }
    });
}

/// SIGTERM and SIGHUP (a closed SSH session) end the view as `q` does.
fn spawn_signals(tx: Sender<Wake>) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    if let Ok(mut s) = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT]) {
        std::thread::spawn(move || {
            if s.forever().next().is_some() {
                let _ = tx.send(Wake::Quit);
            }
        });
    }
}

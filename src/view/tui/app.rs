//! The interactive `watch`'s state, pure: the fleet in attention order, the
//! selection, the detail pane's bounded transcript and its scroll, the prompts.
//!
//! Nothing here touches the terminal or the store: keys arrive as `Key`
//! (`input`), and what must happen outside comes back as an `Action`.

use std::collections::VecDeque;

use std::collections::HashMap;

use crate::view::watch::{JobView, Row};

/// Transcript lines kept for the detail pane (older ones are dropped).
pub const TRANSCRIPT_MAX: usize = 2000;

/// Ended jobs listed after the ones needing attention and the running ones.
pub const RECENT_ENDED: usize = 50;

/// An ended failure needs attention for this long after it ended.
const ATTENTION_MS: u64 = 24 * 3600 * 1000;

/// A key as the app understands it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    Enter,
    Esc,
    Backspace,
    Char(char),
    /// Ctrl-C: quit from anywhere, even a text field.
    Interrupt,
}

/// What the loop must do for the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    Quit,
    /// The detail pane opened on this job: load its transcript.
    Open(String),
    /// Confirmed: cancel this job (as `baton cancel`).
    Cancel(String),
    /// Continue this ended job with this turn (as `baton continue`).
    Continue {
        id: String,
        task: String,
    },
    /// Show this job's diff.
    Diff(String),
    /// The repository shown changed (`r`): look again.
    Refilter,
}

/// A question in the status bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prompt {
    /// "cancel job ID? y/n"
    Cancel(String),
    /// The next turn for an ended job, being typed.
    Continue { id: String, text: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Fleet,
    Detail,
}

/// The selected job's transcript: its last `TRANSCRIPT_MAX` lines.
#[derive(Debug, Default, Clone)]
pub struct Transcript {
    lines: VecDeque<String>,
    /// Lines dropped from the front: line `i` of the whole transcript is
    /// `lines[i - dropped]`, so a scrolled-back view stays put as lines arrive.
    dropped: usize,
}

impl Transcript {
    pub fn push(&mut self, line: String) {
        if self.lines.len() == TRANSCRIPT_MAX {
            self.lines.pop_front();
            self.dropped += 1;
        }
        self.lines.push_back(line);
    }

    /// Index one past the last line (of the whole transcript).
    pub fn end(&self) -> usize {
        self.dropped + self.lines.len()
    }

    pub fn start(&self) -> usize {
        self.dropped
    }

    /// Lines `from..to` of the whole transcript (clamped to what is kept).
    pub fn range(&self, from: usize, to: usize) -> impl Iterator<Item = &String> {
        let a = from.saturating_sub(self.dropped).min(self.lines.len());
        let b = to.saturating_sub(self.dropped).clamp(a, self.lines.len());
        self.lines.range(a..b)
    }
}

/// Where the transcript view is: at the tail (following), or held at a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scroll {
    Follow,
    /// The first visible line (index into the whole transcript).
    At(usize),
}

pub struct App {
    /// The jobs shown, in attention order.
    pub jobs: Vec<JobView>,
    /// Ended jobs not listed (beyond `RECENT_ENDED`).
    pub hidden: usize,
    pub selected: Option<String>,
    pub pane: Pane,
    pub prompt: Option<Prompt>,
    /// A message in the status bar (until the next key).
    pub status: Option<String>,
    pub transcript: Transcript,
    pub scroll: Scroll,
    /// The diff shown instead of the transcript (`d`).
    pub diff: Option<Vec<String>>,
    /// The first diff line shown.
    pub diff_top: usize,
    /// Rows of transcript on screen (set by the loop from the terminal size).
    pub page: usize,
    /// `watch --all`: each row's repository, and the one shown (`r`).
    pub repos: super::repos::Repos,
}

impl Default for App {
    fn default() -> Self {
        App {
            jobs: Vec::new(),
            hidden: 0,
            selected: None,
            pane: Pane::Fleet,
            prompt: None,
            status: None,
            transcript: Transcript::default(),
            scroll: Scroll::Follow,
            diff: None,
            diff_top: 0,
            page: 10,
            repos: Default::default(),
        }
    }
}

/// Whether a status is a job still at work.
pub fn is_running(status: &str) -> bool {
    matches!(status, "running" | "stalled")
}

/// Whether a job needs attention: stalled, a damaged record, or a failure,
/// loss or timeout that ended in the last day (`age`: since it ended).
pub fn needs_attention(status: &str, age: Option<u64>) -> bool {
    match status {
        "stalled" | "corrupt" => true,
        // A council that stopped for a person to look counts as a failure.
        "failed" | "lost" | "timeout" | "needs_human" | "awaiting_approval" | "approved" => {
            age.is_none_or(|a| a < ATTENTION_MS)
        }
        _ => false,
    }
}

/// A council in a stage that cancel cannot change.
fn council_stopped(status: &str) -> bool {
    matches!(
        status,
        "ready" | "done" | "failed" | "needs_human" | "cancelled"
    )
}

fn not_for_councils(what: &str, council: &str) -> String {
    format!(
        "{what} does not apply to a council: `baton council report {council}` shows what it did, \
         `baton council resume {council}` goes on with it"
    )
}

/// 0: needs attention, 1: running, 2: the rest.
fn rank(v: &JobView) -> u8 {
    if needs_attention(v.status, v.last_activity_age_ms) {
        0
    } else if v.status == "running" {
        1
    } else {
        2
    }
}

impl App {
    /// Take a new fleet (`unlisted`: older ended jobs left out already):
    /// sorted by attention, newest first within a group; a council's runs
    /// stay under its header, in their order. The selection follows its
    /// job (or the first row when it is gone).
    pub fn set_jobs(&mut self, mut jobs: Vec<JobView>, unlisted: usize) {
        jobs.retain(|v| self.repos.keeps(v));
        let mut runs: HashMap<String, Vec<JobView>> = HashMap::new();
        let mut tops = Vec::with_capacity(jobs.len());
        for v in jobs {
            match &v.row {
                Row::Run { council, .. } => runs.entry(council.clone()).or_default().push(v),
                _ => tops.push(v),
            }
        }
        tops.sort_by(|a, b| {
            rank(a)
                .cmp(&rank(b))
                .then(b.created_ms.cmp(&a.created_ms))
                .then(b.job_id.cmp(&a.job_id))
        });
        let keep = tops.iter().filter(|v| rank(v) < 2).count() + RECENT_ENDED;
        self.hidden = tops.len().saturating_sub(keep) + unlisted;
        tops.truncate(keep);
        let mut jobs = Vec::with_capacity(tops.len());
        for v in tops {
            let group = match v.row {
                Row::Council => runs.remove(&v.job_id),
                _ => None,
            };
            jobs.push(v);
            jobs.extend(group.unwrap_or_default());
        }
        self.jobs = jobs;
        let present = |id: &String| self.jobs.iter().any(|v| &v.job_id == id);
        if !self.selected.as_ref().is_some_and(present) {
            // The detail pane keeps showing its job even if it left the list.
            if self.pane == Pane::Fleet || self.selected.is_none() {
                self.selected = self.jobs.first().map(|v| v.job_id.clone());
            }
        }
    }

    pub fn selected_index(&self) -> Option<usize> {
        let id = self.selected.as_ref()?;
        self.jobs.iter().position(|v| &v.job_id == id)
    }

    pub fn selected_job(&self) -> Option<&JobView> {
        self.selected_index().map(|i| &self.jobs[i])
    }

    fn move_selection(&mut self, delta: isize) {
        if self.jobs.is_empty() {
            return;
        }
        let i = self.selected_index().unwrap_or(0) as isize;
        let j = (i + delta).clamp(0, self.jobs.len() as isize - 1) as usize;
        self.selected = Some(self.jobs[j].job_id.clone());
    }

    /// Lines of the transcript to show in `rows` rows: `(first, end)`.
    pub fn visible(&self, rows: usize) -> (usize, usize) {
        let t = &self.transcript;
        let last_top = t.end().saturating_sub(rows).max(t.start());
        let top = match self.scroll {
            Scroll::Follow => last_top,
            Scroll::At(top) => top.clamp(t.start(), last_top),
        };
        (top, (top + rows).min(t.end()))
    }

    /// Scroll the transcript by `delta` lines; up stops following, reaching
    /// the bottom again resumes it.
    fn scroll_by(&mut self, delta: isize) {
        let (top, _) = self.visible(self.page);
        let last_top = self
            .transcript
            .end()
            .saturating_sub(self.page)
            .max(self.transcript.start());
        let new = (top as isize + delta).max(self.transcript.start() as isize) as usize;
        self.scroll = if delta > 0 && new >= last_top {
            Scroll::Follow
        } else {
            Scroll::At(new.min(last_top))
        };
    }

    /// Open the detail pane on the selected job (or council run).
    fn open(&mut self) -> Option<Action> {
        let id = self.selected.clone()?;
        if self.selected_job().is_some_and(|v| v.row == Row::Council) {
            self.status = Some(format!(
                "{} {id} is a group: select one of its runs (↓) and press Enter for its transcript",
                self.noun(&id)
            ));
            return None;
        }
        self.pane = Pane::Detail;
        self.transcript = Transcript::default();
        self.scroll = Scroll::Follow;
        self.diff = None;
        self.diff_top = 0;
        Some(Action::Open(id))
    }

    /// Handle one key; what the loop must do, if anything.
    pub fn key(&mut self, k: Key) -> Option<Action> {
        if k == Key::Interrupt {
            return Some(Action::Quit);
        }
        if let Some(p) = self.prompt.take() {
            return self.prompt_key(p, k);
        }
        self.status = None;
        let page = self.page.max(1) as isize;
        if self.pane == Pane::Detail
            && let Some(d) = &self.diff
        {
            let last = d.len().saturating_sub(self.page) as isize;
            let to = |top: isize| Some(top.clamp(0, last.max(0)) as usize);
            let top = self.diff_top as isize;
            let moved = match k {
                Key::Up | Key::Char('k') => to(top - 1),
                Key::Down | Key::Char('j') => to(top + 1),
                Key::PageUp => to(top - page),
                Key::PageDown => to(top + page),
                Key::Home => to(0),
                Key::End => to(last),
                _ => None,
            };
            if let Some(t) = moved {
                self.diff_top = t;
                return None;
            }
        }
        match (self.pane, k) {
            (_, Key::Char('q')) => return Some(Action::Quit),
            (_, Key::Char('c')) => self.ask_cancel(),
            (_, Key::Char('n' | 'i')) => self.ask_continue(),
            (Pane::Fleet, Key::Up | Key::Char('k')) => self.move_selection(-1),
            (Pane::Fleet, Key::Down | Key::Char('j')) => self.move_selection(1),
            (Pane::Fleet, Key::PageUp) => self.move_selection(-page),
            (Pane::Fleet, Key::PageDown) => self.move_selection(page),
            (Pane::Fleet, Key::Home) => self.move_selection(isize::MIN / 2),
            (Pane::Fleet, Key::End) => self.move_selection(isize::MAX / 2),
            (Pane::Fleet, Key::Enter) => return self.open(),
            (Pane::Fleet, Key::Char('r')) if self.repos.shown() => {
                self.status = Some(self.repos.cycle());
                return Some(Action::Refilter);
            }
            (Pane::Detail, Key::Esc | Key::Backspace | Key::Char('h')) => {
                self.pane = Pane::Fleet;
                self.diff = None;
            }
            (Pane::Detail, Key::Up | Key::Char('k')) => self.scroll_by(-1),
            (Pane::Detail, Key::Down | Key::Char('j')) => self.scroll_by(1),
            (Pane::Detail, Key::PageUp) => self.scroll_by(-page),
            (Pane::Detail, Key::PageDown) => self.scroll_by(page),
            (Pane::Detail, Key::Home) => self.scroll = Scroll::At(self.transcript.start()),
            (Pane::Detail, Key::End) => self.scroll = Scroll::Follow,
            // `d` closes a diff that is open, or asks for one.
            (Pane::Detail, Key::Char('d')) if self.diff.take().is_none() => {
                let id = self.selected.clone()?;
                if let Some(c) = self.council_of_selected() {
                    self.status = Some(not_for_councils("diff", &c));
                    return None;
                }
                self.status = Some(format!("reading the diff of job {id}…"));
                return Some(Action::Diff(id));
            }
            _ => {}
        }
        None
    }

    /// What the row `id` is, for messages: `job`, `council` or `fan-out`.
    pub fn noun(&self, id: &str) -> &'static str {
        match self.jobs.iter().find(|v| v.job_id == id) {
            Some(v) if super::group::is_fanout(v) => super::group::FANOUT,
            Some(v) if v.row == Row::Council => "council",
            _ => "job",
        }
    }

    /// The council the selected row belongs to, if it is a council's row.
    fn council_of_selected(&self) -> Option<String> {
        match &self.selected_job()?.row {
            Row::Job => None,
            Row::Council => self.selected.clone(),
            Row::Run { council, .. } => Some(council.clone()),
        }
    }

    fn ask_cancel(&mut self) {
        let Some(v) = self.selected_job() else {
            return;
        };
        if let Row::Run { council, .. } = &v.row {
            self.status = Some(format!(
                "a run stops with its council: select council {council} and press c"
            ));
            return;
        }
        if v.row == Row::Council {
            if council_stopped(v.status) {
                self.status = Some(format!(
                    "{} {} already stopped ({}); nothing to cancel",
                    self.noun(&v.job_id),
                    v.job_id,
                    v.status
                ));
            } else {
                self.prompt = Some(Prompt::Cancel(v.job_id.clone()));
            }
            return;
        }
        if is_running(v.status) {
            self.prompt = Some(Prompt::Cancel(v.job_id.clone()));
        } else {
            self.status = Some(format!(
                "job {} already ended ({}); nothing to cancel",
                v.job_id, v.status
            ));
        }
    }

    fn ask_continue(&mut self) {
        if let Some(c) = self.council_of_selected() {
            self.status = Some(not_for_councils("continue", &c));
            return;
        }
        let Some(v) = self.selected_job() else {
            return;
        };
        if is_running(v.status) {
            self.status = Some(format!(
                "job {} is still running: continue it once it ends (c cancels it)",
                v.job_id
            ));
        } else {
            self.prompt = Some(Prompt::Continue {
                id: v.job_id.clone(),
                text: String::new(),
            });
        }
    }

    fn prompt_key(&mut self, p: Prompt, k: Key) -> Option<Action> {
        match p {
            Prompt::Cancel(id) => match k {
                Key::Char('y' | 'Y') => {
                    self.status = Some(format!("cancelling {} {id}…", self.noun(&id)));
                    return Some(Action::Cancel(id));
                }
                Key::Char('n' | 'N') | Key::Esc => {
                    self.status = Some(format!("{} {id} not cancelled", self.noun(&id)));
                }
                // Anything else leaves the question open.
                _ => self.prompt = Some(Prompt::Cancel(id)),
            },
            Prompt::Continue { id, mut text } => match k {
                Key::Esc => self.status = Some(format!("job {id} not continued")),
                Key::Enter if text.trim().is_empty() => {
                    self.status = Some("type the next turn first (Esc to leave)".into());
                    self.prompt = Some(Prompt::Continue { id, text });
                }
                Key::Enter => {
                    self.status = Some(format!("continuing job {id}…"));
                    return Some(Action::Continue {
                        id,
                        task: text.trim().to_string(),
                    });
                }
                Key::Backspace => {
                    text.pop();
                    self.prompt = Some(Prompt::Continue { id, text });
                }
                Key::Char(c) => {
                    text.push(c);
                    self.prompt = Some(Prompt::Continue { id, text });
                }
                _ => self.prompt = Some(Prompt::Continue { id, text }),
            },
        }
        None
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::result::Usage;

    pub(crate) fn job(id: &str, status: &'static str, created: u64) -> JobView {
        JobView {
            job_id: id.into(),
            status,
            agent: "codex".into(),
            model: None,
            task: "t".into(),
            created_ms: created,
            elapsed_ms: 1000,
            doing: None,
            files_changed: Vec::new(),
            usage: Usage::default(),
            last_activity_age_ms: Some(1000),
            row: crate::view::watch::Row::Job,
        }
    }

    fn ids(app: &App) -> Vec<&str> {
        app.jobs.iter().map(|v| v.job_id.as_str()).collect()
    }

    #[test]
    fn attention_first_then_running_then_recent_ended() {
        let mut app = App::default();
        let mut old_fail = job("oldfail", "failed", 1);
        old_fail.last_activity_age_ms = Some(ATTENTION_MS + 1);
        app.set_jobs(
            vec![
                job("ok", "success", 9),
                job("run1", "running", 5),
                job("fail", "failed", 3),
                old_fail,
                job("run2", "running", 8),
                job("stall", "stalled", 2),
                job("lost", "lost", 4),
            ],
            0,
        );
        assert_eq!(
            ids(&app),
            ["lost", "fail", "stall", "run2", "run1", "ok", "oldfail"]
        );
        assert_eq!(app.selected.as_deref(), Some("lost"));
    }

    #[test]
    fn old_ended_jobs_are_cut_but_running_never() {
        let mut app = App::default();
        let mut v: Vec<JobView> = (0..RECENT_ENDED as u64 + 7)
            .map(|i| job(&format!("e{i}"), "success", i))
            .collect();
        v.push(job("r", "running", 0));
        app.set_jobs(v, 0);
        assert_eq!(app.jobs.len(), RECENT_ENDED + 1);
        assert_eq!(app.hidden, 7);
        assert_eq!(app.jobs[0].job_id, "r");
    }

    #[test]
    fn selection_follows_its_job_across_resorts() {
        let mut app = App::default();
        app.set_jobs(vec![job("a", "running", 2), job("b", "running", 1)], 0);
        app.key(Key::Down);
        assert_eq!(app.selected.as_deref(), Some("b"));
        // b fails: it moves to the top, the selection goes with it.
        app.set_jobs(vec![job("a", "running", 2), job("b", "failed", 1)], 0);
        assert_eq!(ids(&app), ["b", "a"]);
        assert_eq!(app.selected.as_deref(), Some("b"));
        app.key(Key::Down);
        app.key(Key::Down);
        assert_eq!(app.selected.as_deref(), Some("a"), "clamped at the end");
    }

    fn with_lines(n: usize) -> App {
        let mut app = App::default();
        app.set_jobs(vec![job("a", "running", 1)], 0);
        assert_eq!(app.key(Key::Enter), Some(Action::Open("a".into())));
        app.page = 10;
        for i in 0..n {
            app.transcript.push(format!("line {i}"));
        }
        app
    }

    #[test]
    fn follows_the_tail_until_scrolled_back_and_end_resumes() {
        let mut app = with_lines(30);
        assert_eq!(app.visible(10), (20, 30));
        app.key(Key::PageUp);
        assert_eq!(app.scroll, Scroll::At(10));
        app.transcript.push("new".into());
        assert_eq!(app.visible(10), (10, 20), "held while scrolled back");
        app.key(Key::Up);
        assert_eq!(app.visible(10), (9, 19));
        app.key(Key::End);
        assert_eq!(app.visible(10), (21, 31), "End follows again");
        app.key(Key::Up);
        app.key(Key::Down);
        assert_eq!(app.scroll, Scroll::Follow, "back at the bottom follows");
        app.key(Key::Home);
        assert_eq!(app.visible(10), (0, 10));
    }

    #[test]
    fn the_transcript_is_bounded_and_a_held_view_survives_drops() {
        let mut app = with_lines(TRANSCRIPT_MAX + 500);
        assert_eq!(app.transcript.start(), 500);
        assert_eq!(app.transcript.range(0, 501).count(), 1);
        app.key(Key::Home);
        assert_eq!(app.visible(10), (500, 510));
        for _ in 0..5 {
            app.transcript.push("x".into());
        }
        assert_eq!(app.visible(10), (505, 515), "clamped to what is kept");
    }

    #[test]
    fn cancel_asks_first_and_only_a_yes_cancels() {
        let mut app = App::default();
        app.set_jobs(vec![job("a", "running", 1), job("b", "success", 0)], 0);
        assert_eq!(app.key(Key::Char('c')), None);
        assert_eq!(app.prompt, Some(Prompt::Cancel("a".into())));
        assert_eq!(app.key(Key::Char('x')), None, "not an answer");
        assert_eq!(app.key(Key::Char('n')), None);
        assert_eq!(app.prompt, None);
        assert!(app.status.as_ref().unwrap().contains("not cancelled"));
        app.key(Key::Char('c'));
        assert_eq!(app.key(Key::Char('y')), Some(Action::Cancel("a".into())));
        app.key(Key::Down);
        assert_eq!(app.key(Key::Char('c')), None);
        assert_eq!(app.prompt, None);
        assert!(app.status.as_ref().unwrap().contains("already ended"));
    }

    #[test]
    fn continue_only_an_ended_job_with_some_text() {
        let mut app = App::default();
        app.set_jobs(vec![job("a", "stalled", 1), job("b", "success", 0)], 0);
        app.key(Key::Char('n'));
        assert_eq!(app.prompt, None);
        assert!(app.status.as_ref().unwrap().contains("still running"));
        app.key(Key::Down);
        app.key(Key::Char('i'));
        assert_eq!(app.key(Key::Enter), None, "empty text is not sent");
        for c in "fix itq".chars() {
            app.key(Key::Char(c));
        }
        app.key(Key::Backspace);
        assert_eq!(
            app.key(Key::Enter),
            Some(Action::Continue {
                id: "b".into(),
                task: "fix it".into()
            })
        );
        app.key(Key::Char('n'));
        assert_eq!(app.key(Key::Esc), None);
        assert_eq!(app.prompt, None);
        assert_eq!(app.key(Key::Interrupt), Some(Action::Quit));
    }

    #[test]
    fn detail_pane_diff_toggles_and_esc_returns() {
        let mut app = with_lines(3);
        assert_eq!(app.key(Key::Char('d')), Some(Action::Diff("a".into())));
        app.diff = Some((0..25).map(|i| format!("+{i}")).collect());
        app.key(Key::PageDown);
        app.key(Key::PageDown);
        assert_eq!(app.diff_top, 15, "the diff scrolls, to its last page");
        assert_eq!(app.scroll, Scroll::Follow, "not the transcript");
        assert_eq!(app.key(Key::Char('d')), None);
        assert_eq!(app.diff, None);
        app.key(Key::Esc);
        assert_eq!(app.pane, Pane::Fleet);
        assert_eq!(app.key(Key::Char('q')), Some(Action::Quit));
    }

    fn with_council() -> App {
        let mut app = App::default();
        let mut rows = vec![job("old", "success", 1), job("r", "running", 2)];
        rows.extend(super::super::group::rows(
            &super::super::group::tests::council(),
            100_000,
        ));
        app.set_jobs(rows, 0);
        app
    }

    #[test]
    fn a_council_group_stays_together_under_its_header() {
        let app = with_council();
        // Both running: the council (created 10) is newer than job r (2).
        assert_eq!(
            ids(&app),
            [
                "1m8q4fhzzzzzz",
                "1m8q4fhzzzzzz/proposing-m0",
                "1m8q4fhzzzzzz/proposing-m1",
                "r",
                "old"
            ]
        );
        assert_eq!(app.noun("1m8q4fhzzzzzz"), "council");
        assert_eq!(app.noun("r"), "job");
    }

    #[test]
    fn council_rows_cancel_the_council_and_refuse_what_does_not_apply() {
        let mut app = with_council();
        // The header: Enter does not open it, c asks to cancel the council.
        assert_eq!(app.key(Key::Enter), None);
        assert!(app.status.as_ref().unwrap().contains("is a group"));
        app.key(Key::Char('c'));
        assert_eq!(app.prompt, Some(Prompt::Cancel("1m8q4fhzzzzzz".into())));
        assert_eq!(
            app.key(Key::Char('y')),
            Some(Action::Cancel("1m8q4fhzzzzzz".into()))
        );
        assert!(app.status.as_ref().unwrap().contains("cancelling council"));
        app.key(Key::Char('n'));
        assert_eq!(app.prompt, None);
        assert!(
            app.status
                .as_ref()
                .unwrap()
                .contains("does not apply to a council")
        );
        // A run: c points at its council, Enter opens its transcript.
        app.key(Key::Down);
        app.key(Key::Char('c'));
        assert_eq!(app.prompt, None);
        assert!(
            app.status
                .as_ref()
                .unwrap()
                .contains("stops with its council")
        );
        assert_eq!(
            app.key(Key::Enter),
            Some(Action::Open("1m8q4fhzzzzzz/proposing-m0".into()))
        );
        assert_eq!(app.key(Key::Char('d')), None, "no diff for a council run");
        assert!(app.status.as_ref().unwrap().contains("diff does not apply"));
    }
}

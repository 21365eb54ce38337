//! A group of peer runs — a council, or a fan-out (`view::fanout`) — seen
//! as its runs: its record (as a `Head`) and run records (`group::runs`)
//! turned into `GroupView`s for every face.
//!
//! The group's status comes from its record and its runner's lock, never
//! guessed: `running` while the runner lives and the stage is not one it
//! stopped at (terminal, or awaiting approval), `lost` when the runner died
//! mid-stage, else the stage. A run not ended whose group is no longer
//! running is `lost`; a running run's "now doing" line and usage come from
//! its log through a `Tail`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::Serialize;

use super::tail::{Live, Tail};
use super::watch::stalled;
use crate::agent::Agent;
use crate::council::store::{Record, read_json};
use crate::group::runs::{self, RunRecord};
use crate::result::Usage;

/// Most of a running run's log read the first time it is seen (its end).
const FIRST_READ: u64 = 8 << 20;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberView {
    pub agent: String,
    pub model: Option<String>,
    pub vendor: String,
    /// `member`, `chair` or `writer` (a member may also be the writer).
    pub role: &'static str,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunView {
    /// `<stage>-<who>[-<round>]`: the run's name under its council.
    pub name: String,
    pub stage: String,
    pub who: String,
    /// The review or repair round, for the stages that have rounds.
    pub round: Option<u32>,
    pub role: String,
    pub agent: String,
    pub model: Option<String>,
    /// `running`, `stalled`, `ok`, `abstained`, `timeout`, `cancelled`,
    /// `error`, or `lost` (not ended, and its council's runner is gone).
    pub status: &'static str,
    pub elapsed_ms: u64,
    /// Running: the latest activity from its log.
    pub doing: Option<String>,
    pub usage: Usage,
    /// Since the peer last printed anything (running) or since it ended.
    pub last_activity_age_ms: Option<u64>,
    /// The peer's stdout log (for transcripts; never sent to a client).
    #[serde(skip)]
    pub log: Option<PathBuf>,
}

/// What the views need of a group's record, whichever feature wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct Head {
    pub id: String,
    /// `discuss` or `plan` (a council), `fanout`.
    pub kind: String,
    pub stage: &'static str,
    /// The stage is one the group stopped at (terminal, awaiting approval).
    pub stopped: bool,
    pub task: String,
    pub created_ms: u64,
    pub updated_ms: u64,
    /// The runs' idle timeout (half of it without output is `stalled`).
    pub idle_ms: u64,
    /// The process driving the group.
    pub pid: Option<u32>,
    pub members: Vec<MemberView>,
    /// A bench run's trials so far (`view::bench`); none for other groups.
    pub progress: Option<BenchProgress>,
}

/// Where a bench run stands: trials recorded against those planned.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchProgress {
    /// Trials recorded (ended).
    pub done: u64,
    /// Trials of the run's share; null when its task set is gone.
    pub total: Option<u64>,
    /// Solved among those recorded.
    pub solved: u64,
}

/// A council's record as the views read it.
pub fn head(rec: &Record) -> Head {
    Head {
        id: rec.council_id.clone(),
        kind: rec.kind.clone(),
        stage: rec.stage.as_str(),
        stopped: rec.stage.is_terminal() || rec.stage.is_waiting(),
        task: rec.task.clone(),
        created_ms: rec.created_ms,
        updated_ms: rec.updated_ms,
        idle_ms: crate::duration::parse(&rec.settings.idle_timeout)
            .map_or(0, |d| d.as_millis() as u64),
        pid: rec.pid,
        members: member_views(rec),
        progress: None,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupView {
    /// The group's id (a council's, or a fan-out's).
    pub council_id: String,
    /// `discuss` or `plan` (a council), `fanout`.
    pub kind: String,
    pub stage: &'static str,
    /// `running`, `lost`, or the stage where it stopped.
    pub status: &'static str,
    pub task: String,
    pub created_ms: u64,
    pub elapsed_ms: u64,
    pub members: Vec<MemberView>,
    /// What the runs used so far, together.
    pub usage: Usage,
    pub runs: Vec<RunView>,
    /// A bench run's trials (`kind` `bench`): recorded, planned, solved.
    /// Its `runs` are the peer calls in flight.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<BenchProgress>,
}

/// The council's status, given whether its runner is alive.
pub fn status(rec: &Record, runner_alive: bool) -> &'static str {
    head_status(&head(rec), runner_alive)
}

/// A group's status, given whether its runner is alive.
pub fn head_status(h: &Head, runner_alive: bool) -> &'static str {
    if h.stopped {
        h.stage
    } else if runner_alive {
        "running"
    } else {
        "lost"
    }
}

/// Whether the runner of the group whose record is in `dir` is alive now:
/// it holds the record's lock (`store::lock`; a recorded pid may since
/// name another process).
pub fn head_alive(dir: &Path) -> bool {
    crate::store::runner_alive(dir)
}

/// The tails of running runs' logs, kept between looks so that each look
/// reads only what is new (`per_look` bytes at most per log).
pub struct Follow {
    tails: HashMap<PathBuf, Tail>,
    per_look: usize,
}

impl Follow {
    /// `per_look`: the most read of one log per look (a snapshot reads all).
    pub fn new(per_look: usize) -> Follow {
        Follow {
            tails: HashMap::new(),
            per_look,
        }
    }

    fn live(&mut self, log: &Path, agent: Agent) -> Live {
        let t = match self.tails.get_mut(log) {
            Some(t) => t,
            None => {
                let Ok(mut t) = Tail::new(log.to_path_buf(), agent).from_last(FIRST_READ) else {
                    return Live::default();
                };
                // The first look reads what is there, so `doing` is current at once.
                let _ = t.catch_up();
                self.tails.entry(log.to_path_buf()).or_insert(t)
            }
        };
        // A read error leaves what was read; the next look tries again.
        let _ = t.poll(self.per_look);
        t.live.clone()
    }

    /// Forget the tails of logs no longer running.
    pub fn keep_only(&mut self, running: &[PathBuf]) {
        self.tails.retain(|p, _| running.contains(p));
    }
}

fn member_views(rec: &Record) -> Vec<MemberView> {
    let mut out: Vec<MemberView> = rec
        .members
        .iter()
        .map(|m| MemberView {
            agent: m.agent.clone(),
            model: m.model.clone(),
            vendor: m.vendor.clone(),
            role: "member",
        })
        .collect();
    for (m, role) in [(&rec.chair, "chair"), (&rec.writer, "writer")] {
        if let Some(m) = m {
            out.push(MemberView {
                agent: m.agent.clone(),
                model: m.model.clone(),
                vendor: m.vendor.clone(),
                role,
            });
        }
    }
    out
}

/// When the peer last printed anything: its logs' newest modification time.
fn last_output_ms(log: &Path, since: u64) -> u64 {
    [log.to_path_buf(), log.with_file_name("stderr.log")]
        .iter()
        .filter_map(|p| p.metadata().ok()?.modified().ok())
        .filter_map(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64)
        .max()
        .unwrap_or(since)
        .max(since)
}

/// The status of an ended run, from its recorded outcome.
fn ended_status(outcome: Option<&str>) -> &'static str {
    match outcome {
        Some("ok" | "success") => "ok",
        Some("abstained") => "abstained",
        Some("timeout") => "timeout",
        Some("cancelled") => "cancelled",
        _ => "error",
    }
}

fn run_view(
    r: &RunRecord,
    council_running: bool,
    idle_ms: u64,
    now: u64,
    follow: &mut Follow,
) -> RunView {
    let mut v = RunView {
        name: r.name(),
        stage: r.stage.clone(),
        who: r.who.clone(),
        round: r.round,
        role: r.role.clone(),
        agent: r.agent.clone(),
        model: r.model.clone(),
        status: "lost",
        elapsed_ms: r.ended_ms.unwrap_or(now).saturating_sub(r.started_ms),
        doing: None,
        usage: r.usage.clone().unwrap_or_default(),
        last_activity_age_ms: r.ended_ms.map(|e| now.saturating_sub(e)),
        log: r.log.clone(),
    };
    if r.ended_ms.is_some() {
        v.status = ended_status(r.outcome.as_deref());
        return v;
    }
    if !council_running {
        // Its runner is gone and never wrote the end: nobody will.
        return v;
    }
    v.status = "running";
    let agent = Agent::parse(&r.agent).ok();
    let live = match (&r.log, agent) {
        (Some(log), Some(a)) => follow.live(log, a),
        _ => Live::default(),
    };
    v.doing = live
        .doing()
        .or_else(|| Some("waiting for the peer's first event".into()));
    v.usage = live.usage;
    let last = r
        .log
        .as_deref()
        .map_or(r.started_ms, |l| last_output_ms(l, r.started_ms));
    let age = now.saturating_sub(last);
    v.last_activity_age_ms = Some(age);
    let streams = agent.is_some_and(|a| a.streams_progress());
    if streams && stalled(age, idle_ms) {
        v.status = "stalled";
    }
    v
}

/// One council's view from its record and run records at `now`.
pub fn view(
    rec: &Record,
    records: &[RunRecord],
    alive: bool,
    now: u64,
    follow: &mut Follow,
) -> GroupView {
    view_head(&head(rec), records, alive, now, follow)
}

/// One group's view from its head and run records at `now`.
pub fn view_head(
    h: &Head,
    records: &[RunRecord],
    alive: bool,
    now: u64,
    follow: &mut Follow,
) -> GroupView {
    let status = head_status(h, alive);
    let running = status == "running";
    let idle_ms = h.idle_ms;
    let runs: Vec<RunView> = records
        .iter()
        .map(|r| run_view(r, running, idle_ms, now, follow))
        .collect();
    let mut usage = Usage::default();
    for r in &runs {
        usage.add(&r.usage);
    }
    let until = if running {
        now
    } else {
        h.updated_ms.max(h.created_ms)
    };
    GroupView {
        council_id: h.id.clone(),
        kind: h.kind.clone(),
        stage: h.stage,
        status,
        task: crate::agent::clip(&h.task, 200),
        created_ms: h.created_ms,
        elapsed_ms: until.saturating_sub(h.created_ms),
        members: h.members.clone(),
        usage,
        runs,
        progress: h.progress.clone(),
    }
}

/// Which kind of record a group is (the store's kinds: a council or a
/// fan-out; a job is no group).
pub use crate::store::Kind as GroupKind;

/// The group of `kind` in `dir` as the views read it (`None`: absent,
/// unreadable, or no group).
pub fn load_head(kind: GroupKind, dir: &Path) -> Option<Head> {
    match kind {
        GroupKind::Council => load(dir).map(|r| head(&r)),
        GroupKind::Fanout => super::fanout::load(dir),
        GroupKind::Bench => super::bench::load(dir),
        GroupKind::Job => None,
    }
}

/// A council's record read from its folder (`None`: absent or unreadable).
pub fn load(dir: &Path) -> Option<Record> {
    read_json::<Record>(&dir.join("state.json")).ok().flatten()
}

/// The ids of the councils in `councils` (the project's councils folder),
/// without creating it.
pub fn ids(councils: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(councils) else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| crate::ids::is_valid(n))
        .collect()
}

/// Running first, then the rest; newest first within each.
pub fn sort(v: &mut [GroupView]) {
    v.sort_by(|a, b| {
        (a.status != "running")
            .cmp(&(b.status != "running"))
            .then(b.created_ms.cmp(&a.created_ms))
            .then(b.council_id.cmp(&a.council_id))
    });
}

/// Every council in `councils` at `now` (`watch --once`, `serve`'s first look).
pub fn all(councils: &Path, now: u64) -> Vec<GroupView> {
    all_groups(&[(GroupKind::Council, councils.to_path_buf())], now)
}

/// Every group in these folders at `now`, running first, then newest.
pub fn all_groups(folders: &[(GroupKind, PathBuf)], now: u64) -> Vec<GroupView> {
    let mut follow = Follow::new(usize::MAX);
    let mut out: Vec<GroupView> = folders
        .iter()
        .flat_map(|(kind, base)| ids(base).into_iter().map(move |id| (*kind, base.join(id))))
        .filter_map(|(kind, dir)| {
            let h = load_head(kind, &dir)?;
            let records = runs::list(&dir);
            Some(view_head(&h, &records, head_alive(&dir), now, &mut follow))
        })
        .collect();
    sort(&mut out);
    out
}

/// The councils folder of the project whose job store is `store`, if it
/// belongs to a project (it is not created here).
pub fn dir_of(store: &crate::job::store::Store) -> Option<PathBuf> {
    let root = store.root()?;
    Some(crate::state_dir::project(root).ok()?.join("councils"))
}

/// The folders of every kind of group of the project whose job store is
/// `store` (none is created here).
pub fn group_dirs(store: &crate::job::store::Store) -> Vec<(GroupKind, PathBuf)> {
    let Some(project) = store.root().and_then(|r| crate::state_dir::project(r).ok()) else {
        return Vec::new();
    };
    [GroupKind::Council, GroupKind::Fanout]
        .into_iter()
        .map(|k| (k, project.join(k.folder())))
        .collect()
}

/// `group_dirs` and the project's bench runs: what `watch` shows (serve
/// has a bench panel of its own).
pub fn watch_dirs(store: &crate::job::store::Store) -> Vec<(GroupKind, PathBuf)> {
    let mut dirs = group_dirs(store);
    if let Some(project) = store.root().and_then(|r| crate::state_dir::project(r).ok()) {
        dirs.push((GroupKind::Bench, project.join(GroupKind::Bench.folder())));
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::council::machine::Stage;
    use crate::council::store::{Member, Settings};
    use std::io::Write;

    fn record(stage: Stage, pid: Option<u32>) -> Record {
        let m = |a: &str| Member {
            agent: a.into(),
            model: None,
            vendor: a.into(),
        };
        Record {
            council_id: "1m8q4fhwprzza".into(),
            kind: "plan".into(),
            stage,
            created_ms: 1_000,
            root: "/r".into(),
            cwd: "/r".into(),
            task: "t".into(),
            settings: Settings {
                idle_timeout: "10s".into(),
                ..Settings::default()
            },
            members: vec![m("codex"), m("claude")],
            chair: Some(m("claude")),
            writer: Some(m("codex")),
            seed: 0,
            packet_sha256: String::new(),
            base_commit: None,
            warnings: Vec::new(),
            approval: None,
            plan_sha256: None,
            reason: None,
            pid,
            execute: false,
            updated_ms: 5_000,
            background: true,
            cancelled_in: None,
            stop_kind: None,
            notify: Default::default(),
            origin: Default::default(),
        }
    }

    fn run(who: &str, log: Option<PathBuf>, ended: Option<(u64, &str)>) -> RunRecord {
        RunRecord {
            stage: "proposing".into(),
            who: who.into(),
            role: "member".into(),
            agent: "codex".into(),
            model: None,
            log,
            round: None,
            started_ms: 2_000,
            ended_ms: ended.map(|e| e.0),
            outcome: ended.map(|e| e.1.to_string()),
            usage: ended.map(|_| Usage {
                input_tokens: Some(10),
                output_tokens: Some(5),
                ..Usage::default()
            }),
        }
    }

    #[test]
    fn the_council_status_follows_its_stage_and_runner() {
        let me = Some(std::process::id());
        assert_eq!(status(&record(Stage::Proposing, me), true), "running");
        assert_eq!(status(&record(Stage::Proposing, me), false), "lost");
        assert_eq!(
            status(&record(Stage::AwaitingApproval, me), true),
            "awaiting_approval"
        );
        assert_eq!(status(&record(Stage::Approved, None), false), "approved");
        assert_eq!(status(&record(Stage::Ready, None), false), "ready");
        // Alive is the record's lock held, whatever pid it names.
        let d = tempfile::tempdir().unwrap();
        assert!(!head_alive(d.path()), "our own pid recorded is no runner");
        let lock = crate::store::lock::hold(d.path()).unwrap();
        assert!(head_alive(d.path()));
        drop(lock);
        assert!(!head_alive(d.path()));
    }

    #[test]
    fn a_running_run_reads_its_log_and_an_orphan_is_lost() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("stdout.log");
        let mut f = std::fs::File::create(&log).unwrap();
        writeln!(
            f,
            r#"{{"type":"item.started","item":{{"type":"command_execution","command":"make"}}}}"#
        )
        .unwrap();
        let records = [
            run("m0", Some(log.clone()), None),
            run("m1", None, Some((3_000, "abstained"))),
        ];
        let rec = record(Stage::Proposing, Some(std::process::id()));
        let now = crate::council::store::now_ms();
        let mut follow = Follow::new(1 << 20);
        let v = view(&rec, &records, true, now, &mut follow);
        assert_eq!(v.status, "running");
        assert_eq!(v.runs[0].status, "running");
        assert_eq!(v.runs[0].doing.as_deref(), Some("$ make"));
        assert!(v.runs[0].last_activity_age_ms.unwrap() < 5_000);
        assert_eq!(
            (v.runs[1].status, v.runs[1].elapsed_ms),
            ("abstained", 1_000)
        );
        assert_eq!(
            v.usage.input_tokens,
            Some(10),
            "the ended run's usage counts"
        );
        assert_eq!(v.members.len(), 4);
        assert_eq!(v.elapsed_ms, now - 1_000);
        // The runner died: the unfinished run is lost, the council too.
        let v = view(&rec, &records, false, now, &mut follow);
        assert_eq!((v.status, v.runs[0].status), ("lost", "lost"));
        assert_eq!(v.runs[0].doing, None);
        assert_eq!(v.elapsed_ms, 4_000, "until its last write");
    }

    #[test]
    fn a_silent_run_is_stalled_past_half_the_idle_timeout() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("stdout.log");
        std::fs::write(&log, "").unwrap();
        let rec = record(Stage::Critiquing, Some(std::process::id()));
        let now = crate::council::store::now_ms() + 6_000;
        let mut follow = Follow::new(1 << 20);
        let v = view(&rec, &[run("m0", Some(log), None)], true, now, &mut follow);
        assert_eq!(
            v.runs[0].status, "stalled",
            "6 s of silence, idle timeout 10 s"
        );
        let v = view(
            &rec,
            &[run("m0", None, None)],
            true,
            2_000 + 4_000,
            &mut follow,
        );
        assert_eq!(v.runs[0].status, "running", "4 s is under half");
    }

    #[test]
    fn running_councils_first_then_newest() {
        let mk = |id: &str, status: &'static str, created: u64| GroupView {
            council_id: id.into(),
            kind: "plan".into(),
            stage: "proposing",
            status,
            task: String::new(),
            created_ms: created,
            elapsed_ms: 0,
            members: Vec::new(),
            usage: Usage::default(),
            runs: Vec::new(),
            progress: None,
        };
        let mut v = vec![
            mk("a", "ready", 3),
            mk("b", "running", 1),
            mk("c", "failed", 5),
        ];
        sort(&mut v);
        let ids: Vec<&str> = v.iter().map(|c| c.council_id.as_str()).collect();
        assert_eq!(ids, ["b", "c", "a"]);
    }
}

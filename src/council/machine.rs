//! The council's state machine as a pure function: `next(stage, event)` is
//! the only way a persisted council changes stage. Illegal moves are errors.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Preflight,
    Proposing,
    Critiquing,
    /// `--depth deep`: each author revises its proposal against the critiques.
    Revising,
    Synthesizing,
    /// A plan waits for `approve` (never entered by `discuss`).
    AwaitingApproval,
    /// The plan is approved and nothing runs until `council execute` (`plan
    /// --yes` goes on at once). A record of baton 0.3 approved before this
    /// stage existed says `implementing` and executes as before.
    Approved,
    Implementing,
    Verifying,
    Reviewing,
    Repairing,
    /// A `discuss` that finished: the synthesis is the answer.
    Done,
    Ready,
    NeedsHuman,
    Failed,
    Cancelled,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Preflight => "preflight",
            Stage::Proposing => "proposing",
            Stage::Critiquing => "critiquing",
            Stage::Revising => "revising",
            Stage::Synthesizing => "synthesizing",
            Stage::AwaitingApproval => "awaiting_approval",
            Stage::Approved => "approved",
            Stage::Implementing => "implementing",
            Stage::Verifying => "verifying",
            Stage::Reviewing => "reviewing",
            Stage::Repairing => "repairing",
            Stage::Done => "done",
            Stage::Ready => "ready",
            Stage::NeedsHuman => "needs_human",
            Stage::Failed => "failed",
            Stage::Cancelled => "cancelled",
        }
    }

    /// Stopped until a person acts (`approve`, `execute`): nothing runs,
    /// nothing is spent, and it is no failure.
    pub fn is_waiting(self) -> bool {
        matches!(self, Stage::AwaitingApproval | Stage::Approved)
    }

    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Stage::Done | Stage::Ready | Stage::NeedsHuman | Stage::Failed | Stage::Cancelled
        )
    }

    /// 0 only for `ready`, a finished `discuss`, or a plan that waits for
    /// approval (the `plan` command did all it was asked); `needs_human`
    /// and `failed` are 1, `cancelled` 130, a council still running 0.
    pub fn exit_code(self) -> i32 {
        use crate::error::exit;
        match self {
            Stage::NeedsHuman | Stage::Failed => exit::FAILED,
            Stage::Cancelled => exit::INTERRUPTED,
            _ => exit::SUCCESS,
        }
    }
}

/// What happened; computed by baton from structured fields, never prose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// Members, packet and base are settled.
    Preflighted,
    /// The proposals are in: how many count, against the quorum.
    Proposed {
        valid: usize,
        quorum: usize,
        critique: bool,
    },
    /// The critiques are in; `revise`: `--depth deep` asks for a revision round.
    Critiqued {
        revise: bool,
    },
    /// The revision round is over (revised or kept, each proposal).
    Revised,
    /// The chair (or a fallback chair, or `--chair none`) produced a plan.
    Synthesized {
        plan: bool,
    },
    /// No plan could be had from a chair: the mechanical merge goes to a person.
    ChairFailed,
    /// `approve` with the right sha256, base and files (or `--yes`).
    Approved,
    /// `council execute` (or `plan --yes`) starts the approved plan.
    Execute,
    /// The writer's turn ended (`ok`: it ran; a run that could not start is not ok).
    Implemented {
        ok: bool,
    },
    Verified,
    /// The gate's verdict after the reviews.
    Reviewed(Gate),
    /// The projected token use would cross `--budget-tokens`, or `--max-wall` passed.
    OverBudget,
    Cancel,
    Fail,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    Ready,
    Repair,
    NeedsHuman,
}

/// The next stage, or `None` when `event` cannot happen in `stage`.
pub fn next(stage: Stage, event: Event) -> Option<Stage> {
    use Event as E;
    use Stage as S;
    if stage.is_terminal() {
        return None;
    }
    Some(match (stage, event) {
        (_, E::Cancel) => S::Cancelled,
        (_, E::Fail) => S::Failed,
        // Waiting for a person costs nothing: no budget can run out there.
        (S::AwaitingApproval | S::Approved, E::OverBudget) => return None,
        (_, E::OverBudget) => S::NeedsHuman,
        (S::Preflight, E::Preflighted) => S::Proposing,
        (S::Proposing, E::Proposed { valid, quorum, .. }) if valid < quorum => S::NeedsHuman,
        (S::Proposing, E::Proposed { critique: true, .. }) => S::Critiquing,
        (
            S::Proposing,
            E::Proposed {
                critique: false, ..
            },
        ) => S::Synthesizing,
        (S::Critiquing, E::Critiqued { revise: false }) => S::Synthesizing,
        (S::Critiquing, E::Critiqued { revise: true }) => S::Revising,
        (S::Revising, E::Revised) => S::Synthesizing,
        (S::Synthesizing, E::Synthesized { plan: true }) => S::AwaitingApproval,
        (S::Synthesizing, E::Synthesized { plan: false }) => S::Done,
        (S::Synthesizing, E::ChairFailed) => S::NeedsHuman,
        (S::AwaitingApproval, E::Approved) => S::Approved,
        (S::Approved, E::Execute) => S::Implementing,
        (S::Implementing | S::Repairing, E::Implemented { ok: true }) => S::Verifying,
        (S::Implementing | S::Repairing, E::Implemented { ok: false }) => S::Failed,
        (S::Verifying, E::Verified) => S::Reviewing,
        (S::Reviewing, E::Reviewed(Gate::Ready)) => S::Ready,
        (S::Reviewing, E::Reviewed(Gate::Repair)) => S::Repairing,
        (S::Reviewing, E::Reviewed(Gate::NeedsHuman)) => S::NeedsHuman,
        _ => return None,
    })
}

/// Where `resume` reopens a council: a cancelled one at the stage the
/// cancel stopped (its finished calls are stored; an interrupted call never
/// is). The one move out of a terminal stage, and only on a person's word.
pub fn reopen(stage: Stage, cancelled_in: Option<Stage>) -> Option<Stage> {
    match (stage, cancelled_in) {
        (Stage::Cancelled, Some(s)) if !s.is_terminal() => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Event as E;
    use Stage as S;

    const ALL: [Stage; 16] = [
        S::Preflight,
        S::Proposing,
        S::Critiquing,
        S::Revising,
        S::Synthesizing,
        S::AwaitingApproval,
        S::Approved,
        S::Implementing,
        S::Verifying,
        S::Reviewing,
        S::Repairing,
        S::Done,
        S::Ready,
        S::NeedsHuman,
        S::Failed,
        S::Cancelled,
    ];

    fn proposed(valid: usize, critique: bool) -> Event {
        E::Proposed {
            valid,
            quorum: 2,
            critique,
        }
    }

    #[test]
    fn the_happy_paths() {
        let plan = [
            (S::Preflight, E::Preflighted, S::Proposing),
            (S::Proposing, proposed(3, true), S::Critiquing),
            (
                S::Critiquing,
                E::Critiqued { revise: false },
                S::Synthesizing,
            ),
            (S::Critiquing, E::Critiqued { revise: true }, S::Revising),
            (S::Revising, E::Revised, S::Synthesizing),
            (
                S::Synthesizing,
                E::Synthesized { plan: true },
                S::AwaitingApproval,
            ),
            (S::AwaitingApproval, E::Approved, S::Approved),
            (S::Approved, E::Execute, S::Implementing),
            (S::Implementing, E::Implemented { ok: true }, S::Verifying),
            (S::Verifying, E::Verified, S::Reviewing),
            (S::Reviewing, E::Reviewed(Gate::Repair), S::Repairing),
            (S::Repairing, E::Implemented { ok: true }, S::Verifying),
            (S::Reviewing, E::Reviewed(Gate::Ready), S::Ready),
        ];
        for (from, ev, to) in plan {
            assert_eq!(next(from, ev), Some(to), "{from:?} + {ev:?}");
        }
        assert_eq!(
            next(S::Proposing, proposed(2, false)),
            Some(S::Synthesizing)
        );
        assert_eq!(
            next(S::Synthesizing, E::Synthesized { plan: false }),
            Some(S::Done)
        );
    }

    #[test]
    fn the_unhappy_paths() {
        assert_eq!(next(S::Proposing, proposed(1, true)), Some(S::NeedsHuman));
        assert_eq!(next(S::Synthesizing, E::ChairFailed), Some(S::NeedsHuman));
        assert_eq!(
            next(S::Implementing, E::Implemented { ok: false }),
            Some(S::Failed)
        );
        assert_eq!(
            next(S::Repairing, E::Implemented { ok: false }),
            Some(S::Failed)
        );
        assert_eq!(
            next(S::Reviewing, E::Reviewed(Gate::NeedsHuman)),
            Some(S::NeedsHuman)
        );
        // Waiting for a person costs nothing: no budget can run out there.
        assert_eq!(next(S::AwaitingApproval, E::OverBudget), None);
        assert_eq!(next(S::Approved, E::OverBudget), None);
        for s in ALL.iter().filter(|s| !s.is_terminal()) {
            assert_eq!(next(*s, E::Cancel), Some(S::Cancelled));
            assert_eq!(next(*s, E::Fail), Some(S::Failed));
            if !s.is_waiting() {
                assert_eq!(next(*s, E::OverBudget), Some(S::NeedsHuman));
            }
        }
    }

    #[test]
    fn terminal_stages_never_move_and_illegal_moves_are_refused() {
        let events = [
            E::Preflighted,
            proposed(3, true),
            E::Critiqued { revise: false },
            E::Critiqued { revise: true },
            E::Revised,
            E::Synthesized { plan: true },
            E::ChairFailed,
            E::Approved,
            E::Execute,
            E::Implemented { ok: true },
            E::Verified,
            E::Reviewed(Gate::Ready),
            E::OverBudget,
            E::Cancel,
            E::Fail,
        ];
        for s in ALL.iter().filter(|s| s.is_terminal()) {
            for e in events {
                assert_eq!(next(*s, e), None, "{s:?} + {e:?}");
            }
        }
        // Approval only while waiting for it; no skipping stages.
        assert_eq!(next(S::Synthesizing, E::Approved), None);
        assert_eq!(next(S::Preflight, E::Critiqued { revise: true }), None);
        assert_eq!(next(S::Proposing, E::Revised), None);
        assert_eq!(next(S::Proposing, E::Verified), None);
        assert_eq!(next(S::AwaitingApproval, E::Implemented { ok: true }), None);
        // Approved is not started: only `execute` starts it.
        assert_eq!(next(S::AwaitingApproval, E::Execute), None);
        assert_eq!(next(S::Approved, E::Implemented { ok: true }), None);
        assert_eq!(next(S::Approved, E::Approved), None);
        assert_eq!(next(S::Verifying, E::Reviewed(Gate::Ready)), None);
        // Every non-terminal stage accepts exactly its own events.
        let mut legal = 0;
        for s in ALL {
            for e in events {
                legal += usize::from(next(s, e).is_some());
            }
        }
        assert_eq!(
            legal,
            11 * 2 + 9 + 13,
            "count of legal moves changed: review the table"
        );
    }

    #[test]
    fn only_a_cancelled_council_reopens_and_at_its_stage() {
        assert_eq!(
            reopen(S::Cancelled, Some(S::Critiquing)),
            Some(S::Critiquing)
        );
        assert_eq!(reopen(S::Cancelled, None), None);
        assert_eq!(reopen(S::Cancelled, Some(S::Done)), None);
        assert_eq!(reopen(S::Failed, Some(S::Proposing)), None);
        assert_eq!(reopen(S::Proposing, Some(S::Proposing)), None);
    }

    #[test]
    fn exit_codes() {
        assert_eq!(S::Ready.exit_code(), 0);
        assert_eq!(S::Done.exit_code(), 0);
        assert_eq!(S::NeedsHuman.exit_code(), 1);
        assert_eq!(S::Failed.exit_code(), 1);
        assert_eq!(S::Cancelled.exit_code(), 130);
    }
}

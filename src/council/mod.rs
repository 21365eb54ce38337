//! `baton council`: several peers propose independently, critique each other
//! blind, a chair plans, one writes in a worktree, the others review.
//!
//! Theory of operation (a persisted state machine, `machine::next`, one
//! directory per council in the state directory, `councils/<id>/`):
//! 1. preflight (`preflight`): members, chair and writer resolved, the packet
//!    built once with `ask`'s code, the base commit recorded.
//! 2. proposing (`proposal`), 3. critiquing (`critique`, blind: `blind`),
//!    then with `--depth deep` a revision round (`revise`),
//! 4. synthesizing (`chair`: a `schema::Plan`, or baton's mechanical merge),
//! 5. awaiting_approval (`approve`: bound to the plan's sha256 and the base;
//!    stages 6–9 run only bytes that hash to it, `approve::approved_plan`),
//!    then approved: nothing runs until `execute` (or `plan --yes`),
//! 6. implementing, 7. verifying, 8. reviewing, 9. repairing (`execute`,
//!    with `implement` on `worktree::attempt`, the oracle
//!    `worktree::oracle`, `review`, `gate`),
//! 10. a terminal state: ready, needs_human, failed or cancelled (or done
//!     for `discuss`).
//!
//! Every member call is stored under the sha256 of its exact prompt
//! (`store`, `call`; its answer redacted before anyone else sees it), and
//! every prompt is a pure function of the record and
//! earlier answers (the shuffles are seeded), so `resume` re-walks the
//! stages and reuses every finished call: the result equals that of an
//! uninterrupted run. Every gate is computed from structured fields.

// Read top-down: a group imports only from itself and the groups below.
//
// The commands: dispatch, and the job commands' view of a council.
pub mod as_job;
pub mod command;

// The walk: `flow::drive` runs the stages in order.
pub mod flow;

// The stages: 2–4 deliberating (with the revision round), 5 approving,
// 6–9 executing; the result built from what they stored.
pub mod approve;
pub mod deliberate;
pub mod envelope;
pub mod execute;
pub mod preflight;
pub mod revise;

// What the stages share: the request, a member's call, the budget, the
// writer, the lock, the blinding, the schemas and their checks, the gate.
pub mod blind;
pub mod budget;
pub mod call;
pub mod chair;
pub mod check;
pub mod critique;
pub mod gate;
pub mod implement;
pub mod lock;
pub mod proposal;
pub mod prune;
pub mod report;
pub mod request;
pub mod result;
pub mod review;
pub mod schema;

// The record on disk and the pure state machine.
pub mod machine;
pub mod store;

pub use command::command;
pub use request::{Action, CouncilRequest};

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
//! 6. implementing, 7. verifying, 8. reviewing, 9. repairing (`execute`,
//!    with `implement`, `verify`, `review`, `gate`),
//! 10. a terminal state: ready, needs_human, failed or cancelled (or done
//!     for `discuss`).
//!
//! Every member call is stored under the sha256 of its exact prompt
//! (`store`, `call`; its answer redacted before anyone else sees it), and every prompt is a pure function of the record and
//! earlier answers (the shuffles are seeded), so `resume` re-walks the
//! stages and reuses every finished call: the result equals that of an
//! uninterrupted run. Every gate is computed from structured fields.

pub mod approve;
pub mod as_job;
pub mod blind;
pub mod call;
pub mod chair;
pub mod check;
pub mod command;
pub mod critique;
pub mod deliberate;
pub mod envelope;
pub mod envelope_schema;
pub mod execute;
pub mod flow;
pub mod gate;
pub mod implement;
pub mod lock;
pub mod machine;
pub mod preflight;
pub mod proposal;
pub mod prune;
pub mod report;
pub mod review;
pub mod revise;
pub mod runs;
pub mod schema;
pub mod store;
pub mod verify;

pub use command::{Action, CouncilRequest, command};

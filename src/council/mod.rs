//! `baton council`: several peers propose independently, critique each other
//! blind, a chair plans, one writes in a worktree, the others review.
//!
//! Theory of operation (a persisted state machine, one directory per council
//! in the state directory, `councils/<id>/`):
//! 1. preflight: members, chair and writer resolved, the packet built once
//!    with `ask`'s code, the base commit recorded.
//! 2. proposing, 3. critiquing (blind, relabelled per critic),
//! 4. synthesizing (the chair returns a `schema::Plan`),
//! 5. awaiting_approval (bound to the plan's sha256 and the base commit),
//! 6. implementing, 7. verifying, 8. reviewing, 9. repairing,
//! 10. a terminal state: ready, needs_human, failed or cancelled.
//!
//! `schema` holds the structured answers every stage exchanges; every gate is
//! computed by baton from their fields, never read from prose.

pub mod gate;
pub mod implement;
pub mod lock;
pub mod review;
pub mod schema;
pub mod verify;

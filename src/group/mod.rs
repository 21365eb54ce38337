//! A group of peer runs driven together (a council, a fan-out): the parts
//! both features use, below both of them.
//!
//! - `parallel`: one thread per member or candidate; an interrupt stops all.
//! - `call`: one structured call of a peer (a member, a judge): prompt,
//!   run, answer parsed against a schema with one repair round, recorded.
//! - `runs`: a record per run of the group (`<group>/runs/*.json`), written
//!   at its start and end, from which `watch` and `serve` show the group.
//! - `files`: the group's JSON files (atomic, private) and its clock.
//! - `background`: a group as a background job (its runner; alive, wait, stop).
//! - `stalls`: its runs that fell silent, announced as the group's.
//! - `blind`: names stripped, for whoever judges several peers' work
//!   without knowing whose it is; `shuffle`: the seeded order and labels it
//!   is shown them in.

pub mod background;
pub mod blind;
pub mod call;
pub mod files;
pub mod parallel;
pub mod runs;
pub mod shuffle;
pub mod stalls;

pub use files::{now_ms, read_json, write_json};

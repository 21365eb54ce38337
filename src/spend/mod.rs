//! What peers cost: the price table (`prices`), spending limits shared by
//! the calls of one command (`budget`), and the machine-wide record of
//! every call's usage that `baton usage` reads (`ledger`).

pub mod budget;
pub mod ledger;
pub mod prices;
pub mod usage;

pub use budget::{Budget, Live, Meter, Spent};

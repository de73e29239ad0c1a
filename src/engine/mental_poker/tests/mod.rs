//! Whole games between two of our engines over the in-memory duplex, with Rust test hooks:
//! honest games, every cheat of the catalogue with its exact reason, fairness, and the
//! reference's vectors and recorded games.

mod catalogue;
pub(crate) mod cheats;
mod fairness;
mod game;
mod honest;
mod known_answers;
mod replay;
mod secrets;
mod silence;
mod strictness;
mod tampering;

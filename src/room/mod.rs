//! Rooms (`authoritative_group`): many members around one leader that runs the hooks,
//! orders every action into one hash-chained sequence of frames, and sends each member a
//! signed envelope with its own view and a certified checkpoint. This module is the room's
//! wire core, without I/O: the JSON a room may hold and its hash, deltas, envelopes,
//! checkpoints, and the member's verifier. The wire calls a room a "group".

pub mod authority;
pub mod checkpoint;
pub mod delta;
pub mod envelope;
pub mod error;
pub mod hooks;
pub mod json;
pub mod kept;
pub mod replica;
pub mod view;

pub use error::RoomError;
pub use replica::Replica;

#[cfg(test)]
pub(crate) mod test_hooks;
#[cfg(test)]
mod tests;

//! A person taking part in a room: one way to queue a room action (shared by `session
//! action`, the terminal and the browser controller, [`actions`]), what makes a room
//! conversational — a typed line becomes its text action ([`talk`]) — and the terminal of a
//! `join`/`host` in human or hybrid control, which reads actions from stdin and shows each
//! new step of the room ([`console`]).

pub mod actions;
pub mod console;
pub mod talk;

pub use actions::{ActionError, queue};
pub use talk::Talk;

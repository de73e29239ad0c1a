//! Decision windows, below the engine: a side that a person steers (human or hybrid control)
//! opens windows on its [`Desk`] — handed to the hooks directly, never looked up — and waits
//! for a decision from the decision files (`decision/` in the engine dir, the reference's
//! format, which `session decide`, the browser controller and the reference's own tools
//! write) or from this process (a terminal prompt). The legal values of a window come from
//! the contract and the hooks ([`legal`]); a decision from outside the engine is checked
//! against the open window before it is written ([`submit`]). The front ends that people
//! use — the terminal, the browser, the CLI — live above the session layer, in
//! [`crate::control`].

pub mod desk;
mod files;
pub mod legal;
pub mod submit;

pub use desk::{Desk, Submitted, WindowRequest, WindowResult, WindowStop, WindowTimes};
pub use files::{append_line as append_jsonl, epoch_now};
pub use legal::{HooksChoices, choices_for};

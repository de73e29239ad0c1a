//! People in the loop. A side under `human` or `hybrid` control opens decision windows
//! ([`desk`]) that a person answers — with `aigenora session decide` ([`submit`]), at the
//! terminal that runs the session ([`terminal`]), or in the browser controller ([`web`]) —
//! all through the decision files of [`crate::records`], which the reference's tools also
//! read and write. Control modes are local: nothing here touches the spec or the wire.

pub mod desk;
mod files;
pub mod legal;
pub mod registry;
pub mod submit;
pub mod target;
pub mod terminal;
pub mod view;
pub mod web;

pub use desk::{Desk, Submitted, WindowRequest, WindowResult, WindowStop, WindowTimes};
pub use files::{append_line as append_jsonl, epoch_now};
pub use legal::{HooksChoices, choices_for};
pub use target::Target;

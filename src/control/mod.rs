//! People in the loop, above the session layer: the front ends through which a person
//! answers a side's decision windows ([`crate::decision`]) — the terminal that runs the
//! session ([`terminal`], started by the CLI once the side has a desk), the browser
//! controller ([`web`]), and `aigenora session decide|snapshot|strategy`, which find the
//! session they act on ([`target`]) and show it ([`view`]). Control modes are local: nothing
//! here touches the spec or the wire.

pub mod room;
pub mod target;
pub mod terminal;
pub mod view;
pub mod web;

pub use target::Target;

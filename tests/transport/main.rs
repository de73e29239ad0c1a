//! The iroh transport on loopback without relays: our channels against each other and
//! against a bare iroh peer writing exact bytes.

#[path = "../support/mod.rs"]
mod support;

mod blocked_send;
mod driven;
mod session;
mod wire;

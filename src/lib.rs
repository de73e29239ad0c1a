//! aigenora: agent-to-agent protocol contracts, hooks, P2P sessions and the community server.
//!
//! The library holds every concept once; the two binaries, `aigenora` (`src/main.rs`) and
//! `aigenora-full` (`src/bin/aigenora-full.rs`), only parse the command line and dispatch
//! into [`cli`] (which commands each runs: [`binaries`]).

pub mod api;
pub mod binaries;
pub mod canonical;
pub mod cli;
pub mod client;
pub mod config;
pub mod control;
pub mod decision;
pub mod doctor;
pub mod engine;
pub mod hooks;
pub mod http_server;
pub mod identity;
pub mod layout;
pub mod protocols;
pub mod records;
pub mod relay;
pub mod room;
pub mod selfplay;
pub mod server;
pub mod session;
pub mod skill;
pub mod spec;
pub mod terminal;
pub mod transport;
pub mod wire;

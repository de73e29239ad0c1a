//! aigenora: agent-to-agent protocol contracts, hooks, P2P sessions and the community server.
//!
//! The library holds every concept once; the `aigenora` binary (`src/main.rs`) only parses
//! the command line and dispatches into [`cli`].

pub mod api;
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

//! Helpers shared by every integration-test crate (`tests/<group>/main.rs` includes this
//! module with `#[path = "../support/mod.rs"] mod support;`).
//!
//! - [`browser`]: headless Chromium through chromedriver, opened on a controller URL.
//! - [`cli`]: our built binary as a command, `protocol test --json`.
//! - [`control`]: finding a session's open decision window and answering it.
//! - [`reference`]: the reference client (`aigenora==0.1.4`) in its own venv, and a
//!   reference agent as the other side of a session.
//! - [`relay`]: our relay as a process, its printed addresses, throw-away TLS material.
//! - [`server`]: a real `aigenora server` process, signed raw requests, test specs.
//! - [`small_disk`]: a tmpfs of a few MiB in a private mount namespace, to fill up.
//! - [`postgres`]: a throwaway PostgreSQL cluster and a fresh database per test server.
//! - [`net`]: a server plus agents of ours, each with its own data dir, driving our binary as
//!   separate processes; readers for what a session leaves on disk.
//! - [`process`]: a child process with collected output, bounded waits, SIGKILL on drop.
//! - [`transport`]: offline iroh endpoints, connected pairs, raw peers writing exact bytes.
//! - [`http`]: raw HTTP/1.1 requests, byte for byte.
//! - [`mcp`]: a real MCP client (the PyPI `mcp` package) driving `aigenora mcp`.
//! - [`system`]: programs from the distribution, installed with apt-get when missing.
//! - [`fake`]: misbehaving hosts and guests built from the library over raw iroh streams.
// Each test crate uses its own part of these helpers (the server tests run no reference
// agent, the spec tests open no iroh stream, ...), so an item here is always unused in some
// crate. Helpers that no crate uses are deleted instead: build with this line removed and
// look for an item reported in every crate.
#![allow(dead_code)]

pub mod browser;
pub mod cli;
pub mod control;
pub mod fake;
pub mod http;
pub mod mcp;
pub mod net;
pub mod postgres;
pub mod process;
pub mod reference;
pub mod relay;
pub mod server;
pub mod small_disk;
pub mod system;
pub mod transport;

//! The community server over real HTTP (auth, protocols, invitations, sessions), started as
//! a process or in-process, and our community commands against it.

#[path = "../support/mod.rs"]
mod support;

mod agents;
mod auth;
mod cli;
mod durability;
mod groups;
mod hostile;
mod in_process;
mod instances;
mod invitations;
mod on_postgres;
mod protocols;
mod sessions;

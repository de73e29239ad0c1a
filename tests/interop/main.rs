//! Interop with the reference client (`aigenora==0.1.4`, unchanged, never skipped): it plays
//! sessions against ours over our server and over its own iroh transport, uses our community
//! server, and answers the same spec questions (hashes, message validation) as our binary.

#[path = "../support/mod.rs"]
mod support;

mod bridge;
mod clean_end;
mod community;
mod control;
mod failover;
mod groups;
mod human_browser;
mod human_play;
mod landlord;
mod mahjong;
mod mcp;
mod mental_poker;
mod reference_tables;
mod room_seats;
mod room_sizes;
mod rooms;
mod seat_agent;
mod sessions;
mod sigil;
mod spec;
mod tables;
mod tractor;
mod transport;
mod well_known;

//! Whole sessions between our own processes: a real server, host and guest as separate
//! `aigenora` processes over iroh on loopback, misbehaving and killed peers, `--daemon`.

#[path = "../support/mod.rs"]
mod support;

mod balance;
mod browser;
mod builtins;
mod clean_end;
mod control;
mod controller_load;
mod controller_page;
mod daemon;
mod fair_deals;
mod fake_peer;
mod hostile;
mod hostile_members;
mod invitation_end;
mod killed_peer;
mod mcp;
mod mcp_resources;
mod privacy;
mod relay;
mod room_people;
mod rooms;
mod session_commands;
mod silent_peer;
mod table_seats;
mod table_view;
mod terminal;

//! Rooms over the network: the admission exchange on a fresh channel (both sides), and the
//! member's loop that follows a leader — verifying every envelope, acknowledging it, and
//! submitting the member's own actions one at a time until each has its receipt. Blocking,
//! over any [`Channel`](crate::transport::Channel); the community server's control plane is
//! reached through [`RoomControl`].

pub mod admission;
pub mod failover;
pub mod fair_deal;
pub mod host;
pub mod join;
pub mod lead;
pub mod leader;
pub mod member;
pub mod outbox;
pub mod record;
pub mod rest;
pub mod seat;
pub mod table;

use crate::api::group::{Group, MemberAdmitted, NewMember};

/// The control-plane calls a room's peers make (the community server's `/api/v1/groups`).
pub trait RoomControl: Send {
    /// The room as the server has it now.
    fn group(&self, group_id: &str) -> Result<Group, String>;
    /// Registers this identity's admission (both signatures) and returns its seat.
    fn admit(&self, group_id: &str, admission: &NewMember) -> Result<MemberAdmitted, String>;
}

#[cfg(test)]
mod tests;

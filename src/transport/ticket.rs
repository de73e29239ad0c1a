//! The session ticket: how a guest finds a host (iroh-base 0.35 `NodeTicket`, `node…`).
//!
//! The string form is byte-compatible with the reference client's `iroh_ticket`: the prefix
//! `node` and unpadded lowercase base32 of the postcard-encoded node id, optional relay URL and
//! direct addresses.

use std::fmt;
use std::str::FromStr;

use iroh::NodeAddr;
use iroh_base::ticket::NodeTicket;

/// Where a host can be reached: its node id, optional relay URL and direct addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket(NodeTicket);

/// A string that is not an iroh node ticket.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid ticket: expected an iroh node ticket (`node…`): {reason}")]
pub struct TicketError {
    reason: String,
}

impl Ticket {
    /// The ticket for a node address.
    pub fn new(addr: NodeAddr) -> Self {
        Ticket(NodeTicket::new(addr))
    }

    /// The address the ticket points to.
    pub fn node_addr(&self) -> &NodeAddr {
        self.0.node_addr()
    }
}

impl FromStr for Ticket {
    type Err = TicketError;

    /// Parses a ticket, ignoring surrounding whitespace (tickets get copied and pasted).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(TicketError {
                reason: "the ticket is empty".into(),
            });
        }
        NodeTicket::from_str(trimmed)
            .map(Ticket)
            .map_err(|e| TicketError {
                reason: e.to_string(),
            })
    }
}

impl fmt::Display for Ticket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ticket printed by the reference client (iroh-ffi 0.35) on a machine without internet.
    const REFERENCE_TICKET: &str = "nodeadwmaurqc4gvf2uutz5ged4y3kiu5ewb27itin6lwmusjvicrpaimajdnb2hi4dthixs65ltmuys2mjoojswyylzfzuxe33ifzxgk5dxn5zgwlrpaeamaaacalzisaq";

    #[test]
    fn the_reference_ticket_round_trips_byte_for_byte() {
        let ticket: Ticket = REFERENCE_TICKET.parse().unwrap();
        let addr = ticket.node_addr();
        assert_eq!(
            addr.relay_url().map(|url| url.to_string()).as_deref(),
            Some("https://use1-1.relay.iroh.network./")
        );
        assert_eq!(addr.direct_addresses().count(), 1);
        assert_eq!(ticket.to_string(), REFERENCE_TICKET);
    }

    #[test]
    fn garbage_is_rejected_with_a_clear_message() {
        for bad in [
            "",
            "   ",
            "hello",
            "nodeXYZ!",
            "blobabc",
            &REFERENCE_TICKET[..40],
        ] {
            let error = bad.parse::<Ticket>().unwrap_err().to_string();
            assert!(
                error.starts_with("invalid ticket: expected an iroh node ticket"),
                "{error}"
            );
        }
    }
}

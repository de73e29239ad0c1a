//! Moving JSON frames between the two sides of a session.
//!
//! The engine only sees [`Channel`]: a blocking, ordered, reliable pipe of JSON objects.
//! [`memory`] pairs two channels in one process (`protocol test`); [`IrohChannel`] carries a
//! real session over iroh (docs/p2p-wire.md).
//!
//! A session over iroh, from the CLI's async side:
//! 1. [`SessionEndpoint::bind`] with a [`RelayChoice`] (`default`, `disabled`, URL).
//! 2. Host: [`SessionEndpoint::ticket`] to publish, then [`SessionEndpoint::accept_first`].
//!    Guest: parse the [`Ticket`], then [`SessionEndpoint::dial`].
//! 3. [`IrohChannel::driven`] with the [`PeerLink`] and the process's [`SessionDriver`]
//!    (or [`IrohChannel::new`] with a multi-threaded runtime's handle); move the channel to
//!    the engine thread. After the handshake the engine calls
//!    [`IrohChannel::start_heartbeat`] when the reference would.
//! 4. The engine ends with [`Channel::close`]; then [`SessionEndpoint::shutdown`].

mod bell;
mod drive;
mod endpoint;
mod heartbeat;
mod iroh_channel;
mod lines;
pub mod memory;
mod path;
mod relay;
mod shutdown;
mod ticket;

pub use bell::{Bell, BellSlot};
pub use drive::{Attached, SessionDriver};
pub use endpoint::{
    ALPN, DEFAULT_CONNECT_TIMEOUT, Knocks, PeerLink, RELAY_LOSS_GRACE, SessionEndpoint,
    TransportError, close_live_endpoints,
};
pub use heartbeat::{EventSink, HeartbeatConfig, RttStats};
pub use iroh_channel::IrohChannel;
pub use relay::{RELAY_ENV_VAR, RelayChoice, RelayChoiceError, probe as probe_relay};
pub use ticket::{Ticket, TicketError};

use serde_json::Value;

/// Largest frame either side accepts (the reference's `MAX_JSON_LINE_BYTES`).
pub const MAX_FRAME_BYTES: usize = 8 * 1024 * 1024;

/// Why a channel could not deliver or produce a frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelError {
    /// The peer finished its side or the connection is gone; nothing more will arrive.
    #[error("peer disconnected: {0}")]
    Closed(String),
    /// The peer sent something that is not a frame (bad JSON, oversized line).
    #[error("malformed frame from peer: {0}")]
    Malformed(String),
    /// Nothing arrived within the allotted time.
    #[error("timed out waiting for the peer")]
    Timeout,
    /// Frames posted without waiting pile up unwritten: the peer is not reading.
    #[error("the peer is not reading: {frames} frames ({bytes} bytes) wait to be sent")]
    Backlog { frames: usize, bytes: usize },
}

/// A bidirectional, ordered stream of JSON frames. Implementations deliver every frame the
/// peer sent before reporting [`ChannelError::Closed`]; once `recv` has reported it, the
/// peer has left the session and `send` reports it too.
pub trait Channel: Send {
    /// Sends one frame.
    fn send(&mut self, frame: &Value) -> Result<(), ChannelError>;

    /// Sends one frame without waiting for it to be written, so a peer that stops reading
    /// never blocks the caller: [`ChannelError::Backlog`] once too much posted earlier is
    /// still unwritten. Channels that never block on a send just send.
    fn post(&mut self, frame: &Value) -> Result<(), ChannelError> {
        self.send(frame)
    }

    /// Blocks until the next frame arrives.
    fn recv(&mut self) -> Result<Value, ChannelError>;

    /// Waits at most `timeout` for the next frame; `Ok(None)` when none arrived in time.
    fn recv_timeout(&mut self, timeout: std::time::Duration)
    -> Result<Option<Value>, ChannelError>;

    /// Ends our side cleanly: everything sent so far reaches the peer before this returns
    /// (bounded by the implementation's grace period).
    fn close(&mut self) -> Result<(), ChannelError> {
        Ok(())
    }

    /// Rings `bell` from now on whenever something arrives from the peer (a frame, or the
    /// end of the channel), so one thread can wait for any of several channels. A channel
    /// that cannot ring leaves such a thread to its wait's timeout.
    fn ring_on_arrival(&mut self, _bell: std::sync::Arc<Bell>) {}
}

//! An in-process duplex: two [`Channel`] ends joined by queues, for `protocol test`.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;

use serde_json::Value;

use super::{Channel, ChannelError};

/// One end of an in-memory duplex.
pub struct MemoryChannel {
    outgoing: Option<Sender<Value>>,
    incoming: Receiver<Value>,
    recv_timeout: Option<Duration>,
}

/// Two connected ends: what one sends, the other receives, in order.
pub fn duplex() -> (MemoryChannel, MemoryChannel) {
    let (a_tx, a_rx) = channel();
    let (b_tx, b_rx) = channel();
    let end = |outgoing, incoming| MemoryChannel {
        outgoing: Some(outgoing),
        incoming,
        recv_timeout: None,
    };
    (end(a_tx, b_rx), end(b_tx, a_rx))
}

impl MemoryChannel {
    /// Makes `recv` give up with [`ChannelError::Timeout`] after `timeout` of silence.
    pub fn with_recv_timeout(mut self, timeout: Duration) -> Self {
        self.recv_timeout = Some(timeout);
        self
    }
}

impl Channel for MemoryChannel {
    fn send(&mut self, frame: &Value) -> Result<(), ChannelError> {
        let sender = self
            .outgoing
            .as_ref()
            .ok_or_else(|| ChannelError::Closed("channel closed locally".into()))?;
        sender
            .send(frame.clone())
            .map_err(|_| ChannelError::Closed("peer is gone".into()))
    }

    fn recv(&mut self) -> Result<Value, ChannelError> {
        let closed = || ChannelError::Closed("peer closed the channel".into());
        match self.recv_timeout {
            None => self.incoming.recv().map_err(|_| closed()),
            Some(timeout) => self
                .incoming
                .recv_timeout(timeout)
                .map_err(|error| match error {
                    std::sync::mpsc::RecvTimeoutError::Timeout => ChannelError::Timeout,
                    std::sync::mpsc::RecvTimeoutError::Disconnected => closed(),
                }),
        }
    }

    fn close(&mut self) -> Result<(), ChannelError> {
        self.outgoing = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frames_queued_before_close_are_still_delivered() {
        let (mut host, mut guest) = duplex();
        host.send(&json!({"action": "a"})).unwrap();
        host.send(&json!({"action": "end"})).unwrap();
        host.close().unwrap();
        drop(host);
        assert_eq!(guest.recv().unwrap(), json!({"action": "a"}));
        assert_eq!(guest.recv().unwrap(), json!({"action": "end"}));
        assert!(matches!(guest.recv(), Err(ChannelError::Closed(_))));
    }

    #[test]
    fn a_silent_peer_times_out() {
        let (_host, guest) = duplex();
        let mut guest = guest.with_recv_timeout(Duration::from_millis(10));
        assert_eq!(guest.recv(), Err(ChannelError::Timeout));
    }
}

//! Ending a session connection without losing frames, with our peers and the reference's.
//!
//! The reference's heartbeat reader treats the end of our stream (`finish`) exactly like a
//! dropped connection: its next `recv` fails even when our final frame is still queued
//! (docs/p2p-wire.md#clean-shutdown). So we must not finish while the peer may still be consuming.
//! A reference peer tells us it is done only by shutting its node down; one of ours tells us
//! by opening a unidirectional "closing" stream (which the reference never accepts, so it
//! never sees it). Closing therefore goes:
//!
//! 1. announce "closing" on a uni stream;
//! 2. wait (at most the grace) until the peer announced closing too, finished, or left;
//! 3. finish our stream; if the peer announced closing (its engine has ended and reads
//!    nothing more), wait briefly for its end of stream (its last bytes) and close;
//! 4. otherwise wait briefly for the peer to acknowledge every byte (and, if it announced
//!    closing meanwhile, for its end of stream); then close the connection.
//!
//! Two of our peers thus end within a round trip or two; a reference peer as soon as it
//! shuts down; an absent-minded peer after the grace.

use std::time::Duration;

use iroh::endpoint::{Connection, ConnectionError, SendStream, StoppedError, VarInt};
use tokio::sync::watch;
use tokio::time::{Instant, timeout, timeout_at};

use super::ChannelError;

/// What we write on the uni stream that announces our close.
const CLOSING_MARKER: &[u8] = b"aigenora/closing";
/// How long step 3 and step 4 may take each.
const ACK_WAIT: Duration = Duration::from_secs(1);
/// Application close code for a clean end.
pub(crate) const CLOSE_DONE: u32 = 0;

/// The longest [`close_cleanly`] can take with the given grace.
pub(crate) fn close_budget(grace: Duration) -> Duration {
    grace + ACK_WAIT * 2
}

/// Watches for the peer's "closing" announcement and flips `closing` when it arrives.
pub(crate) async fn watch_peer_closing(connection: Connection, closing: watch::Sender<bool>) {
    while let Ok(mut stream) = connection.accept_uni().await {
        if let Ok(bytes) = stream.read_to_end(CLOSING_MARKER.len()).await
            && bytes == CLOSING_MARKER
        {
            closing.send_replace(true);
            return;
        }
    }
}

/// The two things the reader side tells the closing side.
pub(crate) struct PeerProgress {
    /// The peer finished its stream or the connection is gone.
    pub(crate) done: watch::Receiver<bool>,
    /// The peer announced that it is closing.
    pub(crate) closing: watch::Receiver<bool>,
}

/// Runs the close sequence described in the module docs. `Timeout` means the peer never
/// acknowledged our last bytes.
pub(crate) async fn close_cleanly(
    send: &mut SendStream,
    connection: &Connection,
    mut peer: PeerProgress,
    grace: Duration,
) -> Result<(), ChannelError> {
    let deadline = Instant::now() + grace;
    let _ = timeout_at(deadline, announce_closing(connection)).await;
    let _ = timeout_at(deadline, async {
        tokio::select! {
            _ = peer.done.wait_for(|done| *done) => {}
            _ = peer.closing.wait_for(|closing| *closing) => {}
        }
    })
    .await;
    let _ = send.finish();
    // A peer that announced closing has ended its engine (it announces only then): it reads
    // nothing more, so our last bytes need no acknowledgement, which it may hold back for its
    // whole acknowledgement delay. Its end of stream is all that is left to wait for.
    let acknowledged = if *peer.closing.borrow() {
        Ok(())
    } else {
        match timeout(ACK_WAIT, send.stopped()).await {
            Err(_) => Err(ChannelError::Timeout),
            Ok(Ok(_))
            | Ok(Err(StoppedError::ConnectionLost(ConnectionError::ApplicationClosed(_)))) => {
                Ok(())
            }
            Ok(Err(error)) => Err(ChannelError::Closed(format!(
                "connection lost before the peer got our last frames: {error}"
            ))),
        }
    };
    if *peer.closing.borrow() {
        let _ = timeout(ACK_WAIT, peer.done.wait_for(|done| *done)).await;
    }
    connection.close(VarInt::from_u32(CLOSE_DONE), b"session over");
    acknowledged
}

async fn announce_closing(connection: &Connection) {
    if let Ok(mut stream) = connection.open_uni().await
        && stream.write_all(CLOSING_MARKER).await.is_ok()
    {
        let _ = stream.finish();
    }
}

//! `notifications/progress` for a tool that waits: when the call carries
//! `_meta.progressToken`, the client hears every second how long it has waited (out of its
//! timeout) and what for, and at once when what it waits on changes; without a token it
//! hears nothing.

use std::time::{Duration, Instant};

use rmcp::model::{ProgressNotificationParam, ProgressToken, RequestMetaObject};
use rmcp::{Peer, RoleServer};

/// Longest quiet stretch between two notifications.
const EVERY: Duration = Duration::from_secs(1);

/// The progress of one waiting call.
pub struct Progress {
    to: Option<(Peer<RoleServer>, ProgressToken)>,
    started: Instant,
    total: Duration,
    last: Option<(Instant, String)>,
}

impl Progress {
    /// Progress for a call with `meta`, which waits at most `total`.
    pub fn new(meta: &RequestMetaObject, peer: Peer<RoleServer>, total: Duration) -> Progress {
        Progress {
            to: meta.get_progress_token().map(|token| (peer, token)),
            started: Instant::now(),
            total,
            last: None,
        }
    }

    /// Tells the client `message` when it is new, or when a second has passed since the
    /// last notification; progress is the seconds waited so far, total the timeout.
    pub async fn report(&mut self, message: String) {
        let Some((peer, token)) = &self.to else {
            return;
        };
        let now = Instant::now();
        let due = self
            .last
            .as_ref()
            .is_none_or(|(at, said)| *said != message || now - *at >= EVERY);
        if !due {
            return;
        }
        let progress = (now - self.started).as_secs_f64();
        let param = ProgressNotificationParam::new(token.clone(), progress)
            .with_total(self.total.as_secs_f64())
            .with_message(message.clone());
        // A client that stopped listening only loses its progress, not its answer.
        let _ = peer.notify_progress(param).await;
        self.last = Some((now, message));
    }
}

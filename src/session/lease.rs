//! The host's invitation while it waits for a guest: renewed on schedule (the server's
//! temporary refusals retried until the invitation would expire), and its end — expired,
//! cancelled or matched — told to the accept loop, so a host never waits for a guest who
//! can no longer come.

use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use crate::api::invitation::InvitationLease;
use crate::client::{RestClient, retrying};
use crate::records::{Event, EventLog};

/// How long an invitation is offered when the server's expiry cannot be read (the
/// server's default).
const DEFAULT_TTL: Duration = Duration::from_secs(300);

/// How the invitation is kept alive.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Renewal {
    /// Stop renewing after this long in total (`None`: never renew).
    pub(crate) renew_for: Option<Duration>,
    pub(crate) every: Duration,
}

/// The task keeping one invitation; it ends, with the reason, when the invitation does.
/// Dropping the lease stops it.
pub(crate) struct Lease {
    keeper: JoinHandle<String>,
}

impl Lease {
    /// Starts keeping `lease`, the server's answer to the invitation's creation.
    pub(crate) fn keep(
        client: RestClient,
        lease: &InvitationLease,
        events: EventLog,
        renewal: Renewal,
    ) -> Lease {
        let keeper = Keeper {
            client,
            post_id: lease.post_id.clone(),
            events,
            expires: local_expiry(&lease.expires_at),
        };
        Lease {
            keeper: tokio::spawn(keeper.run(renewal)),
        }
    }

    /// Why the invitation is no longer offered, once it is not (`None` if the keeper
    /// stopped abnormally). Cancel-safe; once it has returned, do not call it again.
    pub(crate) async fn ended(&mut self) -> Option<String> {
        (&mut self.keeper).await.ok()
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.keeper.abort();
    }
}

struct Keeper {
    client: RestClient,
    post_id: String,
    events: EventLog,
    /// When the server stops offering the invitation, on this machine's clock.
    expires: Instant,
}

impl Keeper {
    /// Renews every `every` until `renew_for` has passed, then waits for the expiry; a
    /// renewal the server refuses for good (matched, cancelled, expired) ends it at once.
    async fn run(mut self, renewal: Renewal) -> String {
        let started = Instant::now();
        if let Some(total) = renewal.renew_for {
            loop {
                tokio::time::sleep(renewal.every).await;
                if started.elapsed() >= total {
                    self.events.emit(Event::InvitationRenewStopped {
                        post_id: self.post_id.clone(),
                        reason: "invitation TTL reached".into(),
                    });
                    break;
                }
                let post_id = &self.post_id;
                match retrying(self.expires, || self.client.renew_invitation(post_id)).await {
                    Ok(lease) => {
                        self.expires = local_expiry(&lease.expires_at);
                        self.events.emit(Event::InvitationRenewed {
                            post_id: self.post_id.clone(),
                            expires_at: lease.expires_at,
                        });
                    }
                    Err(error) => {
                        self.events.emit(Event::InvitationRenewFailed {
                            post_id: self.post_id.clone(),
                            error: error.to_string(),
                        });
                        return format!("no longer offered: {error}");
                    }
                }
            }
        }
        tokio::time::sleep_until(self.expires.into()).await;
        "expired before a guest joined".into()
    }
}

/// The longest an invitation is believed to be offered without a renewal, whatever the
/// server says.
const LONGEST_TTL: Duration = Duration::from_secs(7 * 24 * 3600);

/// The moment an ISO 8601 expiry from the server falls on this machine's clock (the
/// server's default TTL from now when it cannot be read; at most [`LONGEST_TTL`] away).
fn local_expiry(expires_at: &str) -> Instant {
    let left = match chrono::DateTime::parse_from_rfc3339(expires_at) {
        Ok(at) => (at.with_timezone(&chrono::Utc) - chrono::Utc::now())
            .to_std()
            .unwrap_or(Duration::ZERO),
        Err(_) => DEFAULT_TTL,
    };
    Instant::now() + left.min(LONGEST_TTL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiries_are_read_on_this_clock_and_bounded() {
        let soon = (chrono::Utc::now() + chrono::Duration::seconds(60)).to_rfc3339();
        let left = local_expiry(&soon) - Instant::now();
        assert!(
            left > Duration::from_secs(55) && left <= Duration::from_secs(60),
            "{left:?}"
        );
        assert!(local_expiry("2001-01-01T00:00:00Z") <= Instant::now());
        let unreadable = local_expiry("soon") - Instant::now();
        assert!(
            unreadable > DEFAULT_TTL - Duration::from_secs(5),
            "{unreadable:?}"
        );
        let far = local_expiry("9999-12-31T23:59:59Z") - Instant::now();
        assert!(far <= LONGEST_TTL, "{far:?}");
    }
}

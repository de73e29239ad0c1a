//! What a member does when its leader's channel ends: it asks the server what became of the
//! room, then follows the room's leader again (the same one after a dropped channel, or a
//! new one that took over), takes the room over itself once the leader's lease has run out
//! and it can run the room's hooks, or ends with the room. A claim carries the newest
//! checkpoint the member verified, certified by the old leader; the server accepts one
//! claim per epoch and never one older than the checkpoint it knows reached a member; the
//! members that verified more than the claimant hand it their checkpoints as they come
//! back (`lead.rs`), so a room moves on from where its members were, never from further
//! back. In an `abort` room
//! any member's claim makes the server fail the room, and every member then ends.

use std::time::{Duration, Instant};

use rand::Rng;

use super::admission::verify_binding;
use crate::api::group::{CertifiedCheckpoint, ClaimLeader, Group, GroupStatus, RecoveryMode};
use crate::client::RestClient;
use crate::room::Replica;
use crate::transport::{RelayChoice, SessionEndpoint};

/// How long a member waits between looks at a room without a live leader.
const RETRY: Duration = Duration::from_millis(200);
/// The most a claim waits at random first, so members whose leader died together do not
/// all claim in the same instant.
const CLAIM_JITTER_MS: u64 = 250;

/// What the member does next.
pub enum Next {
    /// Dial this room's leader (its ticket is checked) and follow it.
    Follow(Group),
    /// This member won the claim: it leads the room's new epoch on `endpoint`.
    Lead(Claimed),
    /// The room is over (`closed` or `failed`).
    Ended(GroupStatus),
}

/// A won claim: the room of the new epoch, and the endpoint its ticket names.
pub struct Claimed {
    pub group: Group,
    pub endpoint: SessionEndpoint,
    pub ticket: String,
}

/// One member's way back into its room.
pub struct Recovery<'a> {
    pub client: &'a RestClient,
    pub group_id: &'a str,
    pub relay: &'a RelayChoice,
    /// Whether this member has the room's hooks (it can lead).
    pub can_lead: bool,
    pub recovery_mode: RecoveryMode,
}

impl Recovery<'_> {
    /// Looks at the room until there is a leader to follow, this member leads, or the room
    /// is over; gives up after `limit`.
    pub async fn next(&self, replica: &Replica, limit: Duration) -> Result<Next, String> {
        let deadline = Instant::now() + limit;
        let mut endpoint: Option<(SessionEndpoint, String)> = None;
        let mut last = String::from("no answer yet");
        while Instant::now() < deadline {
            match self.client.group(self.group_id).await {
                Err(error) => last = error.to_string(),
                Ok(group) => {
                    if !group.status.is_open() {
                        close(endpoint).await;
                        return Ok(Next::Ended(group.status));
                    }
                    if group.leader_epoch > replica.epoch || !group.lease_expired() {
                        match verify_binding(&group) {
                            Ok(()) => {
                                close(endpoint).await;
                                return Ok(Next::Follow(group));
                            }
                            Err(reason) => last = reason,
                        }
                    } else if let Some(checkpoint) = self.claimable(replica) {
                        tokio::time::sleep(Duration::from_millis(
                            rand::thread_rng().gen_range(0..CLAIM_JITTER_MS),
                        ))
                        .await;
                        if endpoint.is_none() {
                            let bound = SessionEndpoint::bind(self.relay)
                                .await
                                .map_err(|e| e.to_string())?;
                            let ticket = bound.ticket().await.map_err(|e| e.to_string())?;
                            endpoint = Some((bound, ticket.to_string()));
                        }
                        let ticket = &endpoint.as_ref().expect("bound above").1;
                        let claim = ClaimLeader::signed(
                            self.client.identity(),
                            &group,
                            &checkpoint,
                            ticket,
                        );
                        match self.client.claim_leader(self.group_id, &claim).await {
                            Ok(group) => {
                                let (endpoint, ticket) = endpoint.expect("bound above");
                                return Ok(Next::Lead(Claimed {
                                    group,
                                    endpoint,
                                    ticket,
                                }));
                            }
                            Err(error) => last = error.to_string(),
                        }
                    } else {
                        last =
                            "the leader's lease ran out; waiting for a member to take over".into();
                    }
                }
            }
            tokio::time::sleep(RETRY).await;
        }
        close(endpoint).await;
        Err(format!(
            "the room had no leader to follow for {} s ({last})",
            limit.as_secs()
        ))
    }

    /// The checkpoint this member would claim with: its newest verified one, when it can
    /// lead (or in an `abort` room, where a claim only ends the room).
    fn claimable(&self, replica: &Replica) -> Option<CertifiedCheckpoint> {
        if !self.can_lead && self.recovery_mode != RecoveryMode::Abort {
            return None;
        }
        let checkpoint = replica.checkpoint.as_ref()?;
        Some(CertifiedCheckpoint {
            seq: checkpoint.seq,
            checkpoint_hash: checkpoint.checkpoint_hash.clone(),
            frame_hash: checkpoint.frame_hash.clone(),
            membership_version: checkpoint.membership_version,
            signature: checkpoint.checkpoint_signature.clone(),
        })
    }
}

async fn close(endpoint: Option<(SessionEndpoint, String)>) {
    if let Some((endpoint, _)) = endpoint {
        endpoint.shutdown().await;
    }
}

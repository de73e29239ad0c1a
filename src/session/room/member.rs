//! A member following its leader on one channel: every envelope is verified by the member's
//! [`Replica`] before anything is believed, and acknowledged; the member's own actions go
//! out one at a time, each resent with the same `action_id` every [`RESEND`] until its
//! receipt arrives (accepted or duplicate: done; rejected: dropped, unless retryable). The
//! first envelope on a channel is a bootstrap (it may jump ahead, never back).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::identity::Identity;
use crate::records::ReceiptSource;
use crate::room::Replica;
use crate::room::replica::Verified;
use crate::transport::{Bell, Channel, ChannelError};
use crate::wire::group::{self, Ack, GroupError, Input, Receipt, ReceiptStatus};

pub use super::outbox::{Outbox, Pending};

/// How often an unanswered action is sent again.
pub const RESEND: Duration = Duration::from_secs(1);
/// How long a member waits for its channel or its action queue to ring before it looks at
/// both again (an action from a queue that cannot ring waits this long at most).
const TICK: Duration = Duration::from_millis(5);
/// How long a member waits on one channel for the leader's first envelope after admission
/// (a room still in its lobby sends none); then the channel counts as lost, and the member
/// asks the server whether the room and its leader are still there before it dials again.
pub const FIRST_ENVELOPE: Duration = Duration::from_secs(60);
/// How long a member that saw the room end still reads for the receipt of its action in
/// flight (a leader may send the last step before that action's receipt).
const LAST_RECEIPT_WAIT: Duration = Duration::from_secs(2);

/// Where the member's own actions come from (a person, an agent, a script).
pub trait ActionSource {
    /// The next action to submit, if one is waiting (never blocks).
    fn next_action(&mut self) -> Option<Map<String, Value>>;
    /// Where the queue stands just past the last action handed out, for a queue kept in a
    /// file (`None` for one in memory).
    fn position(&self) -> Option<u64> {
        None
    }
    /// Why this side stopped taking part (a table seat's window ran out), once it has.
    fn stopped(&self) -> Option<String> {
        None
    }
    /// Rings `bell` from now on when an action is put in the queue, so the member sends it
    /// at once; a queue that cannot ring is looked at every [`TICK`].
    fn ring_on_action(&mut self, _bell: Arc<Bell>) {}
}

impl ActionSource for std::collections::VecDeque<Map<String, Value>> {
    fn next_action(&mut self) -> Option<Map<String, Value>> {
        self.pop_front()
    }
}

/// What the member sees happen, as it happens.
pub trait MemberEvents {
    /// A verified step; `replica` holds the view and checkpoint it decoded to.
    fn step(&mut self, verified: &Verified, replica: &Replica);
    /// How one of this member's actions ended, and who said so.
    fn receipt(&mut self, receipt: &Receipt, source: ReceiptSource, action: &Map<String, Value>);
    /// This member checked a hand it was dealt (before the step that opened it is recorded).
    fn deal_checked(&mut self, _verdict: &super::fair_deal::DealVerdict) {}
}

/// How following ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowEnd {
    /// The room completed, with its outcome.
    Completed(Option<String>),
    /// The leader's channel closed (the caller checks the server: failover or the end).
    LeaderGone(String),
    /// This side stopped taking part, and why (its seat's decision window ran out).
    Stopped(String),
}

/// One member on one channel.
pub struct Follower<'a> {
    pub channel: &'a mut dyn Channel,
    pub replica: &'a mut Replica,
    pub identity: &'a Identity,
    pub actions: &'a mut dyn ActionSource,
    pub events: &'a mut dyn MemberEvents,
    outbox: &'a mut Outbox,
    /// Rung by the channel on each arrival and by the action queue on each action.
    doorbell: Arc<Bell>,
}

impl<'a> Follower<'a> {
    pub fn new(
        channel: &'a mut dyn Channel,
        replica: &'a mut Replica,
        identity: &'a Identity,
        actions: &'a mut dyn ActionSource,
        events: &'a mut dyn MemberEvents,
        outbox: &'a mut Outbox,
    ) -> Follower<'a> {
        outbox.rewind();
        let doorbell = Arc::new(Bell::default());
        channel.ring_on_arrival(Arc::clone(&doorbell));
        actions.ring_on_action(Arc::clone(&doorbell));
        Follower {
            channel,
            replica,
            identity,
            actions,
            events,
            outbox,
            doorbell,
        }
    }

    /// Follows until the room completes or the channel ends; a refused envelope or a leader's
    /// `error` is an `Err` with its reason (the member no longer trusts this channel).
    pub fn run(&mut self) -> Result<FollowEnd, String> {
        let started = Instant::now();
        let mut bootstrapped = false;
        loop {
            if let Some(reason) = self.actions.stopped() {
                return Ok(FollowEnd::Stopped(reason));
            }
            if bootstrapped {
                if let Err(lost) = self.submit() {
                    return Ok(FollowEnd::LeaderGone(lost));
                }
            } else if started.elapsed() > FIRST_ENVELOPE {
                return Ok(FollowEnd::LeaderGone(format!(
                    "no envelope from the leader within {} s",
                    FIRST_ENVELOPE.as_secs()
                )));
            }
            let frame = match self.channel.recv_timeout(Duration::ZERO) {
                Ok(Some(frame)) => frame,
                Ok(None) => {
                    self.doorbell.wait(TICK);
                    continue;
                }
                Err(ChannelError::Closed(reason)) => return Ok(FollowEnd::LeaderGone(reason)),
                Err(error) => return Err(error.to_string()),
            };
            match group::kind_of(&frame) {
                Some(kind) if group::ENVELOPE_KINDS.contains(&kind) => {
                    let verified = self
                        .replica
                        .apply(frame, !bootstrapped)
                        .map_err(|e| e.to_string())?;
                    bootstrapped = true;
                    let Some(verified) = verified else { continue };
                    self.acknowledge(&verified);
                    self.events.step(&verified, self.replica);
                    if verified.envelope.core.completed {
                        self.settle_last_action();
                        return Ok(FollowEnd::Completed(verified.envelope.core.outcome.clone()));
                    }
                }
                Some("receipt") => self.settle(&frame)?,
                Some("error") => {
                    let reason = GroupError::parse(&frame)
                        .map(|e| e.reason)
                        .unwrap_or_else(|e| e.to_string());
                    return Err(format!(
                        "the leader refused this member: {}",
                        crate::terminal::escape_control(&reason)
                    ));
                }
                // Pongs, and anything this build does not know, change nothing.
                _ => {}
            }
        }
    }

    /// Acknowledges a verified step. An ack that cannot be sent is not the end yet: the
    /// frames the leader sent before it closed (the room's last one among them) are still
    /// read, and the channel's end is seen once they are.
    fn acknowledge(&mut self, verified: &Verified) {
        let ack = Ack {
            group_id: self.replica.group_id.clone(),
            leader_epoch: self.replica.epoch,
            seq: verified.envelope.core.seq,
            frame_hash: verified.envelope.frame_hash.clone(),
            checkpoint_hash: self
                .replica
                .checkpoint
                .as_ref()
                .map(|c| c.checkpoint_hash.clone())
                .unwrap_or_default(),
        };
        let _ = self.channel.send(&ack.to_value());
    }

    /// Sends the next action when none is in flight, or resends the one in flight.
    fn submit(&mut self) -> Result<(), String> {
        if self.outbox.pending().is_none() {
            let Some(action) = self.actions.next_action() else {
                return Ok(());
            };
            let accepted = self
                .replica
                .checkpoint
                .as_ref()
                .and_then(|c| {
                    c.state
                        .last_client_seq
                        .get(self.identity.public_key())
                        .copied()
                })
                .unwrap_or(0);
            self.outbox.start(Pending {
                client_seq: accepted + 1,
                action_id: super::admission::fresh_hex(),
                action,
                end_offset: self.actions.position(),
                sent_at: None,
            });
        }
        let pending = self.outbox.pending_mut().expect("set above");
        if pending.sent_at.is_some_and(|at| at.elapsed() < RESEND) {
            return Ok(());
        }
        let input = Input {
            group_id: self.replica.group_id.clone(),
            leader_epoch: self.replica.epoch,
            actor_public_key: self.identity.public_key().to_string(),
            client_seq: pending.client_seq,
            action_id: pending.action_id.clone(),
            action: pending.action.clone(),
        };
        pending.sent_at = Some(Instant::now());
        self.channel
            .send(&input.to_value())
            .map_err(|e| format!("sending an action: {e}"))
    }

    /// The room ended with an action of this member in flight, often the one that ended it:
    /// a leader may send that last step before the action's receipt (the reference does), so
    /// receipts are still read, for at most [`LAST_RECEIPT_WAIT`] or until the leader closes,
    /// and the action is settled and recorded instead of lost. A leader that stops before
    /// the receipt leaves the last checkpoint to say it: the action counts as accepted when
    /// that checkpoint's last action number of this member reached it.
    fn settle_last_action(&mut self) {
        self.await_last_receipt();
        let Some(pending) = self.outbox.pending().filter(|p| p.sent_at.is_some()) else {
            return;
        };
        let last_taken = self.replica.checkpoint.as_ref().and_then(|c| {
            let seqs = &c.state.last_client_seq;
            seqs.get(self.identity.public_key()).copied()
        });
        if last_taken.is_none_or(|seq| seq < pending.client_seq) {
            return;
        }
        let receipt = Receipt {
            status: ReceiptStatus::Accepted,
            client_seq: Some(pending.client_seq),
            authority_seq: None,
            frame_hash: None,
            completed: Some(true),
            action_id: Some(pending.action_id.clone()),
            reason: None,
            retryable: None,
        };
        let action = pending.action.clone();
        self.events
            .receipt(&receipt, ReceiptSource::TerminalCheckpoint, &action);
        self.outbox.settle();
    }

    /// Reads the leader's last frames for the receipt of the action in flight.
    fn await_last_receipt(&mut self) {
        let deadline = Instant::now() + LAST_RECEIPT_WAIT;
        while self.outbox.pending().is_some_and(|p| p.sent_at.is_some()) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.channel.recv_timeout(left) {
                Ok(Some(frame)) if group::kind_of(&frame) == Some("receipt") => {
                    if self.settle(&frame).is_err() {
                        return;
                    }
                }
                Ok(Some(_)) if !left.is_zero() => {}
                _ => return,
            }
        }
    }

    /// A receipt for the action in flight settles it; any other receipt is ignored.
    fn settle(&mut self, frame: &Value) -> Result<(), String> {
        let receipt = Receipt::parse(frame).map_err(|e| e.to_string())?;
        let Some(pending) = self.outbox.pending() else {
            return Ok(());
        };
        if receipt.action_id.as_deref() != Some(pending.action_id.as_str()) {
            return Ok(());
        }
        let keep = receipt.status == ReceiptStatus::Rejected && receipt.retryable == Some(true);
        self.events
            .receipt(&receipt, ReceiptSource::Leader, &pending.action);
        if !keep {
            self.outbox.settle();
        }
        Ok(())
    }
}

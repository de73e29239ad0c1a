//! The leader's hub: one channel per member, one authority. Each member's inputs are applied
//! in the order they arrive, every step goes to every member with a channel, each input gets
//! its receipt (carrying its `action_id`), and acknowledgements feed the authority's record
//! of which checkpoint reached a successor. Nothing a member does can hold the room up: the
//! hub never waits on a member's channel (frames are posted, a channel is closed on a thread
//! of its own), reads a bounded number of frames from each per pass, and throttles a
//! member's inputs to a budget. A member whose channel breaks or carries a malformed frame,
//! that acknowledges nothing for [`ACK_TIMEOUT`] while it has steps to acknowledge, that falls [`MAX_UNACKED_STEPS`]
//! behind, or that stops reading, is detached with the reason (it may come back and
//! re-admit).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::room::authority::{Authority, Envelopes, HISTORY};
use crate::room::hooks::RoomHooks;
use crate::transport::{Bell, Channel, ChannelError};
use crate::wire::group::{self, Ack, GroupError, Input, Ping, Pong};

/// How long a member may leave a step unacknowledged before it is detached.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(15);
/// How many steps a member's acknowledgements may lag behind what it was sent: beyond the
/// authority's checkpoint history its acks could not name a kept checkpoint anyway.
pub const MAX_UNACKED_STEPS: u64 = HISTORY as u64;
/// The largest frame a member may send its leader: an input of the largest
/// `max_action_bytes` a room may set (64 KiB), with room for its envelope and a less
/// compact encoding. Admission frames are far smaller.
pub const MEMBER_FRAME_BYTES: usize = 128 * 1024;
/// Inputs a member may send at once before its budget runs out...
pub const INPUT_BURST: f64 = 20.0;
/// ...and how fast the budget refills (far above what a person or an agent acting in turn
/// needs, below what one leader can apply for a full room): an input beyond it is rejected
/// unapplied, as retryable (a member with one action in flight resends it a second later).
pub const INPUTS_PER_SECOND: f64 = 10.0;
/// How long a pass that found nothing waits for any member's channel to ring.
const WAIT: Duration = Duration::from_millis(2);
/// Frames read from one member per pass, so a flood cannot starve the others.
const FRAMES_PER_PASS: usize = 16;

/// One attached member.
struct Attached {
    channel: Box<dyn Channel>,
    /// Since when it has had steps to acknowledge without acknowledging any.
    unacked_since: Option<Instant>,
    /// The last step it was sent.
    last_sent: u64,
    /// The newest step it acknowledged with the frame and checkpoint the leader keeps.
    acked: u64,
    /// Inputs it may still send now, and when that was worked out.
    budget: (f64, Instant),
}

impl Attached {
    /// Takes one input from the budget; `false` when the member is over it.
    fn spend(&mut self) -> bool {
        let (tokens, at) = self.budget;
        let now = Instant::now();
        let tokens =
            (tokens + now.duration_since(at).as_secs_f64() * INPUTS_PER_SECOND).min(INPUT_BURST);
        let allowed = tokens >= 1.0;
        self.budget = (if allowed { tokens - 1.0 } else { tokens }, now);
        allowed
    }

    /// Why the member must go, if its acknowledgements say so.
    fn lagging(&self) -> Option<String> {
        if self.last_sent.saturating_sub(self.acked) > MAX_UNACKED_STEPS {
            return Some(format!(
                "unacked_flood: {} steps sent after its last acknowledgement (at most {MAX_UNACKED_STEPS})",
                self.last_sent - self.acked
            ));
        }
        self.unacked_since
            .is_some_and(|since| since.elapsed() > ACK_TIMEOUT)
            .then(|| "frame_ack_timeout".to_string())
    }
}

/// Why a member was detached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detached {
    pub public_key: String,
    pub reason: String,
}

/// The leader's channels and its authority.
pub struct Hub<H: RoomHooks> {
    pub authority: Authority<H>,
    members: HashMap<String, Attached>,
    pub detached: Vec<Detached>,
    /// Rung by every attached channel when a frame arrives.
    doorbell: Arc<Bell>,
}

impl<H: RoomHooks> Hub<H> {
    pub fn new(authority: Authority<H>) -> Hub<H> {
        Hub {
            authority,
            members: HashMap::new(),
            detached: Vec::new(),
            doorbell: Arc::new(Bell::default()),
        }
    }

    /// Attaches an admitted member's channel and sends it a bootstrap of the current step;
    /// a key that is not an active member of the room is refused on its channel.
    pub fn attach(
        &mut self,
        public_key: &str,
        mut channel: Box<dyn Channel>,
    ) -> Result<(), String> {
        let bootstrap = match self.authority.bootstrap(public_key) {
            Ok(Some(bootstrap)) => bootstrap,
            Ok(None) => {
                let reason = "not an active member of the room";
                self.refuse(channel, reason);
                return Err(reason.into());
            }
            Err(error) => {
                self.refuse(channel, &error.to_string());
                return Err(error.to_string());
            }
        };
        if let Err(error) = channel.post(&bootstrap) {
            close_aside(channel);
            return Err(error.to_string());
        }
        if let Some(previous) = self.members.remove(public_key) {
            close_aside(previous.channel);
        }
        channel.ring_on_arrival(Arc::clone(&self.doorbell));
        let seq = self.authority.seq;
        self.members.insert(
            public_key.to_string(),
            Attached {
                channel,
                unacked_since: Some(Instant::now()),
                last_sent: seq,
                acked: seq,
                budget: (INPUT_BURST, Instant::now()),
            },
        );
        Ok(())
    }

    /// Tells a member on `channel` why the room will not have it, and closes the channel.
    pub fn refuse(&self, mut channel: Box<dyn Channel>, reason: &str) {
        let error = GroupError {
            reason: reason.to_string(),
        };
        let _ = channel.post(&error.to_value());
        close_aside(channel);
    }

    /// How many members have a channel.
    pub fn attached(&self) -> usize {
        self.members.len()
    }

    /// One pass over every channel: inputs applied, acks recorded, pings answered, members
    /// that broke, misbehaved or fell behind detached. When nothing had arrived, it waits (a
    /// little) for any channel to ring first.
    pub fn poll(&mut self) {
        if !self.pass() {
            self.doorbell.wait(WAIT);
        }
    }

    fn pass(&mut self) -> bool {
        let keys: Vec<String> = self.members.keys().cloned().collect();
        let mut busy = false;
        for key in keys {
            for _ in 0..FRAMES_PER_PASS {
                let Some(member) = self.members.get_mut(&key) else {
                    break;
                };
                match member.channel.recv_timeout(Duration::ZERO) {
                    Ok(Some(frame)) => {
                        busy = true;
                        self.handle(&key, &frame);
                    }
                    Ok(None) => break,
                    Err(ChannelError::Closed(reason)) => {
                        self.detach(&key, format!("channel closed: {reason}"));
                        break;
                    }
                    Err(error) => {
                        self.detach(&key, error.to_string());
                        break;
                    }
                }
            }
            if let Some(reason) = self.members.get(&key).and_then(Attached::lagging) {
                self.detach(&key, reason);
            }
        }
        busy
    }

    /// One frame from a member. A frame of a kind the hub serves that does not parse ends
    /// the member's channel; kinds it does not serve (a newer build's, peer channels) are
    /// ignored.
    fn handle(&mut self, key: &str, frame: &Value) {
        let parsed = match group::kind_of(frame) {
            Some("input") => Input::parse(frame).map(|input| self.input(key, input)),
            Some("ack") => Ack::parse(frame).map(|ack| self.ack(key, &ack)),
            Some("ping") => Ping::parse(frame).map(|ping| {
                let pong = Pong {
                    group_id: self.authority.group_id.clone(),
                    leader_epoch: self.authority.epoch,
                    nonce: ping.nonce,
                };
                self.send(key, &pong.to_value());
            }),
            Some(_) => Ok(()),
            None => {
                self.detach(key, "a frame without a _group kind".into());
                Ok(())
            }
        };
        if let Err(error) = parsed {
            self.detach(key, error.to_string());
        }
    }

    /// An acknowledgement counts only when it names a step this leader sent and keeps.
    fn ack(&mut self, key: &str, ack: &Ack) {
        let ours = ack.group_id == self.authority.group_id
            && ack.leader_epoch == self.authority.epoch
            && self.authority.acknowledge(
                key,
                ack.seq,
                &ack.frame_hash,
                Some(&ack.checkpoint_hash),
            );
        if let Some(member) = self.members.get_mut(key)
            && ours
        {
            member.acked = member.acked.max(ack.seq);
            // Caught up, or at least moving: the clock restarts for what is still unacked.
            member.unacked_since = (member.acked < member.last_sent).then(Instant::now);
        }
    }

    fn input(&mut self, key: &str, input: Input) {
        let within_budget = self.members.get_mut(key).is_none_or(Attached::spend);
        let refusal = if within_budget {
            self.misdirected(key, &input)
        } else {
            Some((
                format!("input flood: above {INPUTS_PER_SECOND} inputs per second; resend later"),
                true,
            ))
        };
        let mut receipt = match refusal {
            Some((reason, retryable)) => json!({"_group": "receipt", "status": "rejected",
                "client_seq": input.client_seq, "reason": reason, "retryable": retryable}),
            None => {
                let (envelopes, receipt) =
                    self.authority
                        .apply_input(key, input.client_seq, &input.action);
                self.broadcast(&envelopes);
                receipt.to_wire()
            }
        };
        receipt["action_id"] = Value::String(input.action_id);
        self.send(key, &receipt);
    }

    /// Why an input does not belong to this room, epoch and member, and whether a resend
    /// may fix it (only a stale epoch: the member follows the new one and sends again).
    fn misdirected(&self, key: &str, input: &Input) -> Option<(String, bool)> {
        if input.group_id != self.authority.group_id {
            return Some(("the input is for another room".into(), false));
        }
        if input.leader_epoch != self.authority.epoch {
            return Some((
                format!(
                    "the input is for epoch {}, the room is at epoch {}",
                    input.leader_epoch, self.authority.epoch
                ),
                true,
            ));
        }
        if input.actor_public_key != key {
            return Some((
                "the input names another actor than this channel's member".into(),
                false,
            ));
        }
        if !group::is_hex_32(&input.action_id) {
            return Some(("action_id is not 32 lowercase hex characters".into(), false));
        }
        None
    }

    /// Sends one step to every attached member (its own envelope).
    pub fn broadcast(&mut self, envelopes: &Envelopes) {
        for (key, envelope) in envelopes {
            if self.members.contains_key(key) {
                self.send(key, envelope);
                if let Some(member) = self.members.get_mut(key) {
                    member.last_sent = envelope["seq"].as_u64().unwrap_or(member.last_sent);
                    member.unacked_since.get_or_insert_with(Instant::now);
                }
            }
        }
    }

    /// Posts one frame to a member; one that does not take it (it stopped reading, its
    /// channel broke) is detached.
    fn send(&mut self, key: &str, frame: &Value) {
        let failed = match self.members.get_mut(key) {
            Some(member) => member.channel.post(frame).err(),
            None => None,
        };
        if let Some(error) = failed {
            self.detach(key, error.to_string());
        }
    }

    /// Lets a member's channel go, with the reason (recorded from [`Hub::detached`]).
    pub fn detach(&mut self, key: &str, reason: String) {
        if let Some(member) = self.members.remove(key) {
            close_aside(member.channel);
            self.detached.push(Detached {
                public_key: key.to_string(),
                reason,
            });
        }
    }

    /// Closes every channel, all at once (the room ended).
    pub fn close(&mut self) {
        let closing: Vec<_> = self
            .members
            .drain()
            .map(|(_, member)| close_aside(member.channel))
            .collect();
        for thread in closing.into_iter().flatten() {
            let _ = thread.join();
        }
    }
}

/// Closes a channel on a thread of its own: a clean close waits for the peer (bounded by
/// the channel), and the room does not wait with it.
fn close_aside(mut channel: Box<dyn Channel>) -> Option<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("room-channel-close".into())
        .spawn(move || {
            let _ = channel.close();
        })
        .ok()
}

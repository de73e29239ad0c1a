//! The leader's hub: one channel per member, one authority. Each member's inputs are applied
//! in the order they arrive, every step goes to every member with a channel, each input gets
//! its receipt (carrying its `action_id`), and acknowledgements feed the authority's record
//! of which checkpoint reached a successor. A member whose channel breaks, or that leaves a
//! step unacknowledged for [`ACK_TIMEOUT`], is detached (it may come back and re-admit).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::room::authority::{Authority, Envelopes};
use crate::room::hooks::RoomHooks;
use crate::transport::{Channel, ChannelError};
use crate::wire::group::{self, Ack, GroupError, Input, Ping, Pong};

/// How long a member may leave a step unacknowledged before it is detached.
pub const ACK_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the hub waits on each channel per pass.
const POLL: Duration = Duration::from_millis(1);
/// Frames read from one member per pass, so a flood cannot starve the others.
const FRAMES_PER_PASS: usize = 16;

/// One attached member.
struct Attached {
    channel: Box<dyn Channel>,
    /// When the oldest step it has not acknowledged was sent.
    unacked_since: Option<Instant>,
    /// The last step it was sent.
    last_sent: u64,
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
}

impl<H: RoomHooks> Hub<H> {
    pub fn new(authority: Authority<H>) -> Hub<H> {
        Hub {
            authority,
            members: HashMap::new(),
            detached: Vec::new(),
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
        channel.send(&bootstrap).map_err(|e| e.to_string())?;
        self.members.insert(
            public_key.to_string(),
            Attached {
                channel,
                unacked_since: Some(Instant::now()),
                last_sent: self.authority.seq,
            },
        );
        Ok(())
    }

    /// Tells a member on `channel` why the room will not have it, and closes the channel.
    pub fn refuse(&self, mut channel: Box<dyn Channel>, reason: &str) {
        let error = GroupError {
            reason: reason.to_string(),
        };
        let _ = channel.send(&error.to_value());
        let _ = channel.close();
    }

    /// How many members have a channel.
    pub fn attached(&self) -> usize {
        self.members.len()
    }

    /// One pass over every channel: inputs applied, acks recorded, pings answered, members
    /// that broke or fell silent detached. Returns whether anything arrived.
    pub fn poll(&mut self) -> bool {
        let keys: Vec<String> = self.members.keys().cloned().collect();
        let mut busy = false;
        for key in keys {
            for _ in 0..FRAMES_PER_PASS {
                let Some(member) = self.members.get_mut(&key) else {
                    break;
                };
                match member.channel.recv_timeout(POLL) {
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
            let silent = self
                .members
                .get(&key)
                .and_then(|m| m.unacked_since)
                .is_some_and(|since| since.elapsed() > ACK_TIMEOUT);
            if silent {
                self.detach(&key, "frame_ack_timeout".into());
            }
        }
        busy
    }

    fn handle(&mut self, key: &str, frame: &Value) {
        match group::kind_of(frame) {
            Some("input") => match Input::parse(frame) {
                Ok(input) => self.input(key, input),
                Err(error) => self.detach(key, error.to_string()),
            },
            Some("ack") => {
                if let Ok(ack) = Ack::parse(frame) {
                    self.authority.acknowledge(
                        key,
                        ack.seq,
                        &ack.frame_hash,
                        Some(&ack.checkpoint_hash),
                    );
                    if let Some(member) = self.members.get_mut(key)
                        && ack.seq >= member.last_sent
                    {
                        member.unacked_since = None;
                    }
                }
            }
            Some("ping") => {
                if let Ok(ping) = Ping::parse(frame) {
                    let pong = Pong {
                        group_id: self.authority.group_id.clone(),
                        leader_epoch: self.authority.epoch,
                        nonce: ping.nonce,
                    };
                    self.send(key, &pong.to_value());
                }
            }
            _ => {}
        }
    }

    fn input(&mut self, key: &str, input: Input) {
        let retryable = input.group_id != self.authority.group_id
            || input.leader_epoch != self.authority.epoch
            || input.actor_public_key != key;
        let mut receipt = if retryable || !group::is_hex_32(&input.action_id) {
            serde_json::json!({"_group": "receipt", "status": "rejected", "client_seq": input.client_seq,
                "reason": "the input is not for this room, epoch and member", "retryable": retryable})
        } else {
            let (envelopes, receipt) =
                self.authority
                    .apply_input(key, input.client_seq, &input.action);
            self.broadcast(&envelopes);
            receipt.to_wire()
        };
        receipt["action_id"] = Value::String(input.action_id);
        self.send(key, &receipt);
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

    fn send(&mut self, key: &str, frame: &Value) {
        let failed = match self.members.get_mut(key) {
            Some(member) => member.channel.send(frame).err(),
            None => None,
        };
        if let Some(error) = failed {
            self.detach(key, error.to_string());
        }
    }

    fn detach(&mut self, key: &str, reason: String) {
        if let Some(mut member) = self.members.remove(key) {
            let _ = member.channel.close();
            self.detached.push(Detached {
                public_key: key.to_string(),
                reason,
            });
        }
    }

    /// Closes every channel (the room ended).
    pub fn close(&mut self) {
        for (_, mut member) in self.members.drain() {
            let _ = member.channel.close();
        }
    }
}

//! Hostile members of a room over the real network: our server, our `host` process leading
//! the Community Room, one honest member of ours (`join`), and members written here that
//! are admitted properly (`member_admit` against the server, over a bare iroh stream) and
//! then misbehave on their channel — an oversized frame, bad JSON, a malformed input, a
//! replayed input, out-of-sequence and misdirected inputs, a channel that falls silent, a
//! flood of inputs, a member that never reads while the leader sends — and strangers that
//! dial and stall their admission. Each costs that member a refusal (its receipt says why)
//! or a detach (the leader's events say why), never the room: the honest member keeps
//! acting and verifies every step.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use aigenora::api::group::Group;
use aigenora::identity::Identity;
use aigenora::session::room::admission::{JOIN_TIMEOUT, MAX_ADMITTING, fresh_hex, member_admit};
use aigenora::session::room::leader::{INPUT_BURST, INPUTS_PER_SECOND, MEMBER_FRAME_BYTES};
use aigenora::session::room::rest::RestControl;
use aigenora::transport::{Channel, ChannelError, Ticket};
use serde_json::{Value, json};
use tokio::runtime::{Handle, Runtime};

use crate::support::net::{Agent, Net, SessionFiles, wait_until};
use crate::support::process::Proc;
use crate::support::reference::reference_contract;
use crate::support::transport::{RawPeer, raw_guest, runtime};

const LIMIT: Duration = Duration::from_secs(60);

/// A member's channel over a bare iroh stream: JSON lines both ways, and any bytes at all.
struct Wire {
    handle: Handle,
    peer: RawPeer,
    buffered: Vec<u8>,
}

impl Wire {
    fn write(&mut self, bytes: &[u8]) -> Result<(), ChannelError> {
        self.handle
            .block_on(self.peer.send.write_all(bytes))
            .map_err(|e| ChannelError::Closed(e.to_string()))
    }
}

impl Channel for Wire {
    fn send(&mut self, frame: &Value) -> Result<(), ChannelError> {
        let mut line = serde_json::to_vec(frame).unwrap();
        line.push(b'\n');
        self.write(&line)
    }

    fn recv(&mut self) -> Result<Value, ChannelError> {
        self.recv_timeout(LIMIT)?.ok_or(ChannelError::Timeout)
    }

    fn recv_timeout(&mut self, timeout: Duration) -> Result<Option<Value>, ChannelError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(end) = self.buffered.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buffered.drain(..=end).collect();
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                return serde_json::from_slice(&line)
                    .map(Some)
                    .map_err(|e| ChannelError::Malformed(e.to_string()));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let mut chunk = [0u8; 64 * 1024];
            let read = self.handle.block_on(async {
                tokio::time::timeout(left, self.peer.recv.read(&mut chunk)).await
            });
            match read {
                Ok(Ok(Some(n))) => self.buffered.extend_from_slice(&chunk[..n]),
                Ok(other) => return Err(ChannelError::Closed(format!("{other:?}"))),
                Err(_) => return Ok(None),
            }
        }
    }
}

/// A member admitted by the leader, on its own wire.
pub(crate) struct Hostile {
    identity: Identity,
    group: Group,
    wire: Wire,
    /// Receipts it read so far.
    receipts: Vec<Value>,
}

impl Hostile {
    fn admitted(net: &Net, rt: &Runtime, post_id: &str, name: &str) -> Hostile {
        Hostile::admit(net, rt, post_id, name, false)
    }

    /// A member that announces fair deals in its `ready` frame (and then does only what the
    /// test makes it do).
    pub(crate) fn announcing_fair_deals(
        net: &Net,
        rt: &Runtime,
        post_id: &str,
        name: &str,
    ) -> Hostile {
        Hostile::admit(net, rt, post_id, name, true)
    }

    fn admit(net: &Net, rt: &Runtime, post_id: &str, name: &str, fair_deal: bool) -> Hostile {
        let (identity, client) = rt.block_on(net.server.registered(name));
        let group = rt.block_on(client.group_by_post(post_id)).unwrap();
        let ticket: Ticket = group.iroh_ticket.parse().unwrap();
        let peer = rt.block_on(raw_guest(&ticket));
        let mut wire = Wire {
            handle: rt.handle().clone(),
            peer,
            buffered: Vec::new(),
        };
        let control = RestControl::new(client, rt.handle().clone());
        member_admit(
            &mut wire,
            &control,
            &identity,
            &group,
            "autonomous",
            None,
            fair_deal,
        )
        .unwrap_or_else(|e| panic!("{name} is admitted: {e}"));
        Hostile {
            identity,
            group,
            wire,
            receipts: Vec::new(),
        }
    }

    pub(crate) fn key(&self) -> String {
        self.identity.public_key().to_string()
    }

    fn input(&self, client_seq: u64, action_id: &str, text: &str) -> Value {
        json!({"_group": "input", "group_id": self.group.group_id, "leader_epoch": 0,
            "actor_public_key": self.key(), "client_seq": client_seq, "action_id": action_id,
            "action": {"kind": "send", "text": text}})
    }

    /// Reads what is waiting (for at most `wait`), acknowledging every envelope and keeping
    /// every receipt; `false` once the channel is gone.
    pub(crate) fn drain(&mut self, wait: Duration) -> bool {
        let mut wait = wait;
        loop {
            let frame = match self.wire.recv_timeout(wait) {
                Ok(Some(frame)) => frame,
                Ok(None) => return true,
                Err(_) => return false,
            };
            wait = Duration::from_millis(1);
            match frame["_group"].as_str() {
                Some("receipt") => self.receipts.push(frame),
                Some("snapshot" | "frame" | "membership" | "epoch_start") => {
                    let ack = json!({"_group": "ack", "group_id": frame["group_id"],
                        "leader_epoch": frame["leader_epoch"], "seq": frame["seq"],
                        "frame_hash": frame["frame_hash"], "checkpoint_hash": frame["checkpoint_hash"]});
                    if self.wire.send(&ack).is_err() {
                        return false;
                    }
                }
                _ => {}
            }
        }
    }

    /// Sends `input` and returns its receipt (acknowledging envelopes meanwhile).
    fn submit(&mut self, input: Value) -> Value {
        let action_id = input["action_id"].clone();
        self.wire.send(&input).unwrap();
        let deadline = Instant::now() + LIMIT;
        while Instant::now() < deadline {
            assert!(
                self.drain(Duration::from_millis(50)),
                "the channel stayed up"
            );
            if let Some(at) = self
                .receipts
                .iter()
                .position(|r| r["action_id"] == action_id)
            {
                return self.receipts.remove(at);
            }
        }
        panic!("no receipt for {action_id}")
    }
}

/// The leader's session and the honest member, with readers for what each recorded.
struct Room {
    leader: PathBuf,
    honest: Agent,
    honest_dir: PathBuf,
}

fn session_with(agent_dir: &Path, file: &str) -> Option<PathBuf> {
    std::fs::read_dir(agent_dir.join("sessions"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join(file).is_file())
}

fn room_json(dir: &Path) -> Value {
    std::fs::read_to_string(dir.join("room.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

impl Room {
    /// Why the leader detached `key`, if it has.
    fn detach_reason(&self, key: &str) -> Option<String> {
        SessionFiles::read(&self.leader)
            .events_of("group_member_disconnected")
            .into_iter()
            .find(|e| e["public_key"] == key)
            .map(|e| e["reason"].as_str().unwrap().to_string())
    }

    /// Why the leader detached `key`, once it has.
    fn detached(&self, key: &str) -> String {
        wait_until(LIMIT, || self.detach_reason(key))
            .unwrap_or_else(|| panic!("the leader detached {key}"))
    }

    fn was_detached(&self, key: &str) -> bool {
        self.detach_reason(key).is_some()
    }

    /// The texts the honest member's verified view shows.
    fn texts(&self) -> Vec<String> {
        room_json(&self.honest_dir)["view"]["messages"]
            .as_array()
            .map(|messages| {
                messages
                    .iter()
                    .filter_map(|m| m["text"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The honest member says `text` and waits until its verified view shows it.
    fn honest_says(&self, text: &str) {
        let action = json!({"kind": "send", "text": text}).to_string();
        self.honest.ok(&[
            "session",
            "action",
            "--state-dir",
            self.honest_dir.to_str().unwrap(),
            "--action",
            &action,
        ]);
        let shown = wait_until(LIMIT, || {
            self.texts().iter().any(|t| t == text).then_some(())
        });
        assert!(
            shown.is_some(),
            "the honest member's {text:?} reached the room"
        );
    }
}

/// Opens the Community Room with our `host` and lets the honest member in.
fn open_room(net: &Net) -> (Proc, Proc, Room, String) {
    let leader = net.agent("leader");
    let contract = reference_contract("community-room-v1");
    let dir = leader.dir.join("room");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&contract.spec, dir.join("spec.json")).unwrap();
    std::fs::copy(
        contract.spec.with_file_name("hooks.py"),
        dir.join("hooks.py"),
    )
    .unwrap();
    leader.ok(&[
        "protocol",
        "register",
        dir.join("spec.json").to_str().unwrap(),
    ]);
    let (hosting, post_id) = leader.host(dir.to_str().unwrap(), &[]);
    let honest = net.agent("honest");
    let joined = Proc::spawn(
        "honest",
        honest.command(&["join", &post_id, "--control-mode", "autonomous"]),
    );
    let honest_dir = wait_until(LIMIT, || session_with(&honest.dir, "room.json"))
        .expect("the honest member was admitted");
    let leader_dir = wait_until(LIMIT, || session_with(&leader.dir, "room.json"))
        .expect("the leader started the room");
    let room = Room {
        leader: leader_dir,
        honest,
        honest_dir,
    };
    (hosting, joined, room, post_id)
}

/// Hostile members that break the wire are detached; ones whose inputs are wrong get a
/// refusal with its reason and stay. Returns those that stay.
fn wire_and_inputs(net: &Net, rt: &Runtime, room: &Room, post_id: &str) -> Vec<Hostile> {
    let mut oversized = Hostile::admitted(net, rt, post_id, "oversized");
    let mut bad_json = Hostile::admitted(net, rt, post_id, "badjson");
    let mut bad_input = Hostile::admitted(net, rt, post_id, "badinput");
    let mut replayer = Hostile::admitted(net, rt, post_id, "replayer");
    let mut stray = Hostile::admitted(net, rt, post_id, "stray");

    let blob = format!(
        "{{\"_group\":\"ping\",\"nonce\":\"{}\"}}\n",
        "x".repeat(MEMBER_FRAME_BYTES)
    );
    let _ = oversized.wire.write(blob.as_bytes());
    let _ = bad_json.wire.write(b"{this is not json}\n");
    bad_input
        .wire
        .send(&json!({"_group": "input", "client_seq": "one"}))
        .unwrap();
    assert_eq!(
        room.detached(&oversized.key()),
        format!("malformed frame from peer: frame exceeds the {MEMBER_FRAME_BYTES}-byte limit")
    );
    assert!(
        room.detached(&bad_json.key())
            .starts_with("malformed frame from peer: invalid JSON line: "),
        "{}",
        room.detached(&bad_json.key())
    );
    assert!(
        room.detached(&bad_input.key())
            .starts_with("malformed group input: "),
        "{}",
        room.detached(&bad_input.key())
    );

    // A replayed input is a duplicate, applied once, whatever its action_id.
    let first = replayer.input(1, &fresh_hex(), "said once");
    let accepted = replayer.submit(first.clone());
    assert_eq!(accepted["status"], "accepted", "{accepted}");
    let again = replayer.submit(first.clone());
    assert_eq!(
        (&again["status"], &again["client_seq"]),
        (&json!("duplicate"), &json!(1))
    );
    let mut renamed = first;
    renamed["action_id"] = json!(fresh_hex());
    assert_eq!(replayer.submit(renamed)["status"], "duplicate");

    // Out of sequence, for another room or epoch, in another's name, a bad action_id.
    let key = stray.key();
    let honest_key = room.honest.public_key();
    let mut cases: Vec<(Value, &str, bool)> = Vec::new();
    cases.push((
        stray.input(3, &fresh_hex(), "skips"),
        "client_seq gap: expected 1, got 3",
        false,
    ));
    let mut other_room = stray.input(1, &fresh_hex(), "elsewhere");
    other_room["group_id"] = json!("another-room");
    cases.push((other_room, "the input is for another room", false));
    let mut old_epoch = stray.input(1, &fresh_hex(), "stale");
    old_epoch["leader_epoch"] = json!(7);
    cases.push((
        old_epoch,
        "the input is for epoch 7, the room is at epoch 0",
        true,
    ));
    let mut impostor = stray.input(1, &fresh_hex(), "in the honest member's name");
    impostor["actor_public_key"] = json!(honest_key);
    cases.push((
        impostor,
        "the input names another actor than this channel's member",
        false,
    ));
    cases.push((
        stray.input(1, "not-hex", "bad id"),
        "action_id is not 32 lowercase hex characters",
        false,
    ));
    for (input, reason, retryable) in cases {
        let receipt = stray.submit(input);
        assert_eq!(receipt["status"], "rejected", "{receipt}");
        assert_eq!(receipt["reason"], reason, "{receipt}");
        assert_eq!(
            receipt["retryable"].as_bool().unwrap_or(false),
            retryable,
            "{receipt}"
        );
    }
    room.honest_says("honest while strays are refused");
    let texts = room.texts();
    assert_eq!(texts.iter().filter(|t| *t == "said once").count(), 1);
    for refused in ["skips", "elsewhere", "stale", "in the honest member's name"] {
        assert!(!texts.iter().any(|t| t == refused), "{refused}: {texts:?}");
    }

    assert!(!room.was_detached(&key));
    vec![replayer, stray]
}

/// A member that floods inputs is throttled with retryable refusals and stays.
fn flood(net: &Net, rt: &Runtime, room: &Room, post_id: &str) -> Hostile {
    let mut flooder = Hostile::admitted(net, rt, post_id, "flooder");
    let flood = 300;
    let started = Instant::now();
    for seq in 1..=flood {
        let input = flooder.input(seq, &fresh_hex(), &format!("flood {seq}"));
        flooder.wire.send(&input).unwrap();
    }
    while flooder.receipts.len() < flood as usize {
        assert!(
            flooder.drain(Duration::from_millis(100)),
            "the flooder stays: {:?}",
            room.detach_reason(&flooder.key())
        );
        assert!(started.elapsed() < LIMIT, "every input got its receipt");
    }
    let elapsed = started.elapsed().as_secs_f64();
    let accepted = flooder
        .receipts
        .iter()
        .filter(|r| r["status"] == "accepted")
        .count() as u64;
    assert!(
        accepted as f64 <= INPUT_BURST + INPUTS_PER_SECOND * elapsed + 1.0,
        "{accepted} accepted in {elapsed} s"
    );
    let throttled = flooder
        .receipts
        .iter()
        .find(|r| {
            r["reason"]
                .as_str()
                .is_some_and(|t| t.starts_with("input flood: "))
        })
        .expect("the flood was throttled");
    assert_eq!(throttled["retryable"], true);
    room.honest_says("honest after the flood");

    assert!(!room.was_detached(&flooder.key()), "a flood costs refusals");
    flooder
}

/// Members that fall silent (the silent one reads but never answers, the deaf one never
/// reads a byte while the leader sends it every step) are detached after ACK_TIMEOUT,
/// while the room goes on and the members that answer stay.
fn silent_ones(room: &Room, mut polite: Vec<Hostile>, silent: &mut Hostile, deaf: &Hostile) {
    let since = Instant::now();
    let mut pending = vec![silent.key(), deaf.key()];
    let mut said = 0;
    while !pending.is_empty() {
        for member in &mut polite {
            assert!(
                member.drain(Duration::from_millis(20)),
                "{} stays",
                member.key()
            );
        }
        while let Ok(Some(_)) = silent.wire.recv_timeout(Duration::from_millis(1)) {}
        if said < 3 {
            said += 1;
            room.honest_says(&format!("honest while some fall silent {said}"));
        }
        pending.retain(|key| match room.detach_reason(key) {
            Some(reason) => {
                // Within ACK_TIMEOUT one member's budget makes far fewer than
                // MAX_UNACKED_STEPS steps: the clock detaches them (the lag bound has its
                // unit test).
                assert_eq!(reason, "frame_ack_timeout", "{key}");
                false
            }
            None => true,
        });
        assert!(since.elapsed() < LIMIT, "the silent members were detached");
    }
    for member in &polite {
        assert!(!room.was_detached(&member.key()), "{} stays", member.key());
    }
    room.honest_says("honest after the silent ones left");
}

/// Strangers that dial and never say `join` hold the leader's admission slots for
/// JOIN_TIMEOUT at most, and nothing else: the room goes on, and the next member is
/// admitted once a slot frees.
fn strangers_stall(net: &Net, rt: &Runtime, room: &Room, post_id: &str, group: &Group) {
    let ticket: Ticket = group.iroh_ticket.parse().unwrap();
    // The clock starts before the first stranger dials: the leader's timer for each starts
    // later (on its accept), so no slot can free before JOIN_TIMEOUT has passed here, however
    // slowly a loaded machine dials the eight of them.
    let stalled = Instant::now();
    let _strangers: Vec<RawPeer> = (0..MAX_ADMITTING)
        .map(|_| {
            let mut peer = rt.block_on(raw_guest(&ticket));
            rt.block_on(peer.send.write_all(b"\n")).unwrap();
            peer
        })
        .collect();
    room.honest_says("honest while strangers stall");
    let latecomer = Hostile::admitted(net, rt, post_id, "latecomer");
    let waited = stalled.elapsed();
    assert!(
        waited >= JOIN_TIMEOUT && waited < JOIN_TIMEOUT + LIMIT / 4,
        "admitted after {waited:?}: at most {MAX_ADMITTING} admissions at once, each stranger gone after {JOIN_TIMEOUT:?}"
    );
    // Each stranger's refusal is on the leader's record, with the dialer and the reason.
    let refused = wait_until(LIMIT, || {
        let refused = SessionFiles::read(&room.leader)
            .events_of("group_admission_refused")
            .into_iter()
            .cloned()
            .collect::<Vec<Value>>();
        (refused.len() >= MAX_ADMITTING).then_some(refused)
    })
    .expect("one refusal recorded per stranger");
    assert!(
        refused
            .iter()
            .all(|e| e["node_id"].as_str().is_some_and(|id| !id.is_empty())
                && e["reason"].as_str().is_some_and(|r| r.contains("no join"))),
        "each names the dialer and why: {refused:?}"
    );
    drop(latecomer);
}

#[test]
fn hostile_members_cost_themselves_a_refusal_or_a_detach_never_the_room() {
    let net = Net::start();
    let rt = runtime();
    let (hosting, joined, room, post_id) = open_room(&net);
    room.honest_says("honest before");
    let mut silent = Hostile::admitted(&net, &rt, &post_id, "silent");
    let deaf = Hostile::admitted(&net, &rt, &post_id, "deaf");
    strangers_stall(&net, &rt, &room, &post_id, &silent.group);
    let mut polite = wire_and_inputs(&net, &rt, &room, &post_id);
    polite.push(flood(&net, &rt, &room, &post_id));
    silent_ones(&room, polite, &mut silent, &deaf);

    // The honest member verified every step in order, up to the leader's newest.
    let leader_seq = room_json(&room.leader)["seq"].as_u64().unwrap();
    let caught_up = wait_until(LIMIT, || {
        (room_json(&room.honest_dir)["seq"].as_u64() >= Some(leader_seq)).then_some(())
    });
    assert!(
        caught_up.is_some(),
        "the honest member reached step {leader_seq}"
    );
    let honest = SessionFiles::read(&room.honest_dir);
    let seqs: Vec<u64> = honest
        .events_of("group_frame_received")
        .iter()
        .filter_map(|e| e["seq"].as_u64())
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[1] == w[0] + 1),
        "every step, in order: {seqs:?}"
    );
    assert!(seqs.last() >= Some(&leader_seq));
    assert!(!room.was_detached(&room.honest.public_key()));
    joined.terminate(LIMIT);
    hosting.terminate(LIMIT);
}

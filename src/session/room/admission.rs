//! Admission on a fresh channel, both sides. The member sends `join` with a fresh nonce; the
//! leader — after checking with the server that it still leads this epoch — answers with its
//! signature over the admission statement and a fresh challenge; the member checks every
//! echoed fact and the signature, registers both signatures with the server (which gives it
//! its seat), and proves its key on this very channel with `ready`; the leader checks that
//! proof and that the server lists the member with that seat. Each frame is awaited for at
//! most [`FRAME_TIMEOUT`]. A member joining a leader of a newer epoch than its own newest
//! checkpoint hands that checkpoint over in `ready`, so a new leader can start from it
//! when it is newer than the one the leader claimed the room with.

use std::time::Duration;

use rand::RngCore;
use serde_json::{Map, Value};

use super::RoomControl;
use crate::api::group::{Group, MemberStatus, NewMember, admission_canonical};
use crate::identity::{self, Identity};
use crate::room::checkpoint::{Checkpoint, RoomMember};
use crate::transport::Channel;
use crate::wire::group::{Admission, Join, Ready, is_hex_32};

/// How long each side waits for each admission frame.
pub const FRAME_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the leader waits for a stranger's `join`, the first frame a member sends as
/// soon as its channel is open (the later frames wait on the server, hence the longer
/// [`FRAME_TIMEOUT`]).
pub const JOIN_TIMEOUT: Duration = Duration::from_secs(10);
/// Admissions a leader runs at once; more channels wait for a free one (and beyond the
/// endpoint's queue are turned away as busy), so strangers that dial and stall cannot
/// pile up threads and channels.
pub const MAX_ADMITTING: usize = 8;
/// The largest checkpoint a member hands over in `ready` (canonical bytes), well inside the
/// leader's limit on a member's frame; a larger one stays with the member.
pub const MAX_HANDED_CHECKPOINT_BYTES: usize = 96 * 1024;

/// A fresh 32-hex nonce or challenge.
pub fn fresh_hex() -> String {
    random_hex::<16>()
}

/// `N` random bytes from the OS in lowercase hex.
pub fn random_hex<const N: usize>() -> String {
    let mut bytes = [0u8; N];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// Checks the group's transport binding: its leader signed this ticket for this protocol.
pub fn verify_binding(group: &Group) -> Result<(), String> {
    let binding = identity::transport_binding_canonical(
        &group.leader_public_key,
        identity::TRANSPORT_IROH,
        &group.iroh_ticket,
        &group.protocol_id,
    );
    identity::verify_hex(
        &group.leader_public_key,
        binding.as_bytes(),
        &group.transport_binding_signature,
    )
    .map_err(|e| format!("the room's ticket is not signed by its leader ({e})"))
}

fn recv(channel: &mut dyn Channel, what: &str) -> Result<serde_json::Value, String> {
    recv_within(channel, what, FRAME_TIMEOUT)
}

fn recv_within(
    channel: &mut dyn Channel,
    what: &str,
    within: Duration,
) -> Result<serde_json::Value, String> {
    match channel.recv_timeout(within) {
        Ok(Some(frame)) => Ok(frame),
        Ok(None) => Err(format!("no {what} within {} s", within.as_secs())),
        Err(error) => Err(format!("waiting for the {what}: {error}")),
    }
}

/// The member's side: returns the seat the server gave it. `newest` is the member's newest
/// verified checkpoint, handed over when `group`'s leader leads a newer epoch and started
/// from an older checkpoint (and it fits [`MAX_HANDED_CHECKPOINT_BYTES`]).
pub fn member_admit(
    channel: &mut dyn Channel,
    control: &dyn RoomControl,
    identity: &Identity,
    group: &Group,
    control_mode: &str,
    newest: Option<&Checkpoint>,
    fair_deal: bool,
) -> Result<RoomMember, String> {
    let join = Join {
        group_id: group.group_id.clone(),
        member_public_key: identity.public_key().to_string(),
        join_nonce: fresh_hex(),
        member_control_mode: control_mode.to_string(),
    };
    channel
        .send(&join.to_value())
        .map_err(|e| format!("sending join: {e}"))?;
    let admission = Admission::parse(&recv(channel, "admission")?).map_err(|e| e.to_string())?;
    let echoes = [
        ("group_id", admission.group_id == group.group_id),
        ("protocol_id", admission.protocol_id == group.protocol_id),
        (
            "leader_public_key",
            admission.leader_public_key == group.leader_public_key,
        ),
        ("leader_epoch", admission.leader_epoch == group.leader_epoch),
        ("join_nonce", admission.join_nonce == join.join_nonce),
    ];
    if let Some((field, _)) = echoes.iter().find(|(_, same)| !same) {
        return Err(format!("the admission's {field} is not the room's"));
    }
    if !is_hex_32(&admission.channel_challenge) {
        return Err("the admission's channel_challenge is not 32 lowercase hex".into());
    }
    let statement = admission_canonical(
        &group.group_id,
        &group.leader_public_key,
        identity.public_key(),
        &group.protocol_id,
        group.leader_epoch,
        &join.join_nonce,
    );
    identity::verify_hex(
        &group.leader_public_key,
        statement.as_bytes(),
        &admission.leader_signature,
    )
    .map_err(|_| "the leader's admission signature does not verify".to_string())?;
    let admitted = control.admit(
        &group.group_id,
        &NewMember {
            join_nonce: join.join_nonce.clone(),
            leader_epoch: group.leader_epoch,
            leader_signature: admission.leader_signature.clone(),
            member_signature: identity.sign_hex(statement.as_bytes()),
        },
    )?;
    let mut ready = Ready {
        group_id: group.group_id.clone(),
        protocol_id: group.protocol_id.clone(),
        leader_epoch: group.leader_epoch,
        member_public_key: identity.public_key().to_string(),
        member_id: admitted.member_id.clone(),
        seat: admitted.seat,
        join_nonce: join.join_nonce,
        channel_challenge: admission.channel_challenge,
        member_signature: String::new(),
        checkpoint: newest.and_then(|checkpoint| handover(checkpoint, group)),
        fair_deal,
    };
    ready.member_signature = identity.sign_hex(&ready.statement());
    channel
        .send(&ready.to_value())
        .map_err(|e| format!("sending ready: {e}"))?;
    Ok(RoomMember {
        member_id: admitted.member_id,
        public_key: identity.public_key().to_string(),
        seat: admitted.seat,
        status: MemberStatus::Active,
    })
}

/// What a member hands a new leader in `ready`: its checkpoint, when it is of an older epoch
/// than `group`'s leader and newer than the checkpoint the room's epoch started from.
fn handover(checkpoint: &Checkpoint, group: &Group) -> Option<Map<String, Value>> {
    if checkpoint.leader_epoch >= group.leader_epoch || checkpoint.seq <= group.checkpoint_seq {
        return None;
    }
    let value = serde_json::to_value(checkpoint).expect("a checkpoint serializes");
    let size = crate::room::json::canonical(&value).map_or(usize::MAX, |text| text.len());
    match value {
        Value::Object(map) if size <= MAX_HANDED_CHECKPOINT_BYTES => Some(map),
        _ => None,
    }
}

/// The leader's side: returns the member as the server lists it, and its `ready` (the
/// checkpoint it handed over there is unverified: only a new leader that has not started its
/// epoch uses it).
pub fn leader_admit(
    channel: &mut dyn Channel,
    control: &dyn RoomControl,
    identity: &Identity,
    group_id: &str,
    protocol_id: &str,
    epoch: u64,
) -> Result<(RoomMember, Ready), String> {
    let join =
        Join::parse(&recv_within(channel, "join", JOIN_TIMEOUT)?).map_err(|e| e.to_string())?;
    join.check(group_id).map_err(|e| e.to_string())?;
    let current = control.group(group_id)?;
    if current.leader_public_key != identity.public_key() || current.leader_epoch != epoch {
        return Err("this process no longer leads the room's current epoch".into());
    }
    let statement = admission_canonical(
        group_id,
        identity.public_key(),
        &join.member_public_key,
        protocol_id,
        epoch,
        &join.join_nonce,
    );
    let admission = Admission {
        group_id: group_id.to_string(),
        protocol_id: protocol_id.to_string(),
        leader_public_key: identity.public_key().to_string(),
        leader_epoch: epoch,
        join_nonce: join.join_nonce.clone(),
        channel_challenge: fresh_hex(),
        leader_signature: identity.sign_hex(statement.as_bytes()),
    };
    channel
        .send(&admission.to_value())
        .map_err(|e| format!("sending admission: {e}"))?;
    let ready = Ready::parse(&recv(channel, "ready")?).map_err(|e| e.to_string())?;
    let echoes = [
        ("group_id", ready.group_id == group_id),
        ("protocol_id", ready.protocol_id == protocol_id),
        ("leader_epoch", ready.leader_epoch == epoch),
        (
            "member_public_key",
            ready.member_public_key == join.member_public_key,
        ),
        ("join_nonce", ready.join_nonce == join.join_nonce),
        (
            "channel_challenge",
            ready.channel_challenge == admission.channel_challenge,
        ),
    ];
    if let Some((field, _)) = echoes.iter().find(|(_, same)| !same) {
        return Err(format!("the member's ready has another {field}"));
    }
    if ready.member_id.is_empty() || ready.member_id.len() > 128 {
        return Err("the member's ready has no valid member_id".into());
    }
    identity::verify_hex(
        &ready.member_public_key,
        &ready.statement(),
        &ready.member_signature,
    )
    .map_err(|_| "the member's channel proof does not verify".to_string())?;
    let listed = control.group(group_id)?;
    let member = listed
        .members
        .iter()
        .find(|m| m.public_key == ready.member_public_key && m.status == MemberStatus::Active)
        .ok_or("the server does not list the member as admitted")?;
    if member.member_id != ready.member_id || member.seat != ready.seat {
        return Err("the member's seat differs from the server's".into());
    }
    Ok((RoomMember::from(member), ready))
}

//! simultaneous_round: engine-owned commit-reveal. Each round both sides commit to a
//! hidden value (SHA-256 of `"<value>:<nonce>"`), then reveal; the host checks the guest's
//! commitment, judges, and sends the round result; `{"action":"end"}` closes the match.
//!
//! With `shadow_judge: true` the guest recomputes every round with its hooks'
//! `proto_round_judge_pure` and refuses a host whose round result differs in any judged
//! field (`balance_mismatch`). The judged fields come from the contract
//! ([`RoundSettings::judged_fields`]): the list in `flow.round.judged_fields` when the spec
//! gives one, else every field of the round-result message (the one message the host sends
//! besides ready, commit, reveal, error and end) except `action`, `round`, `hash`, `nonce`
//! and the revealed value field. A judged field missing on both sides counts as equal.

use serde_json::{Map, Value, json};

use super::session::Session;
use super::{EngineError, Outcome, end_reason};
use crate::canonical::sha256_hex;
use crate::records::Event;
use crate::spec::Role;
use crate::spec::model::RoundSettings;
use crate::spec::pyrepr::py_str;

/// The commitment to a revealed value: SHA-256 of Python `f"{value}:{nonce}"`.
pub fn commit_hash(value: &Value, nonce: &str) -> String {
    sha256_hex(format!("{}:{nonce}", py_str(value)))
}

fn fresh_nonce() -> String {
    hex::encode(rand::random::<[u8; 8]>())
}

pub(crate) fn run(session: &mut Session, round: &RoundSettings) -> Result<Outcome, EngineError> {
    match session.role() {
        Role::Host => host(session, &round.value_field),
        Role::Guest => guest(session, round),
    }
}

fn commit_frame(round: u64, hash: &str) -> Value {
    json!({"action": "commit", "round": round, "hash": hash})
}

fn reveal_frame(round: u64, field: &str, value: &Value, nonce: &str) -> Value {
    let mut frame = Map::new();
    frame.insert("action".into(), "reveal".into());
    frame.insert("round".into(), round.into());
    frame.insert(field.to_string(), value.clone());
    frame.insert("nonce".into(), nonce.into());
    Value::Object(frame)
}

/// Asks the hooks for this round's value and sends the commitment to it.
fn commit_to_value(session: &mut Session, round: u64) -> Result<(Value, String), EngineError> {
    let value = session.hooks.round_value(round)?;
    let nonce = fresh_nonce();
    let commit = commit_frame(round, &commit_hash(&value, &nonce));
    session.send_as("the engine (commit)", &commit, session.outbound())?;
    Ok((value, nonce))
}

/// Records that `role`'s reveal did not open its commitment.
fn broken_commitment(
    session: &mut Session,
    round: u64,
    role: Role,
    (expected, actual): (String, Value),
) -> Result<(), EngineError> {
    session.emit(Event::CommitMismatchDetected {
        round,
        role,
        expected,
        actual,
    });
    session.phase(
        "aborted",
        "Commit mismatch detected",
        json!({"round": round}),
    )
}

fn host(session: &mut Session, field: &str) -> Result<Outcome, EngineError> {
    let outbound = session.outbound();
    session.host_handshake()?;
    for round in 0.. {
        let (value, nonce) = commit_to_value(session, round)?;
        let guest_commit = session.recv()?;
        if let Some((round, reason)) = peer_error(&guest_commit, round) {
            return session.peer_gave_up(round, &reason);
        }
        session.send_as(
            "the engine (reveal)",
            &reveal_frame(round, field, &value, &nonce),
            outbound,
        )?;
        let guest_reveal = session.recv()?;
        if let Some((round, reason)) = peer_error(&guest_reveal, round) {
            return session.peer_gave_up(round, &reason);
        }
        let guest_value = guest_reveal.get(field).cloned().unwrap_or(Value::Null);
        if let Some(mismatch) = check_commit(&guest_commit, &guest_reveal, &guest_value) {
            broken_commitment(session, round, Role::Guest, mismatch)?;
            session.send_raw(
                &json!({"action": "error", "round": round, "reason": "commit_mismatch"}),
            )?;
            return Ok(Outcome::ended(false, Some("commit_mismatch")));
        }
        let judged = session.hooks.round_judge(round, &value, &guest_value)?;
        if let Some(result) = judged.message().cloned() {
            session.send_as("proto_round_judge", &result, outbound)?;
        }
        if judged.ends() {
            session.send_raw(&json!({"action": "end"}))?;
            let reason = end_reason(&judged);
            let phase = if judged.abort { "aborted" } else { "game_over" };
            session.finish(true, reason, phase, "Session ended")?;
            let outcome = Outcome::ended(judged.completed, judged.abort.then_some("abort"));
            return Ok(outcome.with_winner(&[judged.message()]));
        }
        session.pace();
    }
    unreachable!("rounds are unbounded")
}

/// `Some((expected, actual))` when a reveal does not open its commitment.
///
/// The nonce must be hex digits (every implementation draws 16 of them): with no `:` in it,
/// `"<value>:<nonce>"` splits one way only, so a peer that has seen our value cannot open
/// one commitment as either of two values (`"a:b" + "n"` or `"a" + "b:n"`).
fn check_commit(commit: &Value, reveal: &Value, value: &Value) -> Option<(String, Value)> {
    let nonce = reveal.get("nonce");
    let hex_nonce = nonce
        .and_then(Value::as_str)
        .is_some_and(|n| (1..=64).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_hexdigit()));
    let nonce = nonce.map(py_str).unwrap_or_else(|| "None".into());
    let expected = sha256_hex(format!("{}:{nonce}", py_str(value)));
    let actual = commit.get("hash").cloned().unwrap_or(Value::Null);
    let opens = hex_nonce && actual.as_str() == Some(expected.as_str());
    (!opens).then_some((expected, actual))
}

fn guest(session: &mut Session, settings: &RoundSettings) -> Result<Outcome, EngineError> {
    let outbound = session.outbound();
    let field = settings.value_field.as_str();
    session.guest_handshake()?;
    let mut last_result: Option<Value> = None;
    let mut next_frame: Option<Value> = None;
    for round in 0.. {
        let host_commit = match next_frame.take() {
            Some(frame) => frame,
            None => session.recv_raw()?,
        };
        if host_commit == json!({"action": "end"}) {
            session.finish(true, "completed", "game_over", "Session completed")?;
            return Ok(Outcome::ended(true, None).with_winner(&[last_result.as_ref()]));
        }
        session.accept(&host_commit, session.inbound())?;
        if let Some((round, reason)) = peer_error(&host_commit, round) {
            return session.peer_gave_up(round, &reason);
        }
        // Asked only once the host has committed (the reference asks first), so the final
        // `end` never opens a decision window for a round that will not be played.
        let (value, nonce) = commit_to_value(session, round)?;
        // The host is bound by the commitment it already sent, so our reveal follows our
        // commitment at once instead of waiting for the host's: a round is two crossings of
        // the path, not four (the host reads our reveal when it wants it, as before).
        session.send_as(
            "the engine (reveal)",
            &reveal_frame(round, field, &value, &nonce),
            outbound,
        )?;
        let host_reveal = session.recv()?;
        let host_value = host_reveal.get(field).cloned().unwrap_or(Value::Null);
        if let Some(mismatch) = check_commit(&host_commit, &host_reveal, &host_value) {
            broken_commitment(session, round, Role::Host, mismatch)?;
            session.tell_peer_why(round, "commit_mismatch");
            return Ok(Outcome::ended(false, Some("commit_mismatch")));
        }
        let result = session.recv()?;
        if let Some((round, reason)) = peer_error(&result, round) {
            session.hooks.guest_handle(&result)?;
            return session.peer_gave_up(round, &reason);
        }
        if let Some(judged) = &settings.judged_fields
            && let Some(expected) = session.hooks.round_judge_pure(round, &host_value, &value)?
        {
            let mismatches = judged_differences(judged, &expected, &result);
            if !mismatches.is_empty() {
                session.emit(Event::BalanceMismatchDetected {
                    round,
                    role: Role::Host,
                    mismatches: mismatches.into(),
                });
                session.phase(
                    "aborted",
                    "Balance mismatch detected (shadow judge)",
                    json!({"round": round}),
                )?;
                session.tell_peer_why(round, "balance_mismatch");
                return Ok(Outcome::ended(false, Some("balance_mismatch")));
            }
        }
        session.hooks.guest_handle(&result)?;
        last_result = Some(result);
        session.pace();
        next_frame = Some(session.recv_raw()?);
    }
    unreachable!("rounds are unbounded")
}

/// An `error` frame, a peer's way of saying why it stops: its reason and the round it
/// names (ours when it names none).
fn peer_error(frame: &Value, round: u64) -> Option<(u64, String)> {
    (frame.get("action").and_then(Value::as_str) == Some("error")).then(|| {
        let reason = frame
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("unspecified");
        (
            frame.get("round").and_then(Value::as_u64).unwrap_or(round),
            reason.to_string(),
        )
    })
}

/// Every judged field where the host's round result differs from the local recomputation
/// (a field missing on both sides counts as equal), in the order the fields are judged.
fn judged_differences(judged: &[String], expected: &Value, actual: &Value) -> Vec<Value> {
    judged
        .iter()
        .filter_map(|field| {
            let (want, got) = (expected.get(field), actual.get(field));
            (want != got).then(|| json!({"field": field, "expected": want, "actual": got}))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commitments_use_python_str_formatting() {
        assert_eq!(commit_hash(&json!(true), "00"), sha256_hex("True:00"));
        assert_eq!(commit_hash(&json!("rock"), "ab"), sha256_hex("rock:ab"));
        assert_eq!(commit_hash(&json!(7), "ab"), sha256_hex("7:ab"));
    }

    #[test]
    fn a_nonce_that_is_not_hex_never_opens_a_commitment() {
        let commit = |text: &str| json!({"hash": sha256_hex(text)});
        let reveal = |nonce: &str| json!({"nonce": nonce});
        let value = json!("a");
        assert_eq!(check_commit(&commit("a:0f"), &reveal("0f"), &value), None);
        // The same commitment would open as "a" with nonce "b:0f" or as "a:b" with "0f".
        let (expected, _) = check_commit(&commit("a:b:0f"), &reveal("b:0f"), &value).unwrap();
        assert_eq!(expected, sha256_hex("a:b:0f"));
        let number = json!({"nonce": 15});
        assert!(check_commit(&commit("a:15"), &number, &value).is_some());
    }

    #[test]
    fn shadow_judge_compares_only_judged_fields() {
        let judged = ["host_hp", "round_winner", "guest_mana", "guest_hp"].map(String::from);
        let expected = json!({"host_hp": 10, "round_winner": "host", "host_move": "a"});
        let actual =
            json!({"host_hp": 9, "round_winner": "host", "host_move": "b", "guest_mana": 3});
        assert_eq!(
            judged_differences(&judged, &expected, &actual),
            vec![
                json!({"field": "host_hp", "expected": 10, "actual": 9}),
                json!({"field": "guest_mana", "expected": null, "actual": 3}),
            ]
        );
    }
}

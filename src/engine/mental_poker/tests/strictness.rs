//! One field of one frame changed where the checks are strictest: the numbers of an
//! oblivious transfer, a sealed entry's size, an opened token, a witness's blinding factor.
//! Each is refused with its exact reason (a transfer request before it is answered), and the
//! other side learns why.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::game::{Side, Strategy};
use super::tampering::{caught, first, hooks, tampering};

/// The OT modulus of a side, as its setup frame showed it (512 hex digits).
type Modulus = Arc<Mutex<String>>;

/// An honest side that notes its own OT modulus as its setup goes out.
fn noting_modulus(modulus: &Modulus) -> Side {
    let modulus = modulus.clone();
    tampering(hooks(Strategy::Pass), move |frame| {
        if let Some(key) = frame["rsa_pub"].as_str() {
            let key: Value = serde_json::from_str(key).unwrap();
            *modulus.lock().unwrap() = key["n"].as_str().unwrap().to_string();
        }
        true
    })
}

/// Sets `field` of a JSON text embedded in a frame (a sealed entry, an opening item, a
/// witness), keeping its other fields.
fn rewrite(item: &mut Value, field: &str, value: String) {
    let mut fields: Value = serde_json::from_str(item.as_str().unwrap()).unwrap();
    fields[field] = value.into();
    *item = fields.to_string().into();
}

/// A value as the wire would never carry it, or out of `1..n`: what each case makes of the
/// original field (given the modulus it must stay below).
type Bad = fn(&str, &str) -> String;

const OUT_OF_RANGE: [(&str, Bad); 3] = [
    ("zero", |_, _| "0".repeat(512)),
    ("n itself", |_, n| n.to_string()),
    ("all ones", |_, _| "f".repeat(512)),
];

const NOT_CANONICAL: [(&str, Bad); 3] = [
    ("one digit short", |value, _| value[1..].to_string()),
    ("upper case", |value, _| value.to_uppercase()),
    ("a digit too many", |value, _| format!("0{value}")),
];

#[test]
fn a_transfer_request_out_of_range_or_not_canonical_is_refused_before_it_is_answered() {
    for (case, bad) in OUT_OF_RANGE.into_iter().chain(NOT_CANONICAL) {
        let host_modulus = Modulus::default();
        let host = noting_modulus(&host_modulus);
        let guest = tampering(
            hooks(Strategy::Pass),
            first("mp_ot_request", move |frame| {
                let z = frame["z"].as_str().unwrap().to_string();
                frame["z"] = bad(&z, &host_modulus.lock().unwrap()).into();
            }),
        );
        let (host, _) = caught(host, guest, "host", "ot_value_out_of_range");
        let answered = host
            .events_named("protocol_message")
            .iter()
            .any(|m| m["msg"]["action"] == "mp_ot_response");
        assert!(!answered, "{case}: no answer went out");
    }
}

#[test]
fn an_answer_must_echo_its_requests_id() {
    let host = tampering(
        hooks(Strategy::Pass),
        first("mp_ot_response", |frame| frame["id"] = "guest-1".into()),
    );
    caught(
        host,
        Side::honest(hooks(Strategy::Pass)),
        "guest",
        "unexpected_ot_id",
    );
}

#[test]
fn a_sealed_entry_a_byte_short_or_long_is_refused_at_setup() {
    let cases: [Bad; 2] = [|c, _| c[2..].to_string(), |c, _| format!("{c}00")];
    for bad in cases {
        let host = tampering(
            hooks(Strategy::Pass),
            first("mp_setup_a", move |frame| {
                let item = &mut frame["sealed_keys"][0];
                let fields: Value = serde_json::from_str(item.as_str().unwrap()).unwrap();
                let c = fields["c"].as_str().unwrap().to_string();
                assert_eq!(c.len(), 120, "a sealed entry is 60 bytes");
                rewrite(item, "c", bad(&c, ""));
            }),
        );
        caught(
            host,
            Side::honest(hooks(Strategy::Pass)),
            "guest",
            "bad_sealed_entry",
        );
    }
}

/// The guest changes `field` of the first item of its `action` frame whose `kind` (when
/// given) matches; the host must stop with `reason`.
fn guest_changes(action: &'static str, field: &'static str, bad: Bad, reason: &str) {
    let host_modulus = Modulus::default();
    let guest_modulus = Modulus::default();
    let host = noting_modulus(&host_modulus);
    let list = if action == "mp_opening" {
        "openings"
    } else {
        "witnesses"
    };
    let mut guest = noting_modulus(&guest_modulus);
    let mut note = guest.tamper.take().unwrap();
    let mut done = false;
    guest.tamper = Some(Box::new(move |frame: &mut Value| {
        note(frame);
        if !done && frame["action"] == action {
            done = true;
            // Tokens are the guest's own table's (its modulus); a witness's r is the host's.
            let modulus = if action == "mp_opening" {
                guest_modulus.lock().unwrap().clone()
            } else {
                host_modulus.lock().unwrap().clone()
            };
            let item = &mut frame[list][0];
            let fields: Value = serde_json::from_str(item.as_str().unwrap()).unwrap();
            let value = fields[field].as_str().unwrap().to_string();
            rewrite(item, field, bad(&value, &modulus));
        }
        true
    }));
    caught(host, guest, "host", reason);
}

#[test]
fn an_opened_token_must_be_canonical_and_in_range() {
    for (_, bad) in NOT_CANONICAL {
        guest_changes("mp_opening", "token", bad, "malformed_opening");
    }
    for (_, bad) in OUT_OF_RANGE {
        guest_changes("mp_opening", "token", bad, "forged_token");
    }
}

#[test]
fn a_witness_blinding_factor_must_be_canonical_and_in_range() {
    for (_, bad) in NOT_CANONICAL {
        guest_changes("mp_witness", "r", bad, "malformed_witness");
    }
    for (_, bad) in OUT_OF_RANGE {
        guest_changes("mp_witness", "r", bad, "bad_witness");
    }
}

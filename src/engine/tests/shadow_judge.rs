//! The shadow judge of a protocol other than Hero Duel: judged fields from the round result the spec declares, or from its own list.

use super::*;

/// A second shadow-judged protocol, unrelated to Hero Duel: each round both roll a die and
/// the round result carries two scores, the leader and whether the game is over.
fn dice_duel_spec(judged_fields: Option<Value>) -> Spec {
    let mut spec = simultaneous_spec(
        json!({"type": "integer", "min": 1, "max": 6, "required": true}),
        vec![
            message(
                "roll_result",
                "host_to_guest",
                json!({"round": {"type": "integer", "required": true},
                       "host_score": {"type": "integer", "min": 0, "max": 12, "required": true},
                       "guest_score": {"type": "integer", "min": 0, "max": 12, "required": true},
                       "leader": {"type": "enum", "values": ["host", "guest", "tie"], "required": true},
                       "game_over": {"type": "boolean", "required": true}}),
            ),
            message(
                "error",
                "both",
                json!({"round": {"type": "integer"}, "reason": {"type": "enum", "values": ["commit_mismatch", "balance_mismatch"], "required": true}}),
            ),
        ],
        json!({"shadow_judge": true}),
    )
    .value()
    .clone();
    if let Some(fields) = judged_fields {
        spec["flow"]["round"]["judged_fields"] = fields;
    }
    let spec = Spec::from_value(spec).unwrap();
    spec.check().unwrap();
    spec
}

/// Every field of the dice duel's round result besides the round number.
const DICE_RESULT_FIELDS: [&str; 4] = ["host_score", "guest_score", "leader", "game_over"];

/// The dice duel's rules; a host that lies misreports `lie_in` in round 0.
fn dice_judge(lie_in: Option<&'static str>) -> Judge {
    Box::new(move |round, h, g| {
        let (host, guest) = (h.as_i64().unwrap(), g.as_i64().unwrap());
        let leader = match host.cmp(&guest) {
            std::cmp::Ordering::Greater => "host",
            std::cmp::Ordering::Less => "guest",
            std::cmp::Ordering::Equal => "tie",
        };
        let over = round == 1;
        let mut result = json!({"action": "roll_result", "round": round, "host_score": host,
            "guest_score": guest, "leader": leader, "game_over": over});
        if let Some(field) = lie_in.filter(|_| round == 0) {
            result[field] = match &result[field] {
                Value::Bool(flag) => json!(!flag),
                Value::String(_) if leader == "tie" => json!("host"),
                Value::String(_) => json!("tie"),
                number => json!(number.as_i64().unwrap() + 1),
            };
        }
        HookResult {
            response: Some(result),
            completed: over,
            abort: false,
        }
    })
}

fn dice_hooks(lie_in: Option<&'static str>) -> (TestHooks, TestHooks) {
    let host = TestHooks {
        values: vec![json!(3), json!(5)],
        judge: Some(dice_judge(lie_in)),
        ..TestHooks::default()
    };
    let mut honest = dice_judge(None);
    let guest = TestHooks {
        values: vec![json!(4), json!(5)],
        pure: Some(Box::new(move |r, h, g| honest(r, h, g).response.unwrap())),
        ..TestHooks::default()
    };
    (host, guest)
}

#[test]
fn the_shadow_judge_of_any_protocol_catches_a_lie_in_every_field_of_its_round_result() {
    let spec = dice_duel_spec(None);
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = dice_hooks(None);
    let (host, guest) = play(&spec, host, guest, dir.path(), |c| Box::new(c));
    assert!(
        host.unwrap().completed && guest.unwrap().completed,
        "honest hosts pass"
    );
    for field in DICE_RESULT_FIELDS {
        let dir = tempfile::tempdir().unwrap();
        let (host, guest) = dice_hooks(Some(field));
        let (host, guest) = play(&spec, host, guest, dir.path(), |c| Box::new(c));
        assert_eq!(
            guest.unwrap().reason.as_deref(),
            Some("balance_mismatch"),
            "a lie in {field} went unnoticed"
        );
        assert_eq!(
            host.unwrap().reason.as_deref(),
            Some("peer_error: balance_mismatch")
        );
        let detected: Vec<Value> = events(dir.path(), "guest")
            .into_iter()
            .filter(|e| e["type"] == "balance_mismatch_detected")
            .collect();
        let mismatches = detected[0]["data"]["mismatches"].as_array().unwrap();
        assert_eq!(mismatches.len(), 1, "{field}: {mismatches:?}");
        assert_eq!(mismatches[0]["field"], field);
    }
}

#[test]
fn a_spec_that_lists_its_judged_fields_is_judged_on_those_only() {
    let spec = dice_duel_spec(Some(json!(["leader"])));
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = dice_hooks(Some("host_score"));
    let (_host, guest) = play(&spec, host, guest, dir.path(), |c| Box::new(c));
    assert!(guest.unwrap().completed, "host_score is not judged here");
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = dice_hooks(Some("leader"));
    let (_host, guest) = play(&spec, host, guest, dir.path(), |c| Box::new(c));
    assert_eq!(guest.unwrap().reason.as_deref(), Some("balance_mismatch"));
}

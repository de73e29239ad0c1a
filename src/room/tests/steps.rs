//! A room's ordinary steps: every member verifies every envelope, and inputs are ordered,
//! deduplicated and refused without changing the room.

use serde_json::json;

use super::{deliver, room, say};
use crate::identity::Identity;
use crate::room::authority::Receipt;

#[test]
fn every_member_verifies_every_step_with_views_and_checkpoints_in_both_forms() {
    let mut room = room();
    let mut forms = std::collections::BTreeSet::new();
    for round in 1..=24u64 {
        let (envelopes, receipt) = say(
            &mut room,
            (round % 3) as usize,
            round.div_ceil(3),
            &format!("hello {round}"),
        );
        assert!(
            matches!(receipt, Receipt::Accepted { authority_seq, .. } if authority_seq == round),
            "{receipt:?}"
        );
        assert_eq!(envelopes.len(), 4, "the leader gets its own envelope too");
        for (_, envelope) in &envelopes {
            forms.insert((
                envelope["view_mode"].to_string(),
                envelope["checkpoint_mode"].to_string(),
            ));
        }
        deliver(&mut room.replicas, &envelopes, false);
    }
    assert!(
        forms.contains(&("\"delta\"".into(), "\"delta\"".into())),
        "{forms:?}"
    );
    assert!(
        forms.iter().any(|(_, c)| c == "\"full\""),
        "every 4th step is a full checkpoint"
    );
    let view = room.replicas[0].view.as_ref().unwrap();
    assert_eq!(view["log"].as_array().unwrap().len(), 24);
    assert_eq!(view["mine"], 8);
    let checkpoint = room.replicas[2].checkpoint.as_ref().unwrap();
    assert_eq!(checkpoint.seq, 24);
    assert_eq!(
        checkpoint.state.last_client_seq[room.others[2].public_key()],
        8
    );
}

#[test]
fn inputs_are_ordered_duplicates_and_gaps_and_refusals_change_nothing() {
    let mut room = room();
    let (_, first) = say(&mut room, 0, 1, "one");
    assert!(matches!(first, Receipt::Accepted { .. }));
    let (none, again) = say(&mut room, 0, 1, "one");
    assert!(none.is_empty());
    assert_eq!(
        again,
        Receipt::Duplicate {
            client_seq: 1,
            authority_seq: 1
        }
    );
    let (_, gap) = say(&mut room, 0, 3, "three");
    assert_eq!(
        gap,
        Receipt::Rejected {
            client_seq: 3,
            reason: "client_seq gap: expected 2, got 3".into()
        }
    );
    let (_, refused) = say(&mut room, 0, 2, "");
    assert_eq!(
        refused,
        Receipt::Rejected {
            client_seq: 2,
            reason: "the hooks refused the action: say something".into()
        }
    );
    let (_, big) = say(&mut room, 0, 2, &"x".repeat(600));
    assert!(
        matches!(big, Receipt::Rejected { ref reason, .. } if reason.contains("max_action_bytes")),
        "{big:?}"
    );
    let stranger = Identity::generate();
    let (_, outsider) = room.authority.apply_input(
        stranger.public_key(),
        1,
        json!({"say": "hi"}).as_object().unwrap(),
    );
    assert!(matches!(outsider, Receipt::Rejected { .. }));
    assert_eq!(
        room.authority.seq, 1,
        "only the accepted action made a step"
    );
    let (envelopes, end) = say(&mut room, 1, 1, "bye");
    assert!(matches!(
        end,
        Receipt::Accepted {
            completed: true,
            ..
        }
    ));
    assert_eq!(envelopes[0].1["outcome"], "ended");
    let (_, after) = say(&mut room, 0, 2, "late");
    assert_eq!(
        after,
        Receipt::Rejected {
            client_seq: 2,
            reason: "the room has ended".into()
        }
    );
}

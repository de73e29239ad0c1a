//! Conversational rooms. The room contracts on the network declare their actions only in
//! prose (their messages carry a free `payload`), so what a typed line means is kept here as
//! data, per contract: a room is conversational when its contract has a *text action* — one
//! `kind` whose single field carries what a member says (Community Room's
//! `{"kind": "send", "text"}`). Which contracts have one is a column of the well-known table
//! ([`crate::protocols::well_known`]); any other room takes JSON actions only.

use serde_json::Value;

pub use crate::protocols::well_known::Talk;

/// What one typed line asks for: nothing (a blank line), or an action to queue. A line that
/// starts with `{` is a JSON object, sent as it is; any other line is said with the room's
/// text action, when it has one.
pub fn typed_action(line: &str, talk: Option<Talk>) -> Result<Option<Value>, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    if line.starts_with('{') {
        return match serde_json::from_str::<Value>(line) {
            Ok(action @ Value::Object(_)) => Ok(Some(action)),
            Ok(_) => Err("the line is JSON but not one object".into()),
            Err(error) => Err(format!("the line is not a JSON object ({error})")),
        };
    }
    match talk {
        Some(talk) => talk.action(line).map(Some),
        None => Err(
            "this room takes JSON actions only: type one object, e.g. {\"kind\": \"...\"}".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const SEND: Talk = Talk {
        kind: "send",
        field: "text",
        max_bytes: 10,
    };

    #[test]
    fn lines_become_actions_or_one_reason() {
        assert_eq!(
            typed_action("  hi there ", Some(SEND)),
            Ok(Some(json!({"kind": "send", "text": "hi there"})))
        );
        assert_eq!(
            typed_action(r#"{"kind": "close_room"}"#, Some(SEND)),
            Ok(Some(json!({"kind": "close_room"})))
        );
        assert_eq!(typed_action("   ", Some(SEND)), Ok(None));
        assert!(
            typed_action("{not json", Some(SEND))
                .unwrap_err()
                .contains("not a JSON")
        );
        assert!(
            typed_action("far too long a line", Some(SEND))
                .unwrap_err()
                .contains("at most 10")
        );
        assert!(
            typed_action("hello", None)
                .unwrap_err()
                .contains("JSON actions only")
        );
        assert!(typed_action("[1]", None).is_err());
    }

    #[test]
    fn community_room_is_conversational_and_meeting_room_is_not() {
        let community = crate::protocols::well_known::find("community-room-v1").unwrap();
        assert_eq!(
            Talk::of(community.protocol_id).map(|t| t.kind),
            Some("send")
        );
        let meeting = crate::protocols::well_known::find("meeting-room-v1").unwrap();
        assert_eq!(Talk::of(meeting.protocol_id), None);
    }
}

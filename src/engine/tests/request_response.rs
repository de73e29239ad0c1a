//! request_response: one request, one response.

use super::*;

#[test]
fn request_response_is_one_exchange() {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_with(
        "request_response",
        vec![
            message("join", "guest_to_host", json!({})),
            message("ready", "host_to_guest", json!({})),
            message("ask", "guest_to_host", json!({"q": {"type": "text"}})),
            message("answer", "host_to_guest", json!({"a": {"type": "text"}})),
        ],
        json!({}),
    );
    let host = TestHooks {
        handle: Some(Box::new(|m| HookResult {
            response: Some(
                json!({"action": "answer", "a": m["q"].as_str().unwrap().to_uppercase()}),
            ),
            ..HookResult::default()
        })),
        ..TestHooks::default()
    };
    let guest = TestHooks {
        first: Some(json!({"action": "ask", "q": "hi"})),
        ..TestHooks::default()
    };
    let guest_calls = guest.calls.clone();
    let (host, guest) = play(&spec, host, guest, dir.path(), |c| Box::new(c));
    assert!(host.unwrap().completed && guest.unwrap().completed);
    assert_eq!(guest_calls.lock().unwrap()[1], "guest_handle \"answer\"");
}

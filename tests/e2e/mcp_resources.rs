//! Sessions as MCP resources, driven by the real MCP client: listing and reading a live
//! session, hostile URIs refused while the server keeps serving, subscribers (the 2025
//! `resources/subscribe` and the newest `subscriptions/listen`) hearing a session change
//! and nothing once they stopped, and `session_wait` reporting progress only to a call that
//! asked for it.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::mcp::host_rps;
use crate::support::mcp::{McpClient, join_in_human_control, play_through_mcp, register};
use crate::support::net::{Net, SESSION_LIMIT, SessionFiles, assert_clean_end};

/// How long a test waits for an update it expects.
const UPDATE_LIMIT: Duration = Duration::from_secs(10);

/// The resource URI of a session directory.
fn uri_of(dir: &Path) -> String {
    format!(
        "aigenora://sessions/{}",
        dir.file_name().unwrap().to_str().unwrap()
    )
}

/// A snapshot without its clock reading, for comparing two reads.
fn without_now(mut view: Value) -> Value {
    view.as_object_mut().unwrap().remove("now");
    view
}

/// The one JSON text a resource read returned, checked as application/json.
fn read_json(mcp: &mut McpClient, uri: &str) -> Value {
    let contents = mcp.read(uri).unwrap();
    assert_eq!(contents.len(), 1, "{contents:?}");
    assert_eq!(contents[0]["uri"], uri);
    assert_eq!(contents[0]["mimeType"], "application/json");
    serde_json::from_str(contents[0]["text"].as_str().unwrap()).unwrap()
}

/// Appends a line to the session's events, as its process would.
fn touch(dir: &Path) {
    let mut events = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("events.jsonl"))
        .unwrap();
    writeln!(
        events,
        r#"{{"ts": "2026-12-04T00:00:00Z", "type": "note"}}"#
    )
    .unwrap();
}

/// A data dir with session directories `names` (a guest's, running), and their dirs.
fn sessions(data: &Path, names: &[&str]) -> Vec<std::path::PathBuf> {
    names
        .iter()
        .map(|name| {
            let dir = data.join("sessions").join(name);
            std::fs::create_dir_all(&dir).unwrap();
            let record = json!({"role": "guest", "status": "running", "protocol_id": "abc"});
            std::fs::write(dir.join("session.json"), record.to_string()).unwrap();
            dir
        })
        .collect()
}

#[test]
fn a_live_session_is_a_resource_its_subscribers_hear_change_and_waits_report_progress() {
    let net = Net::start();
    let alice = net.agent("alice");
    let (hosting, host) = host_rps(&alice);
    let mut waiter = McpClient::start(&alice.dir, net.url());
    assert_eq!(
        waiter.info()["capabilities"]["resources"],
        json!({"subscribe": true})
    );

    // Waiting on a host nobody has joined yet: progress each second with a token, none
    // without one.
    let which = json!({"state_dir": host.state_dir, "timeout_seconds": 2.5});
    waiter.call_later("session_wait", which.clone(), true);
    let waited = waiter.answer();
    let progress = waited.progress.clone();
    assert_eq!(waited.ok()["reason"], "timeout");
    assert!(progress.len() >= 2, "{progress:?}");
    for (step, pair) in progress.windows(2).enumerate() {
        let (before, after) = (&pair[0]["progress"], &pair[1]["progress"]);
        assert!(
            before.as_f64() < after.as_f64(),
            "step {step}: {progress:?}"
        );
    }
    let host_name = host.state_dir.file_name().unwrap().to_str().unwrap();
    for report in &progress {
        assert_eq!(report["total"], 2.5, "{report}");
        let message = report["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!(
                "waiting for a decision window after #0 or the end of session {host_name}: status hosting"
            )),
            "{message}"
        );
    }
    waiter.call_later("session_wait", which, false);
    let quiet = waiter.answer();
    assert_eq!(quiet.progress, Vec::<Value>::new());
    assert_eq!(quiet.ok()["reason"], "timeout");

    // The same wait through the whole game: notified as the host's session moves on.
    let whole = json!({"state_dir": host.state_dir, "timeout_seconds": SESSION_LIMIT.as_secs()});
    waiter.call_later("session_wait", whole, true);

    let bob_dir = net.work.path().join("bob");
    let mut bob = McpClient::start(&bob_dir, net.url());
    register(&mut bob, "bob");
    let state_dir = join_in_human_control(&mut bob, hosting["post_id"].as_str().unwrap());
    let guest_dir = Path::new(state_dir.as_str().unwrap()).to_path_buf();
    let uri = uri_of(&guest_dir);

    let mut legacy = McpClient::start_legacy(&bob_dir, net.url());
    let (listed, templates) = legacy.resources();
    let resource = listed.iter().find(|r| r["uri"] == uri.as_str()).unwrap();
    assert_eq!(
        resource["name"],
        guest_dir.file_name().unwrap().to_str().unwrap()
    );
    assert_eq!(resource["mimeType"], "application/json");
    assert!(
        resource["description"]
            .as_str()
            .unwrap()
            .starts_with("guest session"),
        "{resource}"
    );
    assert_eq!(templates[0]["uriTemplate"], "aigenora://sessions/{session}");
    legacy.subscribe(&uri).unwrap();
    assert_eq!(bob.listen(&[&uri]), [uri.as_str()]);

    let answered = play_through_mcp(&mut bob, &state_dir);
    assert!(answered >= 2, "{answered}");
    assert_eq!(bob.next_update(UPDATE_LIMIT), Some(uri.clone()));
    assert_eq!(legacy.next_update(UPDATE_LIMIT), Some(uri.clone()));

    let read = read_json(&mut legacy, &uri);
    assert_eq!(read["status"], "closed", "{read}");
    let snapshot = bob
        .call("session_snapshot", json!({"state_dir": state_dir}))
        .ok();
    assert_eq!(without_now(read), without_now(snapshot));

    let waited = waiter.answer();
    let progress = waited.progress.clone();
    assert_eq!(waited.ok()["reason"], "ended");
    let messages: Vec<&str> = progress
        .iter()
        .map(|p| p["message"].as_str().unwrap())
        .collect();
    assert!(
        messages.iter().any(|m| m.contains(": status running")),
        "{messages:?}"
    );
    assert!(
        messages.windows(2).any(|pair| pair[0] != pair[1]),
        "told when the session moved on: {messages:?}"
    );
    for report in &progress {
        assert_eq!(report["total"], SESSION_LIMIT.as_secs_f64(), "{report}");
    }
    assert_clean_end(&host.wait_final(), &SessionFiles::read(&guest_dir));
}

#[test]
fn hostile_resource_uris_are_refused_with_their_reason_and_the_server_keeps_serving() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("agent");
    let good = sessions(&data, &["guest-1", "host-2", "nosession"]);
    std::fs::remove_file(good[2].join("session.json")).unwrap();
    // A session elsewhere, linked into the data dir's sessions.
    let outside = sessions(&work.path().join("elsewhere"), &["secret"]);
    std::os::unix::fs::symlink(&outside[0], data.join("sessions/linked")).unwrap();
    let mut mcp = McpClient::start_legacy(&data, "http://127.0.0.1:9");

    let (listed, _) = mcp.resources();
    let mut uris: Vec<&str> = listed.iter().map(|r| r["uri"].as_str().unwrap()).collect();
    uris.sort();
    assert_eq!(
        uris,
        ["aigenora://sessions/guest-1", "aigenora://sessions/host-2"]
    );

    let long = format!("aigenora://sessions/{}", "a".repeat(300));
    let path = "a session URI names one session directory: no '/', '.' or '..'";
    let encoded = "percent-encoded characters are not accepted in a session URI";
    let refusals = [
        (
            "file:///etc/passwd",
            "not a session URI: expected aigenora://sessions/{session}",
        ),
        (
            "aigenora://SESSIONS/guest-1",
            "not a session URI: expected aigenora://sessions/{session}",
        ),
        ("aigenora://sessions/..", path),
        ("aigenora://sessions/../../etc", path),
        ("aigenora://sessions//etc/passwd", path),
        ("aigenora://sessions/guest-1/session.json", path),
        ("aigenora://sessions/", path),
        ("aigenora://sessions/%2e%2e", encoded),
        ("aigenora://sessions/..%2fetc", encoded),
        (
            "aigenora://sessions/guest 1",
            "a session name has only letters, digits, '-', '_' and '.'",
        ),
        (
            "aigenora://sessions/linked",
            "session linked is a symbolic link, not a session directory",
        ),
        (
            "aigenora://sessions/nosession",
            "no session nosession in this data dir",
        ),
        (
            "aigenora://sessions/no-such",
            "no session no-such in this data dir",
        ),
        (long.as_str(), "resource URI longer than 256 bytes"),
    ];
    for (uri, reason) in refusals {
        assert_eq!(mcp.read(uri), Err(reason.to_string()), "{uri}");
        assert_eq!(mcp.subscribe(uri), Err(reason.to_string()), "{uri}");
    }
    // Still serving, and reading what session_snapshot shows.
    let read = read_json(&mut mcp, "aigenora://sessions/guest-1");
    let snapshot = mcp
        .call("session_snapshot", json!({"state_dir": good[0]}))
        .ok();
    assert_eq!(without_now(read), without_now(snapshot));
    assert_eq!(
        read_json(&mut mcp, "aigenora://sessions/host-2")["status"],
        "running"
    );
}

/// A subscriber hears its session change and, once it unsubscribed, hears nothing more of
/// it: a later change of another session, which a fresh watcher can report no sooner than
/// one poll after the first change, is the next update to arrive.
#[test]
fn subscribers_hear_their_sessions_change_until_they_stop() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("agent");
    let dirs = sessions(&data, &["guest-1", "host-2"]);
    let (first, second) = (uri_of(&dirs[0]), uri_of(&dirs[1]));

    // The 2025 way: resources/subscribe and unsubscribe.
    let mut legacy = McpClient::start_legacy(&data, "http://127.0.0.1:9");
    legacy.subscribe(&first).unwrap();
    legacy.subscribe(&first).unwrap();
    touch(&dirs[0]);
    assert_eq!(legacy.next_update(UPDATE_LIMIT), Some(first.clone()));
    legacy.unsubscribe(&first).unwrap();
    assert_eq!(
        legacy.unsubscribe(&first),
        Err("not subscribed to that resource".to_string())
    );
    touch(&dirs[0]);
    legacy.subscribe(&second).unwrap();
    touch(&dirs[1]);
    assert_eq!(legacy.next_update(UPDATE_LIMIT), Some(second.clone()));

    // The newest way: a subscriptions/listen stream, ended by the client.
    let mut modern = McpClient::start(&data, "http://127.0.0.1:9");
    let honored = modern.listen(&[&first, "aigenora://sessions/..", "file:///etc/passwd"]);
    assert_eq!(honored, [first.as_str()]);
    touch(&dirs[0]);
    assert_eq!(modern.next_update(UPDATE_LIMIT), Some(first.clone()));
    modern.unlisten();
    touch(&dirs[0]);
    assert_eq!(modern.listen(&[&second]), [second.as_str()]);
    touch(&dirs[1]);
    assert_eq!(modern.next_update(UPDATE_LIMIT), Some(second.clone()));
}

/// One client watches at most 32 sessions; an unsubscribe makes room again.
#[test]
fn a_client_watches_a_bounded_number_of_sessions() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("agent");
    let names: Vec<String> = (0..33).map(|n| format!("guest-{n}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let dirs = sessions(&data, &names);
    let uris: Vec<String> = dirs.iter().map(|dir| uri_of(dir)).collect();
    let mut mcp = McpClient::start_legacy(&data, "http://127.0.0.1:9");
    for uri in &uris[..32] {
        mcp.subscribe(uri).unwrap();
    }
    let full = "at most 32 sessions are watched per client (unsubscribe first)";
    assert_eq!(mcp.subscribe(&uris[32]), Err(full.to_string()));
    mcp.unsubscribe(&uris[0]).unwrap();
    mcp.subscribe(&uris[32]).unwrap();
    touch(&dirs[32]);
    assert_eq!(mcp.next_update(UPDATE_LIMIT), Some(uris[32].clone()));
}

//! People in a room, across real processes (our server, iroh on loopback, our Community Room
//! hooks on the leader): a member in human control types lines into its `join` — a line of
//! text becomes a message, a JSON object is sent as it is, a bad line, an overlong one and
//! a line with terminal escapes cost one error line each and nothing else — and the room's
//! steps are shown on its terminal, escaped; the owner closes the room from its own
//! terminal. And from the browser controller: a member's page shows the room's members
//! and seats and sends a message and a JSON action that reach another member's verified view.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::support::browser::{Browser, browser_binaries, controller_url};
use crate::support::net::{Agent, Net, wait_until};
use crate::support::process::Proc;
use crate::support::reference::reference_contract;

const LIMIT: Duration = Duration::from_secs(120);

/// The room as a seat last verified it (`room.json`).
pub fn room(session: &Path) -> Value {
    std::fs::read_to_string(session.join("room.json"))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

/// The texts of the messages in a seat's verified view.
fn texts(session: &Path) -> Vec<String> {
    room(session)["view"]["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .filter_map(|m| m["text"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn wait_for_text(session: &Path, text: &str) {
    let seen = wait_until(LIMIT, || {
        texts(session).iter().any(|t| t == text).then_some(())
    });
    assert!(
        seen.is_some(),
        "{} never showed {text:?}: {:?}",
        session.display(),
        texts(session)
    );
}

/// The Community Room contract registered on the server by `owner`, and its room hosted
/// by `owner` (seat 0) on our hooks with `flags`.
fn open_room(owner: &Agent, flags: &[&str]) -> (Proc, String) {
    let contract = reference_contract("community-room-v1");
    owner.ok(&["protocol", "register", contract.spec.to_str().unwrap()]);
    let mut args = vec!["--protocol", "community-room-v1"];
    args.extend_from_slice(flags);
    owner.host_with(&args)
}

fn wait_for_output(process: &Proc, needle: &str) {
    process.wait_for_line(needle, LIMIT);
}

#[test]
fn a_member_talks_to_the_room_from_its_terminal() {
    let net = Net::start();
    let owner = net.agent("owner");
    let (ann, bob) = (net.agent("ann"), net.agent("bob"));
    let (mut hosting, post_id) = open_room(&owner, &["--control-mode", "human"]);
    let mut talking = ann.join(&post_id, &["--control-mode", "human"]);
    let listening = bob.join(&post_id, &["--control-mode", "autonomous"]);
    let (ann_room, bob_room) = (ann.room_session(), bob.room_session());
    wait_for_output(&talking, "[room] ");

    talking.say("hello from the terminal");
    wait_for_text(&bob_room, "hello from the terminal");
    wait_for_output(&talking, ": hello from the terminal");

    talking.say(r#"{"kind": "set_topic", "topic": "typed as JSON"}"#);
    let topic = wait_until(LIMIT, || {
        (room(&bob_room)["view"]["topic"] == "typed as JSON").then_some(())
    });
    assert!(
        topic.is_some(),
        "the JSON line reached bob: {}",
        room(&bob_room)
    );

    talking.say("{not json");
    wait_for_output(&talking, "error: the line is not a JSON object");
    talking.say(&"x".repeat(70 * 1024));
    wait_for_output(&talking, "error: the line is longer than");
    talking.say("still here \u{1b}[31m after all that");
    wait_for_text(&bob_room, "still here \u{1b}[31m after all that");
    wait_for_output(&talking, ": still here \\x1b[31m after all that");
    assert!(
        !talking.stdout().contains('\u{1b}'),
        "network text reaches the terminal escaped"
    );
    let said: Vec<String> = texts(&ann_room)
        .into_iter()
        .filter(|t| !t.starts_with("Seat ") && !t.starts_with("Authority"))
        .collect();
    assert_eq!(
        said,
        [
            "hello from the terminal",
            "still here \u{1b}[31m after all that"
        ],
        "exactly the good lines became messages, in order"
    );

    // The owner (seat 0, the leader) closes the room from its own terminal.
    hosting.say(r#"{"kind": "close_room"}"#);
    for process in [talking, hosting] {
        let finished = process.succeed(LIMIT);
        assert!(
            finished.stdout.contains("[room] the room ended (closed)"),
            "{}",
            finished.stdout
        );
    }
    // An autonomous member has no room terminal: it shows no steps.
    let finished = listening.succeed(LIMIT);
    assert!(!finished.stdout.contains("[room] "), "{}", finished.stdout);
}

#[tokio::test]
async fn a_member_takes_part_from_the_browser() {
    browser_binaries();
    let net = Net::start();
    let owner = net.agent("owner");
    let (ann, bob) = (net.agent("ann"), net.agent("bob"));
    let (hosting, post_id) = open_room(&owner, &["--control-mode", "autonomous"]);
    let paging = ann.join(
        &post_id,
        &["--control-mode", "human", "--web", "--no-prompt"],
    );
    let listening = bob.join(&post_id, &["--control-mode", "autonomous"]);
    let bob_room = bob.room_session();
    let url = controller_url(&paging);
    let page = Browser::open(&url).await;

    let members = page.until("the members", "#room-members", "leads").await;
    let ann_key = ann.public_key();
    let owner_key = owner.public_key();
    assert!(
        members.contains(&format!("{} · active · leads", &owner_key[..8])),
        "{members}"
    );
    assert!(
        members.contains(&format!("{} · active · you", &ann_key[..8])),
        "{members}"
    );
    page.until("bob's seat", "#room-members", &bob.public_key()[..8])
        .await;

    page.client
        .find(fantoccini::Locator::Css("#room-text"))
        .await
        .unwrap()
        .send_keys("hello from the page")
        .await
        .unwrap();
    page.click("#room-say button").await;
    wait_for_text(&bob_room, "hello from the page");
    page.until("ann's own view", "#room-view", ": hello from the page")
        .await;

    page.client
        .find(fantoccini::Locator::Css("#room-json"))
        .await
        .unwrap()
        .send_keys(r#"{"kind": "set_topic", "topic": "set from the page"}"#)
        .await
        .unwrap();
    page.click("#room-act button").await;
    let topic = wait_until(LIMIT, || {
        (room(&bob_room)["view"]["topic"] == "set from the page").then_some(())
    });
    assert!(topic.is_some(), "the page's JSON action reached bob");
    page.until("the step's events", "#room-events", "topic_changed")
        .await;

    // A refusal is shown and the room goes on.
    page.client
        .find(fantoccini::Locator::Css("#room-json"))
        .await
        .unwrap()
        .send_keys("[1, 2]")
        .await
        .unwrap();
    page.click("#room-act button").await;
    page.until(
        "the refusal",
        "#room-feedback",
        "Not sent: the action must be a JSON object",
    )
    .await;
    page.close().await;
    for process in [paging, listening, hosting] {
        process.terminate(LIMIT);
    }
}

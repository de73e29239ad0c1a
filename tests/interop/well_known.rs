//! Our hooks for the network's well-known contracts against the reference's own hooks
//! (`aigenora==0.1.4`, never skipped), across processes through our server. For every
//! contract we cover: a reference host and our guest (`join` fetches the spec and installs our
//! hooks), and our host (`host --protocol <id>`) and a reference guest, each played to a
//! completed game that both sides and the server see end the same way (Human Chat: lines
//! typed on each side reach the other, and either side's /quit ends both). The specs are the
//! installed reference package's (found through its index.json), registered on our server
//! by the reference agent; our agent starts with none. The two card games (mental poker) are
//! played the same way in `mental_poker.rs`, which checks their audits and receipts too.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::support::net::{
    Agent, Background, Net, SESSION_LIMIT, SessionFiles, assert_server_session, wait_until,
};
use crate::support::process::Proc;
use crate::support::reference::{ReferenceAgent, reference_contract};

/// A server with the contract registered, our agent with an empty library, a reference agent.
fn setup(alias: &str) -> (Net, Agent, ReferenceAgent, String) {
    let net = Net::start();
    let carol = net.reference_agent("carol");
    let contract = reference_contract(alias);
    carol.register_spec(&contract.spec);
    let bob = net.agent("bob");
    (net, bob, carol, contract.protocol_id)
}

/// Both ends of one finished session, and the server's record of it.
struct Ends {
    ours: SessionFiles,
    theirs: SessionFiles,
    server: Value,
}

fn reference_hosts(alias: &str, options: &str) -> Ends {
    let (_net, bob, carol, protocol_id) = setup(alias);
    let protocol_dir = carol.protocol_dir(&protocol_id);
    let (hosting, reference) = carol.daemon(&[
        "host",
        "--protocol-dir",
        protocol_dir.to_str().unwrap(),
        "--options",
        options,
    ]);
    let post_id = hosting["post_id"].as_str().unwrap();
    let guest = bob.join(post_id, &[]).succeed(SESSION_LIMIT);
    assert!(guest.stdout.contains("(well-known)"), "{}", guest.stdout);
    Ends::collect(&bob, "guest", &reference)
}

fn our_host(alias: &str, options: &str) -> Ends {
    let (_net, bob, carol, protocol_id) = setup(alias);
    let (host, post_id) = bob.host_with(&["--protocol", alias, "--options", options]);
    let (joining, reference) = carol.daemon(&["join", &post_id]);
    assert_eq!(joining["protocol_id"], protocol_id.as_str());
    host.succeed(SESSION_LIMIT);
    Ends::collect(&bob, "host", &reference)
}

impl Ends {
    /// The ends of the session our `bob` played as `role` against the `reference` daemon,
    /// once both are over.
    fn collect(bob: &Agent, role: &str, reference: &Background) -> Ends {
        let ours = bob.session(role);
        let theirs = reference.wait_reference_end();
        let server = bob.server_session(ours.field("session_id").as_str().unwrap());
        Ends {
            ours,
            theirs,
            server,
        }
    }

    /// Both sides completed and the server holds the winner both reported (none when the
    /// game has none). Returns that winner.
    fn agreed(&self) -> Option<String> {
        let Ends {
            ours,
            theirs,
            server,
        } = self;
        assert_eq!(ours.status(), "closed", "ours: {}", ours.info);
        assert_eq!(ours.field("completed"), true, "ours: {}", ours.info);
        assert_eq!(ours.field("protocol_source"), "well-known", "{}", ours.info);
        if theirs.is_final() {
            assert_eq!(theirs.status(), "closed", "reference: {}", theirs.info);
        }
        let ended = theirs.events_of("session_ended");
        assert_eq!(
            ended.last().map(|end| &end["completed"]),
            Some(&Value::Bool(true)),
            "reference: {:?}",
            theirs.events
        );
        let winner = ours.field("winner").as_str().map(str::to_string);
        assert_server_session(server, "closed", winner.as_deref());
        winner
    }

    /// Both sides logged the same last protocol message (the game's final verdict). The
    /// reference logs none in free mode.
    fn same_last_message(&self) {
        let last = |files: &SessionFiles| {
            files
                .events_of("protocol_message")
                .last()
                .map(|message| message["msg"].clone())
        };
        assert!(last(&self.theirs).is_some(), "{:?}", self.theirs.events);
        assert_eq!(
            last(&self.ours),
            last(&self.theirs),
            "the last message each side saw"
        );
    }
}

/// Plays `alias` in both directions and checks each end agrees.
fn both_ways(alias: &str, options: &str, outcomes: &[Option<&str>]) {
    for ends in [reference_hosts(alias, options), our_host(alias, options)] {
        ends.same_last_message();
        let winner = ends.agreed();
        assert!(outcomes.contains(&winner.as_deref()), "{alias}: {winner:?}");
    }
}

/// Plays a board game in both directions: each end agrees, and the winner recorded is the
/// one the final `round_result` names (none only when that verdict is a draw).
fn board_game_both_ways(alias: &str, options: &str) {
    for ends in [reference_hosts(alias, options), our_host(alias, options)] {
        ends.same_last_message();
        let winner = ends.agreed();
        assert_eq!(winner, ends.ours.board_verdict(), "{alias}");
    }
}

const WINNER_OR_DRAW: &[Option<&str>] = &[Some("host"), Some("guest"), Some("draw")];
const WINNER: &[Option<&str>] = &[Some("host"), Some("guest")];

#[test]
fn rock_paper_scissors_plays_the_reference_both_ways() {
    both_ways("rps-v1", r#"{"best_of": 3}"#, WINNER_OR_DRAW);
}

#[test]
fn coin_flip_plays_the_reference_both_ways() {
    both_ways("coin-flip-v1", r#"{"best_of": 3}"#, WINNER);
}

#[test]
fn guess_number_plays_the_reference_both_ways() {
    both_ways("guess-number-v1", r#"{"max_attempts": 7}"#, WINNER);
}

#[test]
fn weak_wins_all_plays_the_reference_both_ways() {
    both_ways(
        "weak-wins-all",
        r#"{"total_points": 50, "total_rounds": 4}"#,
        WINNER_OR_DRAW,
    );
}

#[test]
fn hero_duel_plays_the_reference_both_ways() {
    both_ways("hero-duel-v1", r#"{"max_rounds": 30}"#, WINNER_OR_DRAW);
}

#[test]
fn connect_four_plays_the_reference_both_ways() {
    board_game_both_ways("connect4-v1", r#"{"think_ms": 50}"#);
}

#[test]
fn gomoku_plays_the_reference_both_ways() {
    board_game_both_ways("gomoku-v1", r#"{"board_size": 9, "think_ms": 50}"#);
}

#[test]
fn reversi_plays_the_reference_both_ways() {
    board_game_both_ways("reversi-v1", r#"{"board_size": 6, "think_ms": 50}"#);
}

#[test]
fn trusted_agent_task_plays_the_reference_both_ways() {
    both_ways(
        "trusted-agent-task-v1",
        r#"{"task_goal": "say hello", "task_reply": "hello"}"#,
        &[None],
    );
}

/// The reference's free-mode inbox: `inbox.jsonl` in its engine's state dir (`<role>-<ms>/`
/// inside the daemon's dir), once the chat has started.
fn reference_inbox(reference: &Background, role: &str) -> PathBuf {
    let engine_dir = || {
        std::fs::read_dir(&reference.state_dir)
            .ok()?
            .flatten()
            .map(|entry| entry.path())
            .find(|path| {
                path.is_dir()
                    && path
                        .file_name()
                        .is_some_and(|name| name.to_string_lossy().starts_with(&format!("{role}-")))
            })
    };
    wait_until(SESSION_LIMIT, engine_dir)
        .unwrap_or_else(|| panic!("no engine dir in {}", reference.state_dir.display()))
        .join("inbox.jsonl")
}

/// A line for the reference to send, as its web controller would queue it.
fn reference_says(inbox: &PathBuf, text: &str) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(inbox)
        .unwrap();
    writeln!(file, "{}", serde_json::json!({ "text": text })).unwrap();
}

/// Waits until the reference's hooks have shown a chat line with `text` (its daemon's
/// stdout: the reference records no event for a received chat line).
fn reference_heard(reference: &Background, text: &str) {
    let log = reference.state_dir.join("daemon.out.log");
    let heard = || {
        std::fs::read_to_string(&log)
            .is_ok_and(|shown| shown.contains(&format!("[Peer] {text}")))
            .then_some(())
    };
    assert!(
        wait_until(Duration::from_secs(30), heard).is_some(),
        "the reference never received {text:?}"
    );
}

#[test]
fn human_chat_with_a_reference_host_carries_lines_both_ways() {
    let (_net, bob, carol, protocol_id) = setup("human-chat-v1");
    let protocol_dir = carol.protocol_dir(&protocol_id);
    let (hosting, reference) =
        carol.daemon(&["host", "--protocol-dir", protocol_dir.to_str().unwrap()]);
    let mut guest: Proc = bob.join(hosting["post_id"].as_str().unwrap(), &[]);
    guest.wait_for_line("peer_joined", SESSION_LIMIT);
    guest.say("hello from ours ✓");
    reference_heard(&reference, "hello from ours ✓");
    reference_says(
        &reference_inbox(&reference, "host"),
        "hi from the reference",
    );
    guest.wait_for_line("[host] hi from the reference", SESSION_LIMIT);
    guest.say("/quit");
    guest.succeed(SESSION_LIMIT);
    assert_eq!(Ends::collect(&bob, "guest", &reference).agreed(), None);
}

#[test]
fn human_chat_with_a_reference_guest_carries_lines_both_ways() {
    let (_net, bob, carol, _) = setup("human-chat-v1");
    let (mut host, post_id) = bob.host_with(&["--protocol", "human-chat-v1"]);
    let (_, reference) = carol.daemon(&["join", &post_id]);
    host.wait_for_line("peer_joined", SESSION_LIMIT);
    let inbox = reference_inbox(&reference, "guest");
    reference_says(&inbox, "hello from the reference");
    host.wait_for_line("[guest] hello from the reference", SESSION_LIMIT);
    host.say("hi from ours ✓");
    reference_heard(&reference, "hi from ours ✓");
    reference_says(&inbox, "/quit");
    host.succeed(SESSION_LIMIT);
    assert_eq!(Ends::collect(&bob, "host", &reference).agreed(), None);
}

#[test]
fn protocol_fetch_of_a_well_known_id_brings_our_hooks_not_a_skeleton() {
    let (_net, bob, _carol, protocol_id) = setup("connect4-v1");
    let fetched: Value =
        serde_json::from_str(&bob.ok(&["protocol", "fetch", &protocol_id, "--json"])).unwrap();
    assert_eq!(fetched["hooks"], "well-known", "{fetched}");
    assert_eq!(fetched["hooks_skeleton_written"], false, "{fetched}");
    let dir = crate::support::reference::library_dir(&bob.dir, &protocol_id);
    let hooks = std::fs::read_to_string(dir.join("hooks.py")).unwrap();
    assert_eq!(
        hooks,
        aigenora::protocols::well_known::by_id(&protocol_id)
            .unwrap()
            .hooks_py
    );
}

//! The terminal that asks, driven through a pseudo-terminal: a human guest sees the legal
//! moves numbered, gets a refusal for a bad one, plays by number; a hybrid guest sees its
//! agent's move and the time left ticking on the prompt line, and lets the move stand with
//! Enter; a person plays a card game to its end, seeing the table and the hand at every turn.

use rexpect::session::spawn_command;

use crate::support::net::{Net, SESSION_LIMIT};

const ONE_ROUND: &str = r#"{"best_of": 1, "termination": "fixed_rounds", "moves": "rock"}"#;

#[test]
fn a_human_at_a_terminal_is_asked_refused_and_plays_by_number() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, post_id) = alice.host(
        "rock-paper-scissors",
        &["--control-mode", "autonomous", "--options", ONE_ROUND],
    );
    let join = bob.command(&["join", &post_id, "--control-mode", "human"]);
    let mut pty = spawn_command(join, Some(SESSION_LIMIT.as_millis() as u64)).unwrap();
    pty.exp_string("Your move (round 0, you are the guest)")
        .unwrap();
    pty.exp_string("Legal moves: 1) rock   2) paper   3) scissors")
        .unwrap();
    pty.exp_string("s left] choice > ").unwrap();
    pty.send_line("banana").unwrap();
    pty.exp_string("refused: choice must be rock, paper or scissors; try again")
        .unwrap();
    pty.send_line("2").unwrap();
    pty.exp_string("-> paper").unwrap();
    pty.exp_string("done").unwrap();
    pty.exp_eof().unwrap();
    assert!(host.finish(SESSION_LIMIT).status.success());
    let guest = bob.session("guest");
    assert_eq!(guest.status(), "closed", "{}", guest.info);
    assert_eq!(guest.field("winner"), "guest");
    let closed = guest.events_of("decision_window_closed");
    assert_eq!(closed[0]["origin"], "terminal");
}

#[test]
fn a_hybrid_terminal_shows_the_agents_move_and_enter_plays_it() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, post_id) = alice.host(
        "rock-paper-scissors",
        &["--control-mode", "autonomous", "--options", ONE_ROUND],
    );
    let join = bob.command(&["join", &post_id, "--think-seconds", "60"]);
    let mut pty = spawn_command(join, Some(SESSION_LIMIT.as_millis() as u64)).unwrap();
    pty.exp_string("Your agent is about to move (round 0")
        .unwrap();
    let (_, intended) = pty.exp_regex("Agent's move: [a-z]+").unwrap();
    let intended = intended.trim_start_matches("Agent's move: ").to_string();
    pty.exp_string("s left] choice > ").unwrap();
    // The clock on the prompt line is redrawn in place as the seconds pass.
    pty.exp_regex(r"\x1b7\r\[ 5[0-9] s left\]\x1b8").unwrap();
    pty.exp_regex(r"\x1b7\r\[ 5[0-9] s left\]\x1b8").unwrap();
    pty.send_line("").unwrap();
    pty.exp_string(&format!("-> {intended}")).unwrap();
    pty.exp_string("done").unwrap();
    pty.exp_eof().unwrap();
    assert!(host.finish(SESSION_LIMIT).status.success());
    let guest = bob.session("guest");
    let closed = guest.events_of("decision_window_closed");
    assert_eq!(closed[0]["decision"]["choice"], intended.as_str());
}

/// A person plays a whole game of Crazy Eights (our hooks for the network's contract, the
/// spec from the installed reference package) at the terminal: each turn shows the table and
/// the hand with the legal moves numbered; a card that is not legal is refused and the window
/// asks again; the game is played to its end by number.
#[test]
fn a_human_plays_crazy_eights_at_the_terminal() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let spec = crate::support::reference::reference_contract("crazy-eights-v1").spec;
    alice.ok(&["protocol", "register", spec.to_str().unwrap()]);
    let (host, post_id) = alice.host_with(&[
        "--protocol",
        "crazy-eights-v1",
        "--control-mode",
        "autonomous",
        "--options",
        r#"{"hand_size": 3}"#,
    ]);
    let join = bob.command(&["join", &post_id, "--control-mode", "human"]);
    let mut pty = spawn_command(join, Some(SESSION_LIMIT.as_millis() as u64)).unwrap();
    pty.exp_string("Your move (action_seq 0, you are the guest)")
        .unwrap();
    pty.exp_string("your hand: ").unwrap();
    pty.exp_string("Legal moves: 1) ").unwrap();
    pty.exp_string("s left] move > ").unwrap();
    pty.send_line("ZZ").unwrap();
    pty.exp_string("refused: move must be ").unwrap();
    let mut turns = 1;
    loop {
        pty.send_line("1").unwrap();
        let (_, seen) = pty
            .exp_regex(r"(Your move \(action_seq \d+|\ndone)")
            .unwrap();
        if seen.contains("done") {
            break;
        }
        turns += 1;
        pty.exp_string("s left] move > ").unwrap();
    }
    pty.exp_eof().unwrap();
    assert!(host.finish(SESSION_LIMIT).status.success());
    let guest = bob.session("guest");
    assert_eq!(guest.status(), "closed", "{}", guest.info);
    let closed = guest.events_of("decision_window_closed");
    assert_eq!(closed.len(), turns);
    assert!(closed.iter().all(|window| window["origin"] == "terminal"));
    assert_eq!(guest.field("winner"), alice.session("host").field("winner"));
}

//! `aigenora protocol test` on a room: the reference's Community Room hooks, unchanged, played
//! through a room's whole life (scripted actions, a late join, a departure, a failover) with
//! every envelope verified by its member; an `abort` room has no failover; hooks that break
//! the room fail the test in one line. Our own rooms — the poll-room built-in and our hooks
//! for the network's Community Room and Meeting Room (the hooks a contract's id gets) — play
//! by themselves through the same life to the room's end, and four automatic seats play our
//! Texas Hold'em table to the match's end, our Contract Bridge board and our Four-player
//! Landlord round to their scores and our Upgrade (Tractor) match to its end, each through a
//! failover; our Aether Sigil match to its last channeler and our Classical Mahjong hand to
//! its score, through a failover too.

use std::path::{Path, PathBuf};

use aigenora::protocols::well_known;
use aigenora::spec::Spec;
use serde_json::{Value, json};

use crate::support::cli::{aigenora, protocol_test_json};
use crate::support::reference::reference_contract;

/// A copy of the reference's Community Room (spec and hooks) in `into`, its spec edited.
fn community_room(into: &Path, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let source = reference_contract("community-room-v1").spec;
    let dir = into.join("room");
    std::fs::create_dir_all(&dir).unwrap();
    let mut spec: Value = serde_json::from_str(&std::fs::read_to_string(&source).unwrap()).unwrap();
    edit(&mut spec);
    std::fs::write(dir.join("spec.json"), spec.to_string()).unwrap();
    std::fs::copy(source.with_file_name("hooks.py"), dir.join("hooks.py")).unwrap();
    dir
}

fn actions(dir: &Path, lines: &[Value]) -> PathBuf {
    let path = dir.join("actions.jsonl");
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_reference_room_plays_its_whole_life_with_every_envelope_verified() {
    let work = tempfile::tempdir().unwrap();
    let room = community_room(work.path(), |_| {});
    let script = actions(
        work.path(),
        &[
            json!({"seat": 1, "action": {"kind": "send", "text": "hello room"}}),
            json!({"seat": 0, "action": {"kind": "set_topic", "topic": "tests"}}),
            json!({"seat": 1, "action": {"kind": "dance"}}),
            json!({"seat": 1, "action": {"kind": "send", "text": "after a refusal"}}),
            json!({"seat": 1, "action": {"kind": "send", "text": "after the failover"}}),
        ],
    );
    let (code, report, _state) = protocol_test_json(
        room.to_str().unwrap(),
        &[
            "--actions",
            script.to_str().unwrap(),
            "--actions-before-failover",
            "4",
            "--max-actions",
            "4",
        ],
    );
    assert_eq!(code, 0, "{report}");
    let room_report = &report["room"];
    assert_eq!(report["passed"], true);
    assert_eq!(
        room_report["members"], 2,
        "min_ready starts with min_participants"
    );
    assert_eq!(room_report["accepted"], 4, "{room_report}");
    assert_eq!(room_report["rejected"].as_array().unwrap().len(), 1);
    assert!(
        room_report["rejected"][0]
            .as_str()
            .unwrap()
            .contains("kind must be send")
    );
    assert_eq!(
        (
            room_report["late_join"].as_bool(),
            room_report["departure"].as_bool()
        ),
        (Some(true), Some(true))
    );
    assert_eq!(
        room_report["failover_from"], 5,
        "3 actions, a join and a departure before it"
    );
    assert!(
        room_report["envelopes_verified"].as_u64().unwrap() >= 12,
        "{room_report}"
    );
    // Each member left its last verified view: the message sent after the failover is there.
    let dir = PathBuf::from(room_report["dir"].as_str().unwrap());
    let seat: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("seat-1.json")).unwrap()).unwrap();
    let texts: Vec<&str> = seat["view"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "message")
        .filter_map(|m| m["text"].as_str())
        .collect();
    assert_eq!(
        texts,
        ["hello room", "after a refusal", "after the failover"]
    );
    let system: Vec<&Value> = seat["view"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["kind"] == "system")
        .collect();
    assert!(
        system
            .iter()
            .any(|m| m["text"].as_str().unwrap().starts_with("Authority moved")),
        "{system:?}"
    );
    assert_eq!(seat["checkpoint"]["leader_epoch"], 1);
}

#[test]
fn an_abort_room_has_no_failover_and_the_text_report_says_so() {
    let work = tempfile::tempdir().unwrap();
    let room = community_room(work.path(), |spec| {
        spec["flow"]["group"]["recovery_mode"] = json!("abort")
    });
    let output = aigenora()
        .args(["protocol", "test", room.to_str().unwrap(), "--state-base"])
        .arg(work.path().join("state"))
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("no failover (recovery_mode abort"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[OK] protocol test passed (room still open"),
        "{stdout}"
    );
}

#[test]
fn hooks_that_break_the_room_fail_the_test_in_one_line() {
    let work = tempfile::tempdir().unwrap();
    let room = community_room(work.path(), |_| {});
    let hooks = std::fs::read_to_string(room.join("hooks.py")).unwrap();
    std::fs::write(
        room.join("hooks.py"),
        hooks + "\n    def proto_group_view(self, state, viewer):\n        return {'score': 1.5}\n",
    )
    .unwrap();
    let output = aigenora()
        .args(["protocol", "test", room.to_str().unwrap(), "--state-base"])
        .arg(work.path().join("state"))
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("floating-point number (1.5)"), "{stderr}");
    let bad = actions(work.path(), &[json!({"seat": "one"})]);
    let output = aigenora()
        .args(["protocol", "test", room.to_str().unwrap(), "--actions"])
        .arg(&bad)
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with("error: --actions ") && stderr.contains("actions.jsonl:1:"),
        "{stderr}"
    );
}

/// Our hooks for a well-known room beside the reference's spec of it, laid out the way
/// `join`, `host --protocol` and `protocol fetch` lay out a fetched contract: the hooks that
/// land there for its protocol_id are ours.
fn our_well_known_room(into: &Path, alias: &str) -> PathBuf {
    let contract = reference_contract(alias);
    let dir = into.join(alias);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&contract.spec, dir.join("spec.json")).unwrap();
    let spec = Spec::load_checked(&dir.join("spec.json")).unwrap();
    let ours = well_known::find(alias).unwrap();
    assert_eq!(ours.protocol_id, contract.protocol_id, "{alias}");
    assert_eq!(
        well_known::provide_hooks(&spec, &dir).unwrap(),
        well_known::ProvidedHooks::WellKnown(ours)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("hooks.py")).unwrap(),
        ours.hooks_py,
        "{alias}"
    );
    dir
}

#[test]
fn our_rooms_play_their_whole_life_to_the_end() {
    let work = tempfile::tempdir().unwrap();
    // (protocol, the outcome, the flag that marks the end in a member's view)
    let cases = [
        ("poll-room".to_string(), "5 polls decided", "ended"),
        (
            path_text(&our_well_known_room(work.path(), "community-room-v1")),
            "closed",
            "closed",
        ),
        (
            path_text(&our_well_known_room(work.path(), "meeting-room-v1")),
            "ended",
            "ended",
        ),
    ];
    for (protocol, outcome, ended) in cases {
        let (code, report, _state) = protocol_test_json(&protocol, &[]);
        assert_eq!(code, 0, "{protocol}: {report}");
        let room = &report["room"];
        assert_eq!(
            (room["completed"].as_bool(), room["outcome"].as_str()),
            (Some(true), Some(outcome)),
            "{protocol}: {room}"
        );
        assert_eq!(room["members"], 2, "{protocol}: {room}");
        assert_eq!(room["rejected"], json!([]), "{protocol}: {room}");
        for stage in ["late_join", "departure", "rejoined"] {
            assert_eq!(room[stage], true, "{protocol}: {stage}: {room}");
        }
        let from = room["failover_from"].as_u64().expect("a failover");
        let steps = room["steps"].as_u64().unwrap();
        assert!(
            from >= 10 && steps > from + 3,
            "{protocol}: actions before and after the failover: {room}"
        );
        assert_eq!(
            room["accepted"].as_u64().unwrap() + 4,
            steps,
            "{protocol}: every step but the join, the departure, the new epoch and the rejoin \
             is an action: {room}"
        );
        let dir = PathBuf::from(room["dir"].as_str().unwrap());
        for seat in [0, 1] {
            let record: Value = serde_json::from_str(
                &std::fs::read_to_string(dir.join(format!("seat-{seat}.json"))).unwrap(),
            )
            .unwrap();
            assert_eq!(record["view"][ended], true, "{protocol} seat {seat}");
            assert_eq!(record["checkpoint"]["completed"], true, "{protocol}");
            assert_eq!(record["checkpoint"]["leader_epoch"], 1, "{protocol}");
        }
    }
}

/// Four automatic seats play our table `alias` through `protocol test`, its failover
/// included: every action legal, the table's end reached after a redeal. Returns the report's
/// room and the last views of the seats left after the failover (1-3; the old leader's seat
/// 0 has no member from then on).
fn four_seats_through_a_failover(
    alias: &str,
    options: &str,
    max_actions: &str,
) -> (Value, Vec<Value>) {
    let work = tempfile::tempdir().unwrap();
    let table = our_well_known_room(work.path(), alias);
    let (code, report, _state) = protocol_test_json(
        &path_text(&table),
        &["--options", options, "--max-actions", max_actions],
    );
    assert_eq!(code, 0, "{report}");
    let room = report["room"].clone();
    assert_eq!(
        room["members"], 4,
        "fixed_full starts with every seat: {room}"
    );
    assert_eq!(
        room["rejected"],
        json!([]),
        "the automatic seats only act legally: {room}"
    );
    assert_eq!(room["completed"], true, "{room}");
    for stage in ["late_join", "departure", "rejoined"] {
        assert_eq!(
            room[stage], false,
            "no late join and fixed seats: {stage}: {room}"
        );
    }
    assert!(
        room["failover_from"].as_u64().is_some(),
        "restart_round has a failover: {room}"
    );
    let dir = PathBuf::from(room["dir"].as_str().unwrap());
    let views = [1, 2, 3]
        .map(|seat| {
            let record: Value = serde_json::from_str(
                &std::fs::read_to_string(dir.join(format!("seat-{seat}.json"))).unwrap(),
            )
            .unwrap();
            assert_eq!(record["checkpoint"]["completed"], true, "seat {seat}");
            let view = record["view"].clone();
            assert_eq!(view["phase"], "completed", "seat {seat}");
            assert_eq!(
                view["restart_count"], 1,
                "redealt after the failover: seat {seat}"
            );
            view
        })
        .to_vec();
    (room, views)
}

#[test]
fn four_automatic_seats_play_our_holdem_table_to_the_match_end_through_a_failover() {
    let (room, views) =
        four_seats_through_a_failover("texas-holdem-v1", r#"{"max_hands": 4}"#, "600");
    // After the failover the three seats left play on; the old leader's seat sits out.
    let winner = room["outcome"].as_str().unwrap();
    for view in views {
        let players = view["players"].as_object().unwrap();
        assert_eq!(players.len(), 4, "{view}");
        let stacks: Vec<u64> = players
            .values()
            .map(|p| p["stack"].as_u64().unwrap())
            .collect();
        let best = stacks.iter().max().copied();
        assert_eq!(players[winner]["stack"].as_u64(), best, "{view}");
        assert_eq!(stacks.iter().sum::<u64>(), 4000, "no chip made or lost");
    }
}

#[test]
fn four_automatic_seats_play_our_bridge_board_to_its_score_through_a_failover() {
    let (room, views) = four_seats_through_a_failover(
        "contract-bridge-v1",
        r#"{"deal_seed": "room test", "board_number": 2}"#,
        "200",
    );
    let outcome = room["outcome"].as_str().unwrap();
    let (side, result) = outcome
        .split_once('_')
        .expect("a played board, not passed out");
    // North (the old leader's seat) has no member after the failover: the new leader's
    // substitute plays its cards, so the redealt board still ends with thirteen tricks.
    for view in views {
        assert_eq!(
            (view["board_number"].clone(), view["vulnerability"].clone()),
            (json!(2), json!("ns"))
        );
        let tricks = view["trick_history"].as_array().unwrap();
        assert_eq!(tricks.len(), 13, "{view}");
        let north_played = tricks
            .iter()
            .flat_map(|trick| trick["cards"].as_array().unwrap())
            .filter(|play| play["seat"] == 0)
            .count();
        assert_eq!(north_played, 13, "North's hand was played for it");
        assert_eq!(view["contract"]["partnership"], side, "{view}");
        let scores = &view["scores"];
        let scored = if result == "made" {
            side
        } else if side == "ns" {
            "ew"
        } else {
            "ns"
        };
        assert!(scores[scored].as_u64().unwrap() > 0, "{scores}");
    }
}

#[test]
fn four_automatic_seats_play_our_landlord_round_to_its_score_through_a_failover() {
    let (room, views) = four_seats_through_a_failover(
        "four-player-landlord-v1",
        r#"{"deal_seed": "room test"}"#,
        "400",
    );
    let outcome = room["outcome"].as_str().unwrap();
    let old_leader = views[0]["turn_order"][0].clone();
    for view in views {
        // The round after the failover went to its end: the winner's hand is empty, and its
        // side is the outcome; seat 0 (the old leader's) was played for by the substitute.
        let winner = view["last_play"]["public_key"].as_str().unwrap();
        assert_eq!(view["hand_counts"][winner], 0, "{view}");
        let landlord_won = view["landlord"] == winner;
        assert_eq!(outcome, if landlord_won { "landlord" } else { "farmers" });
        let dealt = if view["landlord"] == old_leader {
            33
        } else {
            25
        };
        assert!(
            view["hand_counts"][old_leader.as_str().unwrap()]
                .as_u64()
                .unwrap()
                < dealt,
            "seat 0's cards were played for it: {view}"
        );
        let scores: Vec<i64> = view["scores"]
            .as_object()
            .unwrap()
            .values()
            .map(|score| score.as_i64().unwrap())
            .collect();
        assert_eq!(
            scores.iter().sum::<i64>(),
            0,
            "the Landlord's gain is the Farmers' loss"
        );
        let landlord_score = view["scores"][view["landlord"].as_str().unwrap()]
            .as_i64()
            .unwrap();
        assert_eq!(landlord_score > 0, landlord_won, "{view}");
    }
}

#[test]
fn four_automatic_seats_play_our_upgrade_match_to_its_end_through_a_failover() {
    let (room, views) = four_seats_through_a_failover(
        "upgrade-tractor-v1",
        r#"{"deal_seed": "room test", "max_hands": 2}"#,
        "400",
    );
    let winner = room["outcome"].as_str().unwrap();
    for view in views {
        let levels = &view["levels"];
        let level = |team: &str| levels[team].as_u64().unwrap();
        let loser = if winner == "team0" { "team1" } else { "team0" };
        assert!(level(winner) >= level(loser), "{levels}");
        assert_eq!(
            view["hand_number"], 2,
            "two hands, the first redealt: {view}"
        );
        // The last hand: 100 cards in tricks (seat 0, the old leader's, played for it by the
        // substitute), eight in the kitty, and every counting card in one or the other.
        let tricks = view["trick_history"].as_array().unwrap();
        let played = |seat: u64| -> usize {
            tricks
                .iter()
                .flat_map(|trick| trick["plays"].as_array().unwrap())
                .filter(|play| play["seat"] == seat)
                .map(|play| play["cards"].as_array().unwrap().len())
                .sum()
        };
        assert_eq!([0, 1, 2, 3].map(played), [25; 4], "{view}");
        assert_eq!(view["kitty_revealed"].as_array().unwrap().len(), 8);
        let result = &view["last_result"];
        let in_tricks: u64 = tricks.iter().map(|t| t["points"].as_u64().unwrap()).sum();
        assert_eq!(
            in_tricks + result["kitty_points"].as_u64().unwrap(),
            200,
            "{view}"
        );
        let captured = &view["captured_points"];
        assert_eq!(
            captured["team0"].as_u64().unwrap() + captured["team1"].as_u64().unwrap(),
            in_tricks + result["kitty_award"].as_u64().unwrap()
        );
        assert_eq!(result["levels"], *levels);
    }
}

#[test]
fn the_poll_room_decides_every_poll_and_says_so() {
    let work = tempfile::tempdir().unwrap();
    let output = aigenora()
        .args([
            "protocol",
            "test",
            "poll-room",
            "--options",
            r#"{"polls": 7}"#,
        ])
        .arg("--state-base")
        .arg(work.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("a late join; a departure; failover from step ")
            && stdout.contains("; the old leader rejoined"),
        "{stdout}"
    );
    assert!(
        stdout.contains("[OK] protocol test passed (room completed, outcome 7 polls decided;"),
        "{stdout}"
    );
    let room = std::fs::read_dir(work.path())
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("room-"))
        .unwrap()
        .path();
    let seat: Value =
        serde_json::from_str(&std::fs::read_to_string(room.join("seat-1.json")).unwrap()).unwrap();
    let results = seat["view"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 7);
    assert_eq!(seat["view"]["polls_left"], 0);
    for result in results {
        let counts: u64 = result["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .sum();
        assert_eq!(counts, result["voters"].as_u64().unwrap(), "{result}");
        assert!(counts >= 2, "everyone present voted: {result}");
    }
}

#[test]
fn the_demo_sends_a_room_builtin_to_protocol_test_in_one_line() {
    let output = aigenora()
        .args(["demo", "--protocol", "poll-room"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("poll-room is a room")
            && stderr.contains("`aigenora protocol test poll-room`"),
        "{stderr}"
    );
}

fn path_text(path: &Path) -> String {
    path.to_str().unwrap().to_string()
}

#[test]
fn four_automatic_seats_play_our_aether_sigil_match_to_its_last_channeler_through_a_failover() {
    let (room, views) =
        four_seats_through_a_failover("aether-sigil-v1", r#"{"deal_seed": "room test"}"#, "400");
    let winner = room["outcome"].as_str().unwrap();
    let old_leader = views[0]["turn_order"][0].as_str().unwrap().to_owned();
    for view in views {
        assert_eq!(view["winner"], winner, "{view}");
        let players = view["players"].as_object().unwrap();
        for (key, player) in players {
            // The last channeler standing wins; every other one is out at zero life.
            assert_eq!(player["defeated"], key != winner, "{view}");
            assert_eq!(
                player["life"].as_u64().unwrap() > 0,
                key == winner,
                "{view}"
            );
        }
        // Seat 0 (the old leader's) took its turns after the failover, played for it.
        assert!(
            players[&old_leader]["max_energy"].as_u64().unwrap() > 1,
            "{view}"
        );
        // Every one of the 72 cards is in a hand, the pile, a row or the discard.
        let count = |value: &Value| -> u64 {
            value
                .as_object()
                .unwrap()
                .values()
                .map(|cards| cards.as_array().unwrap().len() as u64)
                .sum()
        };
        let hands = numbers(&view["hand_counts"]).iter().sum::<i64>() as u64;
        let discard = view["discard"].as_array().unwrap().len() as u64;
        assert_eq!(
            hands
                + view["draw_count"].as_u64().unwrap()
                + discard
                + count(&view["units"])
                + count(&view["relics"]),
            72,
            "{view}"
        );
    }
}

#[test]
fn four_automatic_seats_play_our_mahjong_hand_to_its_score_through_a_failover() {
    let (room, views) = four_seats_through_a_failover(
        "classical-mahjong-v1",
        r#"{"deal_seed": "room test", "max_hands": 1}"#,
        "400",
    );
    let outcome = room["outcome"].as_str().unwrap();
    let old_leader = views[0]["turn_order"][0].as_str().unwrap().to_owned();
    for view in views {
        let scores = numbers(&view["scores"]);
        assert_eq!(scores.iter().sum::<i64>(), 100_000, "no point made or lost");
        let best = scores.iter().max().copied();
        if outcome != "draw" {
            assert_eq!(view["scores"][outcome].as_i64(), best, "{view}");
        }
        // The hand after the failover went to its end with a win (this pinned wall gives one),
        // its points paid, and seat 0 (the old leader's, the dealer) discarded by its stand-in.
        let result = &view["last_result"];
        assert!(
            ["self_draw", "discard_win"].contains(&result["kind"].as_str().unwrap()),
            "{view}"
        );
        assert_eq!(result["winner"], outcome, "{view}");
        let delta = numbers(&result["score_delta"]);
        assert_eq!(delta.iter().sum::<i64>(), 0, "{result}");
        let thrown = view["rivers"][&old_leader].as_array().unwrap().len()
            + view["melds"]
                .as_object()
                .unwrap()
                .values()
                .flat_map(|groups| groups.as_array().unwrap())
                .filter(|group| group["from"] == old_leader.as_str())
                .count();
        assert!(thrown > 0, "seat 0's tiles were played for it: {view}");
    }
}

/// The values of a JSON object of whole numbers (each seat's score, say).
fn numbers(object: &Value) -> Vec<i64> {
    object
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_i64().unwrap())
        .collect()
}

//! The controller page draws what a side's hooks publish, in headless Chromium, from a
//! session dir written by hand and served by `session web`: a board whose moves name cells
//! (its legal cells clickable, the last move and the agent's intended move marked, a click
//! overriding it) and a card game's hand (the legal cards clickable), each click submitting
//! that move for the open window; text from the snapshot, markup included, stays text. Fails
//! (never skips) when Chromium or chromedriver is missing.

use std::path::Path;

use aigenora::decision::epoch_now;
use aigenora::layout::EngineDir;
use aigenora::records::{Choices, DecisionFiles, Window, WindowMode};
use fantoccini::Locator;
use serde_json::{Value, json};

use crate::support::browser::{Browser, browser_binaries};
use crate::support::cli::aigenora;
use crate::support::net::SESSION_LIMIT;
use crate::support::process::Proc;

const HOSTILE: &str = "<img src=x id=injected>";

/// A window for `key` = `value` whose move is `field`, one of `values`: hybrid with the
/// agent's `intended` move, else human.
fn write_window(
    engine: &Path,
    (key, value): (&str, Value),
    field: &str,
    values: Vec<Value>,
    intended: Option<Value>,
) {
    // Each window a fresh number, as the engine numbers them.
    static WINDOWS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let now = epoch_now();
    let window = Window {
        seq: WINDOWS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1,
        match_key: key.into(),
        match_value: value,
        mode: if intended.is_some() {
            WindowMode::Hybrid
        } else {
            WindowMode::Human
        },
        value_field: field.into(),
        choices: Choices::OneOf { values },
        open: true,
        waiting_for: "decision".into(),
        opened_at: now,
        deadline_at: now + 600.0,
        intended,
        timeout_action: Default::default(),
    };
    let files = DecisionFiles::of(&EngineDir::open(engine));
    std::fs::create_dir_all(files.dir()).unwrap();
    std::fs::write(files.state(), serde_json::to_string(&window).unwrap()).unwrap();
}

fn write_snapshot(engine: &Path, snapshot: Value) {
    std::fs::write(
        EngineDir::open(engine).snapshot_file(),
        snapshot.to_string(),
    )
    .unwrap();
}

/// The decisions submitted so far.
fn decisions(engine: &Path) -> Vec<Value> {
    std::fs::read_to_string(DecisionFiles::of(&EngineDir::open(engine)).decisions())
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// `session web` serving the session at `session` of the data dir `data`, and its URL.
fn serve(data: &Path, session: &Path) -> (Proc, String) {
    let mut command = aigenora();
    command
        .arg("--data-dir")
        .arg(data)
        .args(["session", "web", "--json", "--state-dir"])
        .arg(session);
    let web = Proc::spawn("session web", command);
    let line = web.wait_for_line("\"url\"", SESSION_LIMIT);
    let url: Value = serde_json::from_str(line.trim()).unwrap();
    (web, url["url"].as_str().unwrap().to_string())
}

#[test]
fn the_page_draws_a_board_and_a_hand_and_plays_their_clicks() {
    browser_binaries();
    let data = tempfile::tempdir().unwrap();
    let session = data.path().join("sessions/guest-1700000000000");
    let engine = session.join("guest-1700000000001");
    std::fs::create_dir_all(&engine).unwrap();
    std::fs::write(
        session.join("session.json"),
        json!({"role": "guest", "status": "running", "local_control_mode": "human"}).to_string(),
    )
    .unwrap();
    let dot = || json!(".");
    write_snapshot(
        &engine,
        json!({
            "board": [[dot(), dot(), dot()], [dot(), "X", "O"], [dot(), "O", HOSTILE]],
            "board_layout": {"columns": ["a", "b", "c"], "rows": ["1", "2", "3"],
                              "pieces": {"X": "black", "O": "white"}, "moves_by": "cell"},
            "legal": ["a1", "c1"],
            "legal_cells": [{"move": "a1", "row": 0, "col": 0}, {"move": "c1", "row": 0, "col": 2}],
            "last_move": {"turn": 2, "player": "host", "move": "b3", "row": 2, "col": 1},
            "last_event": {"summary": HOSTILE},
        }),
    );
    write_window(
        &engine,
        ("turn", json!(3)),
        "cell",
        vec![json!("a1"), json!("c1"), json!("pass")],
        Some(json!("a1")),
    );
    let (web, url) = serve(data.path(), &session);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let browser = Browser::open(&url).await;
        let client = browser.client.clone();
        let legal = browser
            .count_until("legal cells", "#board button.cell")
            .await;
        assert_eq!(legal, 2, "a1 and c1 are the legal cells");
        let board = browser.text_of("#board").await;
        for label in ["a", "b", "c", "1", "2", "3", "X", "O"] {
            assert!(board.contains(label), "{label} in {board:?}");
        }
        assert_eq!(
            client
                .find_all(Locator::Css("#board .piece-black"))
                .await
                .unwrap()
                .len(),
            1
        );
        let last = client
            .find(Locator::Css("#board .cell.last"))
            .await
            .unwrap();
        assert_eq!(last.attr("data-col").await.unwrap().as_deref(), Some("1"));
        assert_eq!(last.attr("data-row").await.unwrap().as_deref(), Some("2"));
        let intended = client
            .find(Locator::Css("#board button.cell.intended"))
            .await
            .unwrap();
        assert_eq!(
            intended.attr("data-col").await.unwrap().as_deref(),
            Some("0"),
            "the agent's move (a1) is outlined"
        );
        browser.until("hybrid", "#turn", "about to play").await;
        let moves = browser.text_of("#moves").await;
        assert!(
            moves.contains("pass") && !moves.contains("a1"),
            "only the move off the board gets a button: {moves:?}"
        );
        assert!(
            browser.text_of("#last").await.contains(HOSTILE),
            "markup stays text"
        );
        assert!(
            client
                .find_all(Locator::Css("#injected"))
                .await
                .unwrap()
                .is_empty(),
            "no element was made from the snapshot's text"
        );
        let png = client.screenshot().await.unwrap();
        let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("controller-board.png");
        std::fs::create_dir_all(shot.parent().unwrap()).unwrap();
        std::fs::write(&shot, png).unwrap();
        browser.click("#board button.cell[data-col='2']").await;
        browser.until("the cell", "#feedback", "c1").await;

        write_snapshot(
            &engine,
            json!({"hand": ["7♣", {"id_b": "4", "rank": 10, "suit": 2, "label": "Q♥"},
                            {"id_b": "9", "rank": 1, "suit": 1}, HOSTILE],
                   "score": {"host": 4, "guest": 9}}),
        );
        write_window(
            &engine,
            ("action_seq", json!(5)),
            "card",
            vec![json!("7♣"), json!("Q♥"), json!("draw")],
            None,
        );
        browser.until("the hand", "#hand", "Q♥").await;
        let cards = browser.count_until("cards", "#hand button.card").await;
        assert_eq!(cards, 2, "the legal cards are buttons");
        let shown = browser
            .client
            .find_all(Locator::Css("#hand .card"))
            .await
            .unwrap();
        assert_eq!(
            shown.len(),
            3,
            "a card given by its label object is drawn, one without a label is not"
        );
        assert!(
            browser.text_of("#hand").await.contains("<img src=x"),
            "a card label (cut to 16 characters) stays text"
        );
        assert!(browser.text_of("#board").await.is_empty(), "no board now");
        let moves = browser.text_of("#moves").await;
        assert!(moves.contains("draw") && !moves.contains("7♣"), "{moves:?}");
        browser.click("#hand button.card.red").await;
        browser.until("the card", "#feedback", "Q♥").await;
        browser.close().await;
    });
    let submitted = decisions(&engine);
    assert_eq!(submitted.len(), 2, "{submitted:?}");
    assert_eq!(
        (&submitted[0]["turn"], &submitted[0]["cell"]),
        (&json!(3), &json!("c1"))
    );
    assert_eq!(
        (&submitted[1]["action_seq"], &submitted[1]["card"]),
        (&json!(5), &json!("Q♥"))
    );
    assert!(
        submitted.iter().all(|d| d["_meta"]["origin"] == "web"),
        "{submitted:?}"
    );
    drop(web);
}

/// A room's table and its legal actions, from a session dir written by hand (`room.json` with
/// the `table` a seat's hooks draw and the `choices` of `{label, action, amount?}` a seat's
/// legal actions come as): the page draws the hand by face and suit, the seat to act, the
/// centre and the score; a choice is a button that queues its action, one with an amount asks
/// for a number within its range and puts it in the action's field; nothing outside the range
/// is sent, and text stays text.
#[test]
fn the_page_draws_a_rooms_table_and_queues_a_clicked_choice() {
    browser_binaries();
    let data = tempfile::tempdir().unwrap();
    let session = data.path().join("sessions/guest-1700000000002");
    std::fs::create_dir_all(&session).unwrap();
    std::fs::write(
        session.join("session.json"),
        json!({"role": "guest", "status": "running", "local_control_mode": "human",
               "protocol_id": "texas-holdem-v1"})
        .to_string(),
    )
    .unwrap();
    let seat = |n: u32, you: bool, to_act: bool, cards: Value, hidden: u32| {
        json!({"seat": n, "name": format!("Seat {n}"), "you": you, "to_act": to_act,
               "facts": [{"label": "stack", "value": "990"}], "cards": cards, "hidden": hidden})
    };
    let room = json!({
        "group_id": "g-1", "leader_public_key": "aa".repeat(32), "leader_epoch": 0, "seq": 4,
        "members": [], "view": {"phase": "betting"}, "events": [], "completed": false,
        "outcome": null,
        "table": {
            "title": "Texas Hold'em", "phase": "hand 1, flop", "turn": "Your turn: call 10, raise or fold",
            "seats": [
                seat(0, false, false, json!([]), 2),
                seat(1, true, true, json!([{"suit": "diamonds", "face": "A"}, {"suit": "clubs", "face": "10"}]), 0),
                seat(2, false, false, json!([]), 2),
            ],
            "centre": [{"label": "Board", "text": "",
                        "cards": [{"suit": "hearts", "face": "K"}, {"suit": "joker", "face": "Big"},
                                  {"suit": "bamboo", "face": "3"}, {"suit": "plain", "face": HOSTILE}]}],
            "facts": [{"label": "pot", "value": "30"}],
            "score": [{"label": "Seat 1", "value": "990"}],
            "log": ["Seat 0 bet, amount 10"]
        },
        "choices": [
            {"label": "Fold", "action": {"kind": "fold"}},
            {"label": "Call 10", "action": {"kind": "call"}},
            {"label": "Raise to", "action": {"kind": "raise"},
             "amount": {"field": "amount", "min": 20, "max": 990}}
        ]
    });
    std::fs::write(session.join("room.json"), room.to_string()).unwrap();
    let (web, url) = serve(data.path(), &session);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let browser = Browser::open(&url).await;
        let client = browser.client.clone();
        browser
            .until("the turn", "#turn", "Your turn: call 10")
            .await;
        let own = browser
            .until("the hand", "#room-table .seat.you", "A♦")
            .await;
        assert!(own.contains("10♣") && own.contains("(you)"), "{own}");
        let red = client
            .find_all(Locator::Css("#room-table .seat.you .card.red"))
            .await
            .unwrap();
        assert_eq!(
            red.len(),
            1,
            "the ace of diamonds in red, the ten of clubs not"
        );
        let to_act = browser.text_of("#room-table .seat.to-act").await;
        assert!(to_act.starts_with("Seat 1 (you)"), "{to_act}");
        let others = browser.text_of("#room-table .seats.others").await;
        assert!(others.contains("2 cards face down"), "{others}");
        let centre = browser.text_of("#room-table .centre").await;
        for shown in ["K♥", "Big", "3", "bamboo", HOSTILE, "pot 30"] {
            assert!(centre.contains(shown), "{shown} in {centre:?}");
        }
        assert!(
            client
                .find_all(Locator::Css("#injected"))
                .await
                .unwrap()
                .is_empty(),
            "a card's name stays text"
        );
        let log = browser.text_of("#room-table .table-log").await;
        assert!(log.contains("Seat 0 bet, amount 10"), "{log}");
        let png = client.screenshot().await.unwrap();
        let shot =
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("controller-room-table.png");
        std::fs::write(&shot, png).unwrap();
        println!("a room's table with its choices: {}", shot.display());

        click_choice(&client, "Call 10").await;
        browser
            .until("sent", "#room-feedback", "Sent to the room.")
            .await;
        let amount = client
            .find(Locator::Css("#room-choices input.amount"))
            .await
            .unwrap();
        amount.clear().await.unwrap();
        amount.send_keys("5000").await.unwrap();
        let raise = "Raise to";
        click_choice(&client, raise).await;
        amount.clear().await.unwrap();
        amount.send_keys("40").await.unwrap();
        click_choice(&client, raise).await;
        let queued = crate::support::net::wait_until(SESSION_LIMIT, || {
            let text = std::fs::read_to_string(session.join("room-actions.jsonl")).ok()?;
            (text.lines().count() == 2).then_some(text)
        })
        .expect("two actions queued");
        let actions: Vec<Value> = queued
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap()["action"].clone())
            .collect();
        assert_eq!(
            actions,
            [
                json!({"kind": "call"}),
                json!({"kind": "raise", "amount": 40})
            ],
            "the amount out of range was not sent"
        );
        browser.close().await;
    });
    drop(web);
}

/// Clicks the choice button of the room whose label contains `label`.
async fn click_choice(client: &fantoccini::Client, label: &str) {
    let path = format!("//div[@id='room-choices']//button[contains(., '{label}')]");
    let button = client.find(Locator::XPath(&path)).await.unwrap();
    button.click().await.unwrap();
}

//! People playing our hooks for the network's card games (Crazy Eights, Briscola) through
//! `aigenora session decide`: both sides of a `protocol test` under human control, on the
//! reference package's spec. At every turn this test works out the legal moves from what the
//! snapshot shows (the table and the hand) by the contract's rules and checks the window
//! offers exactly those; a card of the hand that breaks the rules is refused with the reason
//! and the window stays open; a legal move is played; the game ends completed with one winner
//! on both sides and matching receipts.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;

use crate::support::cli::aigenora;
use crate::support::control::{decide_in, newest_dir, snapshot_of, window_of};
use crate::support::net::{SESSION_LIMIT, SessionFiles};
use crate::support::process::Proc;
use crate::support::reference::reference_contract;

const SUITS: [&str; 4] = ["C", "D", "H", "S"];

/// A protocol dir with the reference's spec for `alias` and our hooks.
fn our_card_game(alias: &str, into: &Path) -> PathBuf {
    let entry = aigenora::protocols::well_known::find(alias).unwrap();
    let dir = into.join(alias);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(reference_contract(alias).spec, dir.join("spec.json")).unwrap();
    std::fs::write(dir.join("hooks.py"), entry.hooks_py).unwrap();
    dir
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {value}"))
        .iter()
        .map(|item| item.as_str().unwrap().to_string())
        .collect()
}

/// A card label's rank and suit: "10H" -> ("10", "H").
fn split(card: &str) -> (&str, &str) {
    card.split_at(card.len() - 1)
}

/// Crazy Eights by the contract: a card plays on an empty discard, as an eight (naming any
/// suit), on the suit in force or on the top card's rank; with none, draw (or pass).
fn crazy_eights_legal(snapshot: &Value) -> Vec<String> {
    let top = &snapshot["top_card"];
    let mut legal = Vec::new();
    for card in strings(&snapshot["cards"]) {
        let (rank, suit) = split(&card);
        if rank == "8" {
            legal.extend(SUITS.iter().map(|call| format!("{card}:{call}")));
        } else if top.is_null()
            || suit == SUITS[snapshot["current_suit"].as_u64().unwrap() as usize]
            || rank == split(top["card"].as_str().unwrap()).0
        {
            legal.push(card);
        }
    }
    if legal.is_empty() {
        let stock = snapshot["stock_count"].as_u64().unwrap();
        legal.push(if stock > 0 { "draw" } else { "pass" }.to_string());
    }
    legal
}

/// Briscola by the contract: after a trick, while the stock lasts, a side short of three
/// cards draws; otherwise any card of the hand plays.
fn briscola_legal(snapshot: &Value) -> Vec<String> {
    let cards = strings(&snapshot["cards"]);
    let refill = snapshot["current_trick"].as_array().unwrap().is_empty()
        && snapshot["completed_tricks"].as_u64().unwrap() > 0
        && cards.len() < 3
        && snapshot["stock_count"].as_u64().unwrap() > 0;
    if refill { vec!["draw".into()] } else { cards }
}

/// What happened at one window.
#[derive(Debug)]
struct Turn {
    refused: Option<Value>,
    played: Value,
}

/// Answers every window of both sides under `base` until stopped.
fn people(
    base: PathBuf,
    rules: fn(&Value) -> Vec<String>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Vec<Turn>> {
    std::thread::spawn(move || {
        let mut turns = Vec::new();
        let mut seen = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            for role in ["host", "guest"] {
                let Some(dir) = newest_dir(&base, role) else {
                    continue;
                };
                let Some(window) = window_of(&dir) else {
                    continue;
                };
                let name = format!("{role}{}", window.key());
                if seen.contains(&name) {
                    continue;
                }
                seen.push(name);
                assert_eq!(
                    (window.match_key.as_str(), window.value_field.as_str()),
                    ("action_seq", "move")
                );
                let snapshot = snapshot_of(&dir);
                let legal = rules(&snapshot);
                let offered = window.choices.listed().expect("the moves are listed");
                assert_eq!(offered, legal, "{role}: {snapshot}");
                assert_eq!(strings(&snapshot["legal"]), legal, "{role}");
                let illegal = strings(&snapshot["cards"])
                    .into_iter()
                    .find(|card| !legal.contains(card));
                let refused = illegal.map(|card| {
                    let (taken, answer) = decide_in(&dir, &card);
                    assert!(!taken, "{role} {card}: {answer}");
                    assert!(
                        window_of(&dir).is_some_and(|open| open.key() == window.key()),
                        "the window stays open after a refusal"
                    );
                    answer
                });
                let (taken, played) = decide_in(&dir, legal.last().unwrap());
                assert!(taken, "{role}: {played}");
                turns.push(Turn { refused, played });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        turns
    })
}

fn people_play(alias: &str, rules: fn(&Value) -> Vec<String>) {
    let scratch = tempfile::tempdir().unwrap();
    let dir = our_card_game(alias, scratch.path());
    let base = tempfile::tempdir().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let decider = people(base.path().to_path_buf(), rules, stop.clone());
    let mut command = aigenora();
    command
        .arg("--data-dir")
        .arg(scratch.path().join("data"))
        .args(["protocol", "test"])
        .arg(&dir)
        .args(["--control-mode", "human", "--timeout", "600", "--json"])
        .arg("--state-base")
        .arg(base.path());
    let run = Proc::spawn("protocol test", command).finish(SESSION_LIMIT * 4);
    stop.store(true, Ordering::Relaxed);
    let turns = decider.join().expect("every turn followed the rules");
    assert!(run.status.success(), "{alias}: {run:?}");
    let report: Value = serde_json::from_str(run.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(report["host"]["completed"], true, "{report}");
    assert_eq!(report["guest"]["completed"], true, "{report}");
    assert_eq!(
        report["host"]["winner"], report["guest"]["winner"],
        "{report}"
    );
    assert!(turns.len() >= 6, "{alias}: {turns:?}");
    assert!(turns.iter().all(|turn| turn.played["status"] == "played"));
    let refusals: Vec<&Value> = turns.iter().filter_map(|t| t.refused.as_ref()).collect();
    assert!(!refusals.is_empty(), "{alias}: no illegal card was tried");
    for refusal in &refusals {
        assert_eq!(refusal["status"], "refused", "{refusal}");
        assert!(
            refusal["reason"]
                .as_str()
                .unwrap()
                .starts_with("move must be "),
            "{refusal}"
        );
    }
    let (host, guest) = (
        SessionFiles::read(&newest_dir(base.path(), "host").unwrap()),
        SessionFiles::read(&newest_dir(base.path(), "guest").unwrap()),
    );
    let decided = |side: &SessionFiles| {
        side.events_of("decision_window_closed")
            .iter()
            .filter(|e| e["outcome"] == "decided")
            .count()
    };
    assert_eq!(decided(&host) + decided(&guest), turns.len());
    let root = |side: &SessionFiles| {
        side.events_of("mp_terminal_receipt_verified")[0]["transcript_hash"].clone()
    };
    assert_eq!(root(&host), root(&guest));
}

#[test]
fn people_play_crazy_eights_through_session_decide() {
    people_play("crazy-eights-v1", crazy_eights_legal);
}

#[test]
fn people_play_briscola_through_session_decide() {
    people_play("briscola-v1", briscola_legal);
}

//! Fair deals across processes (our server, iroh on loopback, four of our autonomous
//! processes playing a one-hand Texas Hold'em table by themselves): every member announces itself and adds its seed, the deal
//! waits for them, and when the hand ends each member checks its two cards against the
//! leader's opened seed. An honest leader gets `deal_verified` from every member; a leader
//! whose hooks stack the deck (tests/fixtures/holdem-stacked) gets `deal_mismatch`, with the
//! commitment, the opened seed and the expected and seen cards, from every member. A member
//! that announces fair deals and never seeds is taken out of the room once the deal has
//! waited its time, and the others' deal is dealt, played and verified without it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::hostile_members::Hostile;
use crate::support::net::{Agent, Net, SessionFiles, wait_until};
use crate::support::process::Proc;
use crate::support::reference::reference_contract;
use crate::support::transport::runtime;

const LIMIT: Duration = Duration::from_secs(120);
const ALIAS: &str = "texas-holdem-v1";
const OPTIONS: &str = r#"{"max_hands": 1}"#;

/// One seat of ours: its agent, its process and its session dir.
struct Seat {
    agent: Agent,
    _process: Proc,
    session: PathBuf,
}

impl Seat {
    fn room(&self) -> Value {
        std::fs::read_to_string(self.session.join("room.json"))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Value::Null)
    }

    fn key(&self) -> String {
        self.agent.public_key()
    }

    fn events(&self, kind: &str) -> Vec<Value> {
        SessionFiles::read(&self.session)
            .events_of(kind)
            .into_iter()
            .cloned()
            .collect()
    }
}

/// The session dir of `agent` once it holds a room of its own (`file` is there).
fn session_with(agent: &Agent, file: &str) -> PathBuf {
    wait_until(LIMIT, || {
        std::fs::read_dir(agent.dir.join("sessions"))
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.join(file).is_file())
    })
    .unwrap_or_else(|| panic!("{} never held a room", agent.dir.display()))
}

/// Our leader (seat 0) hosting the contract, on `hooks_dir`'s hooks when given (else ours),
/// and three of our members: the leader first.
fn table(net: &Net, hooks_dir: Option<&Path>) -> Vec<Seat> {
    let (started, _) = opened(net, hooks_dir, OPTIONS, &["west", "north", "east"]);
    seated(started)
}

/// Our leader hosting the contract with `options`, and our members `names`, started (the
/// leader first); the room's post id.
fn opened(
    net: &Net,
    hooks_dir: Option<&Path>,
    options: &str,
    names: &[&str],
) -> (Vec<(Agent, Proc)>, String) {
    let contract = reference_contract(ALIAS);
    let leader = net.agent("leader");
    leader.ok(&["protocol", "register", contract.spec.to_str().unwrap()]);
    let flags = ["--control-mode", "autonomous", "--options", options];
    let (host, post_id) = match hooks_dir {
        Some(dir) => leader.host(dir.to_str().unwrap(), &flags),
        None => leader.host_with(&[&["--protocol", ALIAS][..], &flags[..]].concat()),
    };
    let mut started = vec![(leader, host)];
    for name in names {
        let agent = net.agent(name);
        let process = agent.join(&post_id, &["--control-mode", "autonomous"]);
        started.push((agent, process));
    }
    (started, post_id)
}

/// The started seats, once each holds the room.
fn seated(started: Vec<(Agent, Proc)>) -> Vec<Seat> {
    started
        .into_iter()
        .map(|(agent, process)| Seat {
            session: session_with(&agent, "room.json"),
            agent,
            _process: process,
        })
        .collect()
}

/// Waits until every seat holds its two cards; returns what each member first saw dealt.
fn dealt(seats: &[Seat]) -> Vec<Value> {
    seats
        .iter()
        .map(|seat| {
            wait_until(LIMIT, || {
                let hand = seat.room()["view"]["my_hand"].as_array()?.clone();
                (hand.len() == 2).then_some(Value::Array(hand))
            })
            .unwrap_or_else(|| panic!("{} was never dealt: {}", seat.key(), seat.room()))
        })
        .collect()
}

/// Each member's one verdict event, of `kind`, once the match ended.
fn verdicts(seats: &[Seat], kind: &str) -> Vec<Value> {
    seats[1..]
        .iter()
        .map(|seat| {
            wait_until(LIMIT, || seat.events(kind).into_iter().next()).unwrap_or_else(|| {
                panic!(
                    "{} recorded no {kind}: {:?}",
                    seat.key(),
                    seat.room()["deal_verdicts"]
                )
            })
        })
        .collect()
}

/// The first deal verdict `seat` keeps in room.json, once it is there (the verdict's event is
/// recorded just before the room file that keeps it is rewritten).
fn kept_verdict(seat: &Seat) -> Value {
    wait_until(LIMIT, || {
        let kept = seat.room()["deal_verdicts"][0].clone();
        (!kept.is_null()).then_some(kept)
    })
    .unwrap_or_else(|| panic!("{} keeps no deal verdict in room.json", seat.key()))
}

#[test]
fn every_member_verifies_an_honest_deal() {
    let net = Net::start();
    let seats = table(&net, None);
    let hands = dealt(&seats);
    let fair = seats[0].room()["view"]["fair_deal"].clone();
    let mut awaited: Vec<String> = seats[1..].iter().map(Seat::key).collect();
    awaited.sort();
    assert_eq!(fair["awaited"], serde_json::json!(awaited), "{fair}");
    assert_eq!(
        fair["contributions"].as_object().unwrap().len(),
        3,
        "the deck took every member's seed: {fair}"
    );
    let verified = verdicts(&seats, "deal_verified");
    for ((seat, verdict), seen) in seats[1..].iter().zip(&verified).zip(&hands[1..]) {
        assert_eq!(verdict["commitment"], fair["commitment"], "{verdict}");
        assert!(seat.events("deal_mismatch").is_empty());
        let kept = &kept_verdict(seat);
        assert_eq!(kept["verified"], true, "{kept}");
        assert_eq!(&kept["seen"], seen, "{kept}");
        assert_eq!(kept["expected"], kept["seen"], "{kept}");
    }
}

#[test]
fn a_stacked_deal_is_caught_by_every_member() {
    let net = Net::start();
    let contract = reference_contract(ALIAS);
    let stacked = tempfile::tempdir().unwrap();
    std::fs::copy(&contract.spec, stacked.path().join("spec.json")).unwrap();
    let cheat =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/holdem-stacked/hooks.py");
    std::os::unix::fs::symlink(cheat, stacked.path().join("hooks.py")).unwrap();
    let seats = table(&net, Some(stacked.path()));
    let hands = dealt(&seats);
    let commitment = seats[0].room()["view"]["fair_deal"]["commitment"].clone();
    let mismatches = verdicts(&seats, "deal_mismatch");
    for ((seat, verdict), seen) in seats[1..].iter().zip(&mismatches).zip(&hands[1..]) {
        assert_eq!(
            verdict["reason"], "the cards dealt are not the committed deal's",
            "{verdict}"
        );
        assert_eq!(verdict["commitment"], commitment, "{verdict}");
        assert_eq!(
            &verdict["seen"], seen,
            "the evidence is the cards it was dealt"
        );
        assert_eq!(
            verdict["expected"].as_array().unwrap().len(),
            2,
            "{verdict}"
        );
        assert_ne!(verdict["expected"], verdict["seen"], "{verdict}");
        assert!(seat.events("deal_verified").is_empty());
        assert_eq!(kept_verdict(seat)["verified"], false);
    }
}

#[test]
fn a_member_that_never_seeds_is_taken_out_and_the_others_deal_without_it() {
    let net = Net::start();
    let rt = runtime();
    // Long enough for the honest members' seeds on a loaded machine, short for the test.
    let options = r#"{"max_hands": 1, "fair_deal_seed_seconds": 5}"#;
    let (started, post_id) = opened(&net, None, options, &["west", "north"]);
    // Admitted like any member of ours and acknowledging every step, but it never seeds.
    let mut silent = Hostile::announcing_fair_deals(&net, &rt, &post_id, "silent");
    let seats = seated(started);
    let reason = wait_until(LIMIT, || {
        silent.drain(Duration::from_millis(20));
        SessionFiles::read(&seats[0].session)
            .events_of("group_member_disconnected")
            .into_iter()
            .find(|e| e["public_key"] == silent.key())
            .map(|e| e["reason"].as_str().unwrap_or_default().to_string())
    })
    .expect("the leader let the silent member go");
    assert!(
        reason.starts_with("fair_deal_seed_timeout: no seed for hand") && reason.ends_with("5 s"),
        "{reason}"
    );
    let verified = verdicts(&seats, "deal_verified");
    let mut honest: Vec<String> = seats[1..].iter().map(Seat::key).collect();
    honest.sort();
    for (seat, verdict) in seats[1..].iter().zip(&verified) {
        let kept = &kept_verdict(seat);
        assert_eq!(kept["commitment"], verdict["commitment"], "{kept}");
        let mut seeded: Vec<&String> = kept["contributions"].as_object().unwrap().keys().collect();
        seeded.sort();
        assert_eq!(
            seeded,
            honest.iter().collect::<Vec<_>>(),
            "the seeds that came: {kept}"
        );
        assert!(seat.events("deal_mismatch").is_empty());
    }
    let ended = wait_until(LIMIT, || {
        let room = seats[1].room();
        (room["view"]["phase"] == "completed").then_some(room)
    });
    assert!(
        ended.is_some(),
        "the hand was played to its end: {}",
        seats[1].room()
    );
}

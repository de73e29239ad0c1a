//! People see the table: each of the six four-seat tables dealt across real processes (our
//! server, our leader `host` and three `join` members over iroh on loopback, our hooks), and
//! one member's browser controller in headless Chromium. Its page draws the table its hooks
//! made of the verified view: that seat's hand card for card as faces and suits (never the
//! codes), the other seats with their hidden cards, whose turn it is; a screenshot per game is
//! saved under target/ and its path printed; a click on one of the offered moves plays it (the
//! leader accepts it). The step's events read as sentences in words on the page and in the
//! terminal, the same sentences in both. The member's terminal prints the same table as text.
//! One server serves the six tables, one after another. A person at a Landlord table selects
//! the cards of a play on the page and presses the choice that plays the cards picked.

use std::path::PathBuf;
use std::time::Duration;

use fantoccini::Locator;
use serde_json::Value;

use crate::room_people::room;
use crate::support::browser::{Browser, browser_binaries, controller_url};
use crate::support::net::{Agent, Net, SessionFiles, wait_until};
use crate::support::process::Proc;
use crate::support::reference::reference_contract;

const LIMIT: Duration = Duration::from_secs(120);
const TABLES: [&str; 6] = [
    "texas-holdem-v1",
    "contract-bridge-v1",
    "four-player-landlord-v1",
    "upgrade-tractor-v1",
    "aether-sigil-v1",
    "classical-mahjong-v1",
];

/// What a person should read on a card of a view (the network's face shape), as the page
/// names it: A♠, 10♥, Big joker, 3 bamboo, East wind, a named card's name.
fn card_words(card: &Value) -> String {
    let suit = card["suit"].as_str().unwrap_or("plain");
    let face = match &card["rank"] {
        Value::String(rank) => rank.clone(),
        Value::Number(rank) => match rank.as_u64().unwrap() {
            1 | 14 => "A".into(),
            11 => "J".into(),
            12 => "Q".into(),
            13 => "K".into(),
            other => other.to_string(),
        },
        _ => card["name"].as_str().unwrap().to_string(),
    };
    match suit {
        "spades" => format!("{face}♠"),
        "hearts" => format!("{face}♥"),
        "diamonds" => format!("{face}♦"),
        "clubs" => format!("{face}♣"),
        "joker" => {
            let big = card["rank"] == 17 || face.contains("Red") || face.contains("Big");
            format!("{} joker", if big { "Big" } else { "Small" })
        }
        "wind" | "dragon" => {
            let code = card["code"].as_str().unwrap();
            format!("{}{} {suit}", code[..1].to_uppercase(), &code[1..])
        }
        // (a numbered tile is its number: a one is never an ace)
        "characters" | "dots" | "bamboo" => {
            let number = card["rank"].as_u64().map(|n| n.to_string());
            format!("{} {suit}", number.unwrap_or(face))
        }
        _ => face,
    }
}

/// Whether a line of the table's log is a sentence in words: a capital first, a full stop
/// last, and no JSON, identifier, key or card code in between.
fn is_sentence(line: &str) -> bool {
    let coded = line
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| {
            is_card_code(word) || (word.len() >= 12 && word.bytes().all(|b| b.is_ascii_hexdigit()))
        });
    line.chars().next().is_some_and(char::is_uppercase)
        && (line.ends_with('.') || line.ends_with('…'))
        && !line.contains(['{', '}', '[', ']', '_', '"'])
        && !coded
}

/// A card's or tile's code (`QS`, `10H`, `3s`), which a person should never have to read.
fn is_card_code(word: &str) -> bool {
    let Some(last) = word.chars().last() else {
        return false;
    };
    let rank = &word[..word.len() - last.len_utf8()];
    let card = "SHDC".contains(last)
        && (["A", "K", "Q", "J", "10"].contains(&rank)
            || (rank.len() == 1 && ('2'..='9').contains(&rank.chars().next().unwrap())));
    let tile = "mps".contains(last)
        && rank.len() == 1
        && ('1'..='9').contains(&rank.chars().next().unwrap());
    card || tile
}

/// One table of `alias`: our leader and two members in autonomous control, which play by
/// themselves, and a member in human control with the browser controller (its process, agent
/// and room session).
struct Table {
    processes: Vec<Proc>,
    person: Agent,
    page: Proc,
    session: PathBuf,
}

fn deal(net: &Net, alias: &str) -> Table {
    let leader = net.agent(&format!("{alias}-leader"));
    leader.ok(&[
        "protocol",
        "register",
        reference_contract(alias).spec.to_str().unwrap(),
    ]);
    let (hosting, post_id) = leader.host_with(&[
        "--protocol",
        alias,
        "--control-mode",
        "autonomous",
        "--options",
        r#"{"deal_seed": "people see the table"}"#,
    ]);
    let mut processes = vec![hosting];
    for name in ["west", "north"] {
        let member = net.agent(&format!("{alias}-{name}"));
        processes.push(member.join(&post_id, &["--control-mode", "autonomous"]));
    }
    let person = net.agent(&format!("{alias}-person"));
    let page = person.join(
        &post_id,
        &["--control-mode", "human", "--web", "--no-prompt"],
    );
    let session = person.room_session();
    Table {
        processes,
        person,
        page,
        session,
    }
}

/// The person's room once its table is drawn with its hand dealt and it is the person's
/// move (the agents play up to it, then the table waits for the person).
fn drawn(table: &Table) -> Value {
    wait_until(LIMIT, || {
        let room = room(&table.session);
        let dealt = room["view"]["my_hand"]
            .as_array()
            .is_some_and(|h| !h.is_empty());
        let asked = room["choices"].as_array().is_some_and(|c| !c.is_empty());
        (dealt && asked && room["table"]["seats"].as_array()?.len() == 4).then_some(room)
    })
    .unwrap_or_else(|| {
        panic!(
            "{} drew no table: {}",
            table.session.display(),
            room(&table.session)
        )
    })
}

#[test]
fn people_see_each_four_seat_table_drawn_in_the_browser_and_the_terminal() {
    browser_binaries();
    let net = Net::start();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut told_on_the_persons_turn = 0;
    for alias in TABLES {
        let table = deal(&net, alias);
        let room = drawn(&table);
        let view = &room["view"];
        let you = table.person.public_key();
        let hand: Vec<String> = view["my_hand"]
            .as_array()
            .unwrap()
            .iter()
            .map(card_words)
            .collect();
        let current = view["current_player"].as_str().unwrap_or_default();
        // What the step that asks the person said, in words (the table waits for the person).
        let told: Vec<String> = room["table"]["log"]
            .as_array()
            .unwrap()
            .iter()
            .map(|line| line.as_str().unwrap().to_string())
            .collect();
        assert!(
            !told.is_empty() && told.iter().all(|line| is_sentence(line)),
            "{alias}: the step reads in sentences: {told:?}"
        );
        let url = controller_url(&table.page);
        let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("table-{alias}.png"));
        // (the step the person was asked at, still the room's once the page drew it)
        let asked_still = runtime.block_on(async {
            let page = Browser::open(&url).await;
            page.count_until("the table", "#room-table .seat.you .cards")
                .await;
            let mut shown = Vec::new();
            for card in page
                .client
                .find_all(Locator::Css("#room-table .seat.you .cards > *"))
                .await
                .unwrap()
            {
                shown.push(card.attr("aria-label").await.unwrap().unwrap_or_default());
            }
            assert_eq!(shown, hand, "{alias}: the hand drawn is the seat's own");
            let own = page.text_of("#room-table .seat.you").await;
            for card in view["my_hand"].as_array().unwrap() {
                if let Some(code) = card["code"].as_str().filter(|c| c.len() <= 3) {
                    let as_code = own.split_whitespace().any(|word| word == code);
                    assert!(!as_code, "{alias}: a card shown as its code {code}: {own}");
                }
            }
            let others = page
                .client
                .find_all(Locator::Css("#room-table .seats.others .seat"))
                .await
                .unwrap()
                .len();
            assert_eq!(others, 3, "{alias}: the other three seats are drawn");
            page.until("face-down cards", "#room-table .seats.others", "face down")
                .await;
            if current == you {
                page.until("your turn", "#room-table .table-turn", "Your turn")
                    .await;
                page.until("the turn line", "#turn", "Your turn").await;
            } else if !current.is_empty() {
                page.until(
                    "whose turn",
                    "#room-table .seat.to-act .seat-name",
                    &current[..6],
                )
                .await;
            }
            let asked_still =
                current == you && crate::room_people::room(&table.session)["seq"] == room["seq"];
            if asked_still {
                for line in &told {
                    page.until("the step in words", "ol.table-log", line).await;
                }
            }
            let shown_log = page.text_of("ol.table-log").await;
            assert!(
                shown_log.lines().all(is_sentence),
                "{alias}: the page's log reads in sentences: {shown_log}"
            );
            let png = page.client.screenshot().await.unwrap();
            std::fs::write(&shot, png).unwrap();
            // The person plays a move with a click on one of the offered choices.
            page.client
                .find(Locator::Css("#room-choices > button.choice"))
                .await
                .expect("a choice without an amount is offered")
                .click()
                .await
                .unwrap();
            // Closed only once the page's request went through (closing aborts it).
            page.until("the move sent", "#room-feedback", "Sent to the room.")
                .await;
            page.close().await;
            asked_still
        });
        let accepted = wait_until(LIMIT, || {
            let files = SessionFiles::read(&table.session);
            let receipts = files.events_of("group_action_receipt");
            receipts
                .iter()
                .find(|r| r["status"] == "accepted")
                .map(|r| (*r).clone())
        });
        assert!(
            accepted.is_some(),
            "{alias}: the clicked move reached the leader and was accepted: {:?}",
            SessionFiles::read(&table.session).events_of("group_action_receipt")
        );
        println!(
            "{alias}: the table as the person sees it: {}",
            shot.display()
        );
        let terminal = table.page.wait_for_line("[table] ", LIMIT);
        assert!(!terminal.contains('\u{1b}'), "{terminal}");
        // (earlier steps are printed too: before the deal, or before a card was drawn)
        let shows_hand = |line: &&str| {
            line.contains("(you)") && hand.iter().all(|card| line.contains(card.as_str()))
        };
        let own_line = wait_until(LIMIT, || {
            let printed = table.page.stdout();
            printed.lines().find(shows_hand).map(str::to_string)
        });
        assert!(
            own_line.is_some(),
            "{alias}: the terminal shows the hand {hand:?}: {}",
            table.page.stdout()
        );
        if asked_still {
            told_on_the_persons_turn += 1;
            for line in &told {
                let printed = wait_until(LIMIT, || {
                    let printed = table.page.stdout();
                    printed
                        .contains(&format!("[table]   · {line}"))
                        .then_some(())
                });
                assert!(
                    printed.is_some(),
                    "{alias}: the terminal tells {line:?}: {}",
                    table.page.stdout()
                );
            }
        }
        for process in table.processes.into_iter().chain([table.page]) {
            process.terminate(LIMIT);
        }
    }
    assert!(
        told_on_the_persons_turn > 0,
        "at least one table asked the person and told its step in the same words"
    );
}

/// The person's room once it is their move (the agents play up to it).
fn asked(table: &Table, after: &Value) -> Value {
    wait_until(LIMIT, || {
        let room = room(&table.session);
        let choices = room["choices"].as_array()?;
        (!choices.is_empty() && room["seq"] != *after).then_some(room)
    })
    .expect("the person is asked to move")
}

#[test]
fn a_person_selects_the_cards_of_a_play_on_the_page_and_plays_them() {
    browser_binaries();
    let net = Net::start();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let table = deal(&net, "four-player-landlord-v1");
    let url = controller_url(&table.page);
    let mut last = Value::Null;
    let played = runtime.block_on(async {
        let page = Browser::open(&url).await;
        loop {
            let room = asked(&table, &last);
            last = room["seq"].clone();
            let choices = room["choices"].as_array().unwrap();
            let picking = choices.iter().any(|c| c["label"] == "Play cards you pick");
            // A play the table lists, which the person plays by picking its cards instead.
            let listed = choices
                .iter()
                .find(|c| c["action"]["kind"] == "play" && c.get("pick").is_none());
            let (true, Some(listed)) = (picking, listed) else {
                // A bid or a pass: the first choice, clicked, until the person plays cards.
                page.count_until("the choices", "#room-choices > button.choice")
                    .await;
                page.click("#room-choices > button.choice").await;
                continue;
            };
            let cards = listed["action"]["card_ids"].clone();
            page.count_until("the cards to pick", "#room-choices .pick-row .pick-card")
                .await;
            // Pressed with nothing selected, the choice says what it needs and sends nothing.
            let press = "//div[@id='room-choices']/button[contains(., 'Play cards you pick')]";
            let button = page.client.find(Locator::XPath(press)).await.unwrap();
            button.click().await.unwrap();
            page.until(
                "what the pick needs",
                "#room-choices .pick-note",
                "(0 selected)",
            )
            .await;
            for card in cards.as_array().unwrap() {
                let selector = format!("#room-choices .pick-card[data-value='{card}']");
                page.click(&selector).await;
            }
            let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("table-pick.png");
            std::fs::write(&shot, page.client.screenshot().await.unwrap()).unwrap();
            println!("the cards picked on the page: {}", shot.display());
            page.client
                .find(Locator::XPath(press))
                .await
                .unwrap()
                .click()
                .await
                .unwrap();
            // Closed only once the page's request went through (closing aborts it; the click
            // turned the feedback of the earlier bids into "Sending…").
            page.until("the play sent", "#room-feedback", "Sent to the room.")
                .await;
            page.close().await;
            return cards;
        }
    });
    let hand_lost_them = wait_until(LIMIT, || {
        let hand = room(&table.session)["view"]["my_hand"].as_array()?.clone();
        let ids: Vec<&Value> = hand.iter().map(|card| &card["card_id"]).collect();
        played
            .as_array()?
            .iter()
            .all(|card| !ids.contains(&card))
            .then_some(())
    });
    assert!(
        hand_lost_them.is_some(),
        "the leader took the play: the cards picked left the hand: {played}"
    );
    let files = SessionFiles::read(&table.session);
    let receipts = files.events_of("group_action_receipt");
    assert!(
        receipts.iter().all(|r| r["status"] == "accepted"),
        "{receipts:?}"
    );
    for process in table.processes.into_iter().chain([table.page]) {
        process.terminate(LIMIT);
    }
}

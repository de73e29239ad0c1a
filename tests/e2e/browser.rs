//! The browser controller in headless Chromium (through chromedriver and WebDriver): a
//! person plays a whole rock-paper-scissors match from the page of `join --web`, with a
//! screenshot mid-game under target/, and from the page of `host --web` and `host --direct
//! --web`; in hybrid control overrides the agent in one round and accepts its move with Enter
//! in another; and the controller turns away requests without the token, with a wrong token,
//! a foreign Origin or Host, or a `text/plain` body. Fails (never skips) when Chromium or
//! chromedriver is missing.

use std::path::PathBuf;

use fantoccini::Locator;
use fantoccini::key::Key;
use serde_json::{Value, json};

use crate::support::browser::{Browser, browser_binaries, controller_url};
use crate::support::control::window_of;
use crate::support::http::{get, post};
use crate::support::net::{Agent, Net, SESSION_LIMIT, SessionFiles, wait_until};
use crate::support::process::Proc;

/// `alice` hosts `rounds` rounds of rock-paper-scissors, autonomous and always rock; `bob`
/// joins with `guest_flags`, serving the browser controller. The two processes and the
/// controller's URL.
fn rock_host_and_web_guest(
    alice: &Agent,
    bob: &Agent,
    rounds: u32,
    guest_flags: &[&str],
) -> (Proc, Proc, String) {
    browser_binaries();
    let options =
        format!(r#"{{"best_of": {rounds}, "termination": "fixed_rounds", "moves": "rock"}}"#);
    let (host, post_id) = alice.host(
        "rock-paper-scissors",
        &["--control-mode", "autonomous", "--options", &options],
    );
    let flags = [guest_flags, &["--web", "--no-prompt"]].concat();
    let guest = bob.join(&post_id, &flags);
    let url = controller_url(&guest);
    (host, guest, url)
}

#[test]
fn a_person_plays_a_match_from_the_browser_and_strangers_are_refused() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, guest, url) = rock_host_and_web_guest(&alice, &bob, 3, &["--control-mode", "human"]);
    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let list_token = url.split("#token=").nth(1).unwrap().to_string();
    let session_dir = bob.session_dirs("guest").pop().unwrap();
    let id = session_dir
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_string();
    let token = std::fs::read_to_string(session_dir.join("controller.token")).unwrap();
    let me = format!("127.0.0.1:{port}");
    let decide = format!("/api/sessions/{id}/decide");
    let json_body = json!({"move": "banana"}).to_string();
    let as_json = "Content-Type: application/json\r\n";
    let with = |token: &str| format!("X-Aigenora-Token: {token}\r\n{as_json}");
    assert_eq!(
        post(port, &me, &decide, as_json, &json_body),
        401,
        "no token"
    );
    assert_eq!(
        post(
            port,
            &me,
            &decide,
            &with("0".repeat(32).as_str()),
            &json_body
        ),
        403,
        "wrong token"
    );
    assert_eq!(
        post(port, &me, &decide, &with(&list_token), &json_body),
        403,
        "the list token is not a session's"
    );
    let foreign = format!("{}Origin: http://attacker.example\r\n", with(&token));
    assert_eq!(
        post(port, &me, &decide, &foreign, &json_body),
        403,
        "wrong Origin"
    );
    assert_eq!(
        post(port, "attacker.example", &decide, &with(&token), &json_body),
        421,
        "wrong Host"
    );
    let plain = format!("X-Aigenora-Token: {token}\r\nContent-Type: text/plain\r\n");
    assert_eq!(
        post(port, &me, &decide, &plain, &json_body),
        415,
        "text/plain POST"
    );
    assert_eq!(
        get(port, &me, "/api/sessions", ""),
        401,
        "the list needs its token"
    );
    let stream = format!("/api/sessions/{id}/stream?token=wrong");
    assert_eq!(
        get(port, &me, &stream, ""),
        403,
        "the stream needs the session's token"
    );

    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("controller-midgame.png");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let browser = Browser::open(&url).await;
        let client = browser.client.clone();
        let live = client
            .find(Locator::Css("#turn"))
            .await
            .unwrap()
            .attr("aria-live")
            .await
            .unwrap();
        assert_eq!(live.as_deref(), Some("assertive"));
        for round in 0..3 {
            browser
                .until(
                    &format!("round {round}"),
                    "#turn",
                    &format!("Your move: round {round}"),
                )
                .await;
            browser.until("moves", "#moves", "paper").await;
            browser.until("countdown", "#countdown", " s left").await;
            if round == 1 {
                let png = client.screenshot().await.unwrap();
                std::fs::create_dir_all(shot.parent().unwrap()).unwrap();
                std::fs::write(&shot, png).unwrap();
            }
            if round == 0 {
                browser.click_move("paper").await;
            } else {
                client
                    .find(Locator::Css("body"))
                    .await
                    .unwrap()
                    .send_keys("2")
                    .await
                    .unwrap();
            }
            browser
                .until(
                    "played",
                    "#feedback",
                    &format!("Played paper (round {round})"),
                )
                .await;
        }
        browser
            .until("the end", "#turn", "Game over (winner: guest)")
            .await;
        let score = browser.text_of("#score").await;
        assert!(score.contains("guest 3"), "{score}");
        let log = browser.text_of("#log").await;
        assert!(log.contains("decision window closed"), "{log}");
        assert!(
            !log.contains('{') && !log.contains("decision_window"),
            "the log is in words, its raw data behind details: {log}"
        );
        assert!(
            browser.text_of("#board").await.is_empty(),
            "no board for a game without one"
        );
        browser.close().await;
    });
    assert!(guest.finish(SESSION_LIMIT).status.success());
    assert!(host.finish(SESSION_LIMIT).status.success());
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG"),
        "a screenshot at {}",
        shot.display()
    );
}

#[test]
fn a_person_plays_briscola_from_the_browser() {
    browser_binaries();
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let spec = crate::support::reference::reference_contract("briscola-v1").spec;
    alice.ok(&["protocol", "register", spec.to_str().unwrap()]);
    let (host, post_id) =
        alice.host_with(&["--protocol", "briscola-v1", "--control-mode", "autonomous"]);
    let guest = bob.join(
        &post_id,
        &["--control-mode", "human", "--web", "--no-prompt"],
    );
    let url = controller_url(&guest);
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("controller-briscola.png");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let turns = runtime.block_on(async {
        let browser = Browser::open(&url).await;
        let (mut turn, mut cards_clicked) = (0, 0);
        while turn_comes(&browser, turn).await {
            let table = browser.until("the table", "#table", "your hand: ").await;
            assert!(table.contains("trump: clubs (C)"), "{table}");
            let hand = browser.text_of("#hand").await;
            for shown in [&table, &hand] {
                let code = shown
                    .split(|c: char| !c.is_alphanumeric())
                    .find(|w| card_code(w));
                assert!(code.is_none(), "cards as faces, not codes: {shown}");
            }
            assert!(
                hand.chars().any(|c| "♠♥♦♣".contains(c)),
                "the hand's suits: {hand}"
            );
            if turn == 2 {
                let png = browser.client.screenshot().await.unwrap();
                std::fs::write(&shot, png).unwrap();
                println!("briscola as the person sees it: {}", shot.display());
            }
            if play_a_card_or_the_move(&browser).await {
                cards_clicked += 1;
            }
            browser
                .until("played", "#feedback", &format!("(turn {})", turn + 1))
                .await;
            let feedback = browser.text_of("#feedback").await;
            assert!(feedback.starts_with("Played "), "{feedback}");
            turn += 1;
        }
        let score = browser.text_of("#score").await;
        assert!(
            score.contains("host ") && score.contains("guest "),
            "{score}"
        );
        browser.close().await;
        (turn, cards_clicked)
    });
    let (turns, cards_clicked) = turns;
    assert!(guest.finish(SESSION_LIMIT).status.success());
    assert!(host.finish(SESSION_LIMIT).status.success());
    let ours = bob.session("guest");
    assert_eq!(ours.status(), "closed", "{}", ours.info);
    assert_eq!(ours.events_of("decision_window_closed").len(), turns);
    assert!(turns >= 20, "a whole game: {turns} turns");
    let plays = ours
        .events_of("decision_window_closed")
        .iter()
        .filter(|event| event["decision"]["move"] != "draw")
        .count();
    assert_eq!(
        cards_clicked, plays,
        "every card played was clicked in the hand"
    );
    assert!(plays >= 20, "a whole game of plays: {plays}");
}

/// A person plays Thirty-One (mental poker) from the page against our autonomous host: the turn
/// line says whose turn and what is asked in words, the hand shows faces (an ace of diamonds
/// as A♦, never `1D`), the running count is on the table, and the log is in words — no JSON,
/// no cryptographic hex — to the end of the game.
#[test]
fn a_person_plays_thirty_one_from_the_browser_in_words_and_faces() {
    browser_binaries();
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, post_id) = alice.host(
        "thirty-one",
        &[
            "--options",
            r#"{"hand_size": 4}"#,
            "--control-mode",
            "autonomous",
        ],
    );
    let guest = bob.join(
        &post_id,
        &["--control-mode", "human", "--web", "--no-prompt"],
    );
    let url = controller_url(&guest);
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("controller-thirty-one.png");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (turns, counts) = runtime.block_on(async {
        let browser = Browser::open(&url).await;
        let (mut turn, mut counts) = (0, Vec::new());
        while turn_comes(&browser, turn).await {
            let table = browser
                .until("the count", "#table", "Running count: ")
                .await;
            counts.push(table.clone());
            let hand = browser.text_of("#hand").await;
            let code = hand
                .split(|c: char| !c.is_alphanumeric())
                .find(|w| card_code(w) || w.strip_suffix(['C', 'D', 'H', 'S']) == Some("1"));
            assert!(code.is_none(), "the hand as faces, not codes: {hand}");
            if turn == 1 {
                let png = browser.client.screenshot().await.unwrap();
                std::fs::write(&shot, png).unwrap();
                println!("thirty-one as the person sees it: {}", shot.display());
            }
            // Only the cards the count allows are buttons; else the draw or pass offered.
            play_a_card_or_the_move(&browser).await;
            browser
                .until("played", "#feedback", &format!("(turn {})", turn + 1))
                .await;
            turn += 1;
        }
        let log = browser.text_of("#log").await;
        assert!(!log.contains('{'), "no raw JSON in the log: {log}");
        let hex = log
            .split(|c: char| !c.is_ascii_alphanumeric())
            .find(|w| w.len() >= 16 && w.chars().all(|c| c.is_ascii_hexdigit()));
        assert!(hex.is_none(), "no hex in the log: {log}");
        browser.close().await;
        (turn, counts)
    });
    for side in [guest, host] {
        let finished = side.finish(SESSION_LIMIT);
        assert!(
            finished.status.success(),
            "{}\n{}",
            finished.stdout,
            finished.stderr
        );
    }
    assert!(turns >= 2, "the person played the game: {turns} turns");
    assert!(
        counts
            .iter()
            .any(|table| !table.contains("Running count: 0 ")),
        "the running count moved: {counts:?}"
    );
    assert!(std::fs::read(&shot).unwrap().starts_with(b"\x89PNG"));
}

/// A person at `url` plays `rounds` rounds of human-controlled rock-paper-scissors by
/// clicking "paper" each time, and sees the game end.
fn play_paper_from_the_page(url: &str, rounds: u64) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let browser = Browser::open(url).await;
        for round in 0..rounds {
            let turn = format!("Your move: round {round}");
            browser.until(&turn, "#turn", &turn).await;
            browser.click_move("paper").await;
            let played = format!("Played paper (round {round})");
            browser.until("played", "#feedback", &played).await;
        }
        browser.until("the end", "#turn", "Game over").await;
        browser.close().await;
    });
}

/// The moves this side sent in its `reveal` messages, in order.
fn revealed(files: &SessionFiles) -> Vec<Value> {
    files
        .events_of("protocol_message")
        .into_iter()
        .filter(|m| m["direction"] == "sent" && m["msg"]["action"] == "reveal")
        .map(|m| m["msg"]["choice"].clone())
        .collect()
}

/// Asserts that every window of a finished human side was decided from the page with
/// paper, and that paper is what it played.
fn assert_played_paper_from_the_page(files: &SessionFiles, rounds: usize) {
    assert_eq!(files.status(), "closed", "{}", files.info);
    let closed = files.events_of("decision_window_closed");
    assert_eq!(closed.len(), rounds, "{closed:?}");
    for window in &closed {
        assert_eq!(
            (
                &window["outcome"],
                &window["origin"],
                &window["decision"]["choice"]
            ),
            (&json!("decided"), &json!("web"), &json!("paper")),
            "{window}"
        );
    }
    assert_eq!(revealed(files), vec![json!("paper"); rounds]);
}

/// The person is the host: `host --web` serves the page from the hosting process, and a
/// whole match is played from it against an autonomous guest.
#[test]
fn a_hosting_person_plays_from_the_page_of_host_web() {
    browser_binaries();
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let options = r#"{"best_of": 2, "termination": "fixed_rounds", "moves": "rock"}"#;
    let (host, post_id) = alice.host(
        "rock-paper-scissors",
        &[
            "--control-mode",
            "human",
            "--web",
            "--no-prompt",
            "--options",
            options,
        ],
    );
    let url = controller_url(&host);
    let guest = bob.join(&post_id, &["--control-mode", "autonomous"]);
    play_paper_from_the_page(&url, 2);
    assert!(guest.finish(SESSION_LIMIT).status.success());
    assert!(host.finish(SESSION_LIMIT).status.success());
    let hosted = alice.session("host");
    assert_played_paper_from_the_page(&hosted, 2);
    assert_eq!(hosted.field("winner"), "host");
    let kept = std::fs::read_to_string(hosted.dir.join("controller.url")).unwrap();
    assert_eq!(kept, url);
}

/// `host --direct --web` serves the page too (no server, no invitation): a person plays the
/// direct host from it against a direct guest (whose `--web` serves its own page).
#[test]
fn a_direct_host_serves_its_page_with_web() {
    browser_binaries();
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let options = r#"{"best_of": 2, "termination": "fixed_rounds", "moves": "rock"}"#;
    let host = Proc::spawn(
        "host --direct",
        alice.command(&[
            "host",
            "--direct",
            "--protocol-dir",
            "rock-paper-scissors",
            "--options",
            options,
            "--control-mode",
            "human",
            "--web",
            "--no-prompt",
        ]),
    );
    let url = controller_url(&host);
    let line = host.wait_for_line("ticket: ", SESSION_LIMIT);
    let ticket = line.trim_start_matches("ticket: ").trim().to_string();
    let guest = Proc::spawn(
        "guest",
        bob.command(&[
            "guest",
            "--protocol-dir",
            "rock-paper-scissors",
            "--options",
            options,
            "--iroh-ticket",
            &ticket,
            "--control-mode",
            "autonomous",
            "--web",
        ]),
    );
    play_paper_from_the_page(&url, 2);
    let guest = guest.finish(SESSION_LIMIT);
    assert!(guest.status.success(), "{}", guest.stderr);
    assert!(host.finish(SESSION_LIMIT).status.success());
    let hosted = alice.session("host");
    assert_eq!(hosted.field("mode"), "direct");
    assert_played_paper_from_the_page(&hosted, 2);
    let guest_url = std::fs::read_to_string(bob.session("guest").dir.join("controller.url"));
    let address = guest_url.unwrap().split('#').next().unwrap().to_string();
    assert!(
        guest
            .stdout
            .contains(&format!("controller: {address} (its token is in ")),
        "the direct guest serves its page too (its token kept off the log): {}",
        guest.stdout
    );
}

/// Hybrid control from the page: in round 0 the person clicks a move other than the agent's
/// intended one (shown on the page) and that override is played; in round 1 Enter accepts
/// the agent's move. Both windows close `decided` from the web, well before their 60 s.
#[test]
fn a_person_overrides_the_agent_and_accepts_its_move_from_the_page() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let hybrid = ["--control-mode", "hybrid", "--think-seconds", "60"];
    let (host, guest, url) = rock_host_and_web_guest(&alice, &bob, 2, &hybrid);
    let dir = bob.session_dirs("guest").pop().unwrap();
    let intended_in = |round: u64| {
        wait_until(SESSION_LIMIT, || {
            window_of(&dir).filter(|window| window.match_value == round)
        })
        .and_then(|window| window.intended)
        .unwrap_or_else(|| panic!("round {round}: a hybrid window with the agent's move"))
    };
    let started = std::time::Instant::now();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (overridden, intended, accepted) = runtime.block_on(async {
        let browser = Browser::open(&url).await;
        let intended = intended_in(0);
        let shown = intended.as_str().unwrap();
        browser
            .until(
                "the agent's move",
                "#turn",
                &format!("Your agent is about to play {shown} (round 0): override?"),
            )
            .await;
        browser
            .until(
                "the intended move",
                "#intended",
                &format!("Agent's move: {shown}"),
            )
            .await;
        let other = ["rock", "paper", "scissors"]
            .into_iter()
            .find(|value| *value != shown)
            .unwrap();
        browser.click_move(other).await;
        browser
            .until(
                "the override",
                "#feedback",
                &format!("Played {other} (round 0)"),
            )
            .await;
        let accepted = intended_in(1);
        let shown = accepted.as_str().unwrap();
        browser
            .until(
                "round 1",
                "#turn",
                &format!("Your agent is about to play {shown} (round 1)"),
            )
            .await;
        browser
            .client
            .find(Locator::Css("body"))
            .await
            .unwrap()
            .send_keys(&Key::Enter.to_string())
            .await
            .unwrap();
        browser
            .until(
                "accepted",
                "#feedback",
                &format!("Played {shown} (round 1)"),
            )
            .await;
        browser.until("the end", "#turn", "Game over").await;
        browser.close().await;
        (Value::from(other), intended, accepted)
    });
    assert!(guest.finish(SESSION_LIMIT).status.success());
    assert!(host.finish(SESSION_LIMIT).status.success());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "no window waited for its deadline"
    );
    let files = bob.session("guest");
    assert_eq!(files.status(), "closed", "{}", files.info);
    let closed = files.events_of("decision_window_closed");
    assert_eq!(closed.len(), 2, "{closed:?}");
    for (window, played) in closed.iter().zip([&overridden, &accepted]) {
        assert_eq!(
            (
                &window["outcome"],
                &window["origin"],
                &window["decision"]["choice"]
            ),
            (&json!("decided"), &json!("web"), played),
            "{window}"
        );
    }
    let opened = files.events_of("decision_window_opened");
    assert_eq!(
        (&opened[0]["intended"], &opened[1]["intended"]),
        (&intended, &accepted)
    );
    assert_eq!(revealed(&files), vec![overridden, accepted]);
}

/// A double click plays one round, never the next: its second click (the browser counts it,
/// `detail` 2), 100 ms after the first, is not a move of its own whether it lands on the
/// answered window or on the next one just drawn; and an answer that names a window that has
/// closed is refused by the controller itself.
#[test]
fn a_double_click_answers_one_window_only() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, guest, url) = rock_host_and_web_guest(&alice, &bob, 2, &["--control-mode", "human"]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let browser = Browser::open(&url).await;
        browser
            .until("round 0", "#turn", "Your move: round 0")
            .await;
        let double_click = r#"
            const paper = () => [...document.querySelectorAll('#moves button')]
                .find((b) => b.textContent.includes('paper'));
            window.secondClickDone = false;
            paper().click();
            setTimeout(() => {
                const b = paper();
                if (b) b.dispatchEvent(new MouseEvent('click', {detail: 2, bubbles: true}));
                window.secondClickDone = true;
            }, 100);
        "#;
        browser.client.execute(double_click, vec![]).await.unwrap();
        browser
            .until("round 1", "#turn", "Your move: round 1")
            .await;
        let started = std::time::Instant::now();
        while browser
            .client
            .execute("return window.secondClickDone", vec![])
            .await
            .unwrap()
            != json!(true)
        {
            assert!(started.elapsed() < SESSION_LIMIT);
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        // Whatever the second click sent has been answered by now (the page awaits it).
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let dir = bob.session_dirs("guest").pop().unwrap();
        let open = window_of(&dir).expect("round 1 still waits for the person");
        assert_eq!(open.match_value, json!(1));
        browser.click_move("rock").await;
        browser.until("the end", "#turn", "Game over").await;
        browser.close().await;
    });
    guest.succeed(SESSION_LIMIT);
    host.succeed(SESSION_LIMIT);
    let files = bob.session("guest");
    assert_eq!(revealed(&files), vec![json!("paper"), json!("rock")]);
}

/// Waits for the person's turn `turn` (counted from 0) on the page, its turn line in words
/// ("Your move: turn 3 — ..."); false once the game is over instead.
async fn turn_comes(browser: &Browser, turn: usize) -> bool {
    let wanted = format!("Your move: turn {} — ", turn + 1);
    let started = std::time::Instant::now();
    loop {
        let shown = browser.until("a turn or the end", "#turn", "").await;
        if shown.contains("Game over") {
            return false;
        }
        if shown.contains(&wanted) {
            assert!(!shown.contains("action_seq"), "the turn in words: {shown}");
            return true;
        }
        assert!(
            started.elapsed() < SESSION_LIMIT,
            "neither turn {} nor the end came; the page shows {shown:?}",
            turn + 1
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Plays the first card of the hand the page offers, else the move offered beside it (a
/// draw, a pass); true when a card was played.
async fn play_a_card_or_the_move(browser: &Browser) -> bool {
    browser
        .count_until("a move", "#hand button.card.legal, #moves button")
        .await;
    let cards = browser
        .client
        .find_all(Locator::Css("#hand button.card.legal"))
        .await
        .unwrap();
    match cards.first() {
        Some(card) => card.click().await.unwrap(),
        None => browser.click("#moves button").await,
    }
    !cards.is_empty()
}

/// Whether `word` is a card's code ("7H", "10S", "AD") rather than its face.
fn card_code(word: &str) -> bool {
    let Some(rank) = word.strip_suffix(['C', 'D', 'H', 'S']) else {
        return false;
    };
    [
        "A", "J", "Q", "K", "10", "2", "3", "4", "5", "6", "7", "8", "9",
    ]
    .contains(&rank)
}

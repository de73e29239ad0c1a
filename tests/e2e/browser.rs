//! The browser controller in headless Chromium (through chromedriver and WebDriver): a
//! person plays a whole rock-paper-scissors match from the page of `join --web`, with a
//! screenshot mid-game under target/; and the controller turns away requests without the
//! token, with a wrong token, a foreign Origin or Host, or a `text/plain` body. Fails (never
//! skips) when Chromium or chromedriver is missing.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;

use fantoccini::Locator;
use serde_json::json;

use crate::support::browser::{Browser, browser_binaries, controller_url};
use crate::support::net::{Net, SESSION_LIMIT};

/// One raw HTTP/1.1 request; returns the status code.
fn status_of(port: u16, request: &str) -> u16 {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"))
}

fn post(port: u16, host: &str, path: &str, headers: &str, body: &str) -> u16 {
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    status_of(port, &request)
}

fn get(port: u16, host: &str, path: &str, headers: &str) -> u16 {
    status_of(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{headers}\r\n"),
    )
}

#[test]
fn a_person_plays_a_match_from_the_browser_and_strangers_are_refused() {
    browser_binaries();
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let options = r#"{"best_of": 3, "termination": "fixed_rounds", "moves": "rock"}"#;
    let (host, post_id) = alice.host(
        "rock-paper-scissors",
        &["--control-mode", "autonomous", "--options", options],
    );
    let guest = bob.join(
        &post_id,
        &["--control-mode", "human", "--web", "--no-prompt"],
    );
    let url = controller_url(&guest);
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
                client
                    .find(Locator::XPath(
                        "//div[@id='moves']/button[contains(., 'paper')]",
                    ))
                    .await
                    .unwrap()
                    .click()
                    .await
                    .unwrap();
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
        assert!(log.contains("decision_window_closed"), "{log}");
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
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let turns = runtime.block_on(async {
        let browser = Browser::open(&url).await;
        let (mut turn, mut cards_clicked) = (0, 0);
        loop {
            let shown = browser.until("a turn or the end", "#turn", "").await;
            if shown.contains("Game over") {
                break;
            }
            if !shown.contains(&format!("Your move: action_seq {turn}")) {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
            let table = browser.until("the table", "#table", "your hand: ").await;
            assert!(table.contains("trump: clubs (C)"), "{table}");
            // A card from the hand when one is legal, else the move offered beside it (a
            // refill's `draw`).
            browser
                .count_until("a move", "#hand button.card.legal, #moves button")
                .await;
            let cards = browser
                .client
                .find_all(Locator::Css("#hand button.card.legal"))
                .await
                .unwrap();
            if let Some(card) = cards.first() {
                card.click().await.unwrap();
                cards_clicked += 1;
            } else {
                browser.click("#moves button").await;
            }
            browser
                .until("played", "#feedback", &format!("(action_seq {turn})"))
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

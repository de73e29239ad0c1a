//! The browser controller in headless Chromium (through chromedriver and WebDriver): a
//! person plays a whole rock-paper-scissors match from the page of `join --web`, with a
//! screenshot mid-game under target/; and the controller turns away requests without the
//! token, with a wrong token, a foreign Origin or Host, or a `text/plain` body; and a person
//! plays a whole game of Briscola from the page, which shows the card table. Fails (never
//! skips) when Chromium or chromedriver is missing.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use crate::support::net::{Net, SESSION_LIMIT};
use crate::support::process::Proc;

/// Chromium and chromedriver, or a failure that says how to get them.
fn browser_binaries() -> (PathBuf, PathBuf) {
    let find = |names: &[&str]| {
        names.iter().find_map(|name| {
            let output = Command::new("which").arg(name).output().ok()?;
            let path = String::from_utf8_lossy(&output.stdout).trim().to_string();
            (output.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
        })
    };
    let chromium = find(&["chromium", "chromium-browser", "google-chrome"]);
    let driver = find(&["chromedriver"]);
    match (chromium, driver) {
        (Some(chromium), Some(driver)) => (chromium, driver),
        _ => panic!(
            "browser tests need Chromium and chromedriver on PATH: \
             apt-get install -y chromium chromium-driver (.ci/run does this)"
        ),
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

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

/// Starts chromedriver on a free port; returns it (killed on drop) and the port.
fn start_chromedriver(chromedriver: &PathBuf) -> (Proc, u16) {
    let driver_port = free_port();
    let driver = Proc::spawn("chromedriver", {
        let mut command = Command::new(chromedriver);
        command.arg(format!("--port={driver_port}"));
        command
    });
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", driver_port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "chromedriver did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (driver, driver_port)
}

/// A WebDriver session with headless Chromium, its profile in `profile`.
async fn open_browser(chromium: &PathBuf, driver_port: u16, profile: &Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium,
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--no-first-run", "--window-size=1000,900",
                     format!("--user-data-dir={}", profile.display())],
        }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{driver_port}"))
        .await
        .expect("a WebDriver session with headless Chromium")
}

/// The text of the element `selector` ("" when there is none).
async fn text_of(client: &Client, selector: &str) -> String {
    match client.find(Locator::Css(selector)).await {
        Ok(element) => element.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// Waits until `selector` shows `want`; returns its text.
async fn until(client: &Client, what: &str, selector: &str, want: &str) -> String {
    let started = Instant::now();
    loop {
        let text = text_of(client, selector).await;
        if text.contains(want) {
            return text;
        }
        assert!(
            started.elapsed() < SESSION_LIMIT,
            "{what}: {selector} shows {text:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The port and session token of a `--web` guest's controller (from its `controller:` line).
fn controller(guest: &Proc) -> (String, u16) {
    let line = guest.wait_for_line("controller: ", SESSION_LIMIT);
    let url = line.trim_start_matches("controller: ").trim().to_string();
    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    (url, port)
}

#[test]
fn a_person_plays_a_match_from_the_browser_and_strangers_are_refused() {
    let (chromium, chromedriver) = browser_binaries();
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
    let (url, port) = controller(&guest);
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

    let (_driver, driver_port) = start_chromedriver(&chromedriver);
    let profile = tempfile::tempdir().unwrap();
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("controller-midgame.png");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = open_browser(&chromium, driver_port, profile.path()).await;
        client.goto(&url).await.unwrap();
        let text_of = |selector: &'static str| text_of(&client, selector);
        let until = |what: String, selector: &'static str, want: String| {
            let client = client.clone();
            async move { until(&client, &what, selector, &want).await }
        };
        let live = client
            .find(Locator::Css("#turn"))
            .await
            .unwrap()
            .attr("aria-live")
            .await
            .unwrap();
        assert_eq!(live.as_deref(), Some("assertive"));
        for round in 0..3 {
            until(
                format!("round {round}"),
                "#turn",
                format!("Your move: round {round}"),
            )
            .await;
            until("moves".into(), "#moves", "paper".into()).await;
            until("countdown".into(), "#countdown", " s left".into()).await;
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
            until(
                "played".into(),
                "#feedback",
                format!("Played paper (round {round})"),
            )
            .await;
        }
        until(
            "the end".into(),
            "#turn",
            "Game over (winner: guest)".into(),
        )
        .await;
        let score = text_of("#score").await;
        assert!(score.contains("guest 3"), "{score}");
        let log = text_of("#log").await;
        assert!(log.contains("decision_window_closed"), "{log}");
        client.close().await.unwrap();
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

/// A person plays a whole game of Briscola (our hooks for the network's contract, the spec from
/// the installed reference package) from the browser: each turn the page shows the table and
/// the hand (`board_text`) and the legal moves as buttons; key 1 plays the first.
#[test]
fn a_person_plays_briscola_from_the_browser() {
    let (chromium, chromedriver) = browser_binaries();
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
    let (url, _) = controller(&guest);
    let (_driver, driver_port) = start_chromedriver(&chromedriver);
    let profile = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let turns = runtime.block_on(async {
        let client = open_browser(&chromium, driver_port, profile.path()).await;
        client.goto(&url).await.unwrap();
        let mut turn = 0;
        loop {
            let shown = until(&client, "a turn or the end", "#turn", "").await;
            if shown.contains("Game over") {
                break;
            }
            if !shown.contains(&format!("Your move: action_seq {turn}")) {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            let board = until(&client, "the table", "#board", "your hand: ").await;
            assert!(board.contains("trump: clubs (C)"), "{board}");
            assert!(board.contains("your move: "), "{board}");
            until(&client, "moves", "#moves", "").await;
            client
                .find(Locator::Css("body"))
                .await
                .unwrap()
                .send_keys("1")
                .await
                .unwrap();
            until(
                &client,
                "played",
                "#feedback",
                &format!("(action_seq {turn})"),
            )
            .await;
            let feedback = text_of(&client, "#feedback").await;
            assert!(feedback.starts_with("Played "), "{feedback}");
            turn += 1;
        }
        let score = text_of(&client, "#score").await;
        assert!(
            score.contains("host ") && score.contains("guest "),
            "{score}"
        );
        client.close().await.unwrap();
        turn
    });
    assert!(guest.finish(SESSION_LIMIT).status.success());
    assert!(host.finish(SESSION_LIMIT).status.success());
    let ours = bob.session("guest");
    assert_eq!(ours.status(), "closed", "{}", ours.info);
    assert_eq!(ours.events_of("decision_window_closed").len(), turns);
    assert!(turns >= 20, "a whole game: {turns} turns");
}

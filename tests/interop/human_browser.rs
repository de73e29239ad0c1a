//! A person plays well-known games from the browser controller (`join --web`, headless
//! Chromium through chromedriver) against our autonomous hooks: Connect Four by clicking the
//! drawn board's columns, Coin Flip by clicking the move buttons, each to a completed game
//! both sides record. Fails (never skips) when Chromium or chromedriver is missing.

use std::time::{Duration, Instant};

use fantoccini::Locator;

use super::human_play::Table;
use crate::support::browser::{Browser, browser_binaries, controller_url};
use crate::support::net::SESSION_LIMIT;
use crate::support::process::Proc;

/// What the turn line says a person should do now.
enum Turn {
    Move(String),
    Over(String),
    Wait,
}

async fn turn(browser: &Browser) -> Turn {
    let text = browser.text_of("#turn").await;
    if text.starts_with("Game over") {
        Turn::Over(text)
    } else if text.starts_with("Your move: ") {
        // The window in words, before what it asks ("turn 3 — play a card or draw").
        let window = text.trim_start_matches("Your move: ");
        Turn::Move(window.split(" — ").next().unwrap_or(window).to_string())
    } else {
        Turn::Wait
    }
}

/// Plays every window the page shows with `play` (which clicks something and returns what
/// the feedback line should then say) until the game is over; returns the final turn line
/// and how many moves were played.
async fn play_until_over<F, Fut>(browser: &Browser, mut play: F) -> (String, usize)
where
    F: FnMut(String) -> Fut,
    Fut: std::future::Future<Output = Option<String>>,
{
    let started = Instant::now();
    let mut played: Vec<String> = Vec::new();
    loop {
        assert!(started.elapsed() < SESSION_LIMIT, "played {played:?}");
        match turn(browser).await {
            Turn::Over(text) => return (text, played.len()),
            Turn::Move(window) if !played.contains(&window) => {
                // A re-drawn page can drop the element between finding and clicking it:
                // then the same window is tried again.
                if let Some(feedback) = play(window.clone()).await {
                    browser.until("the move", "#feedback", &feedback).await;
                    played.push(window);
                }
            }
            _ => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// Our autonomous agent hosts the table's game with `options`; the person joins it with a browser
/// controller. Returns both processes and the controller's URL.
fn a_person_joins_in_the_browser(table: &Table, options: &str) -> (Proc, Proc, String) {
    let (host, post_id) = table.host(&table.agent, options, &["--control-mode", "autonomous"]);
    let guest = table.person.join(
        &post_id,
        &["--control-mode", "human", "--web", "--no-prompt"],
    );
    let url = controller_url(&guest);
    (host, guest, url)
}

#[test]
fn a_person_plays_connect_four_by_clicking_the_board() {
    browser_binaries();
    let table = Table::new("connect4-v1");
    let (host, guest, url) =
        a_person_joins_in_the_browser(&table, r#"{"cols": 5, "rows": 4, "think_ms": 20}"#);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (over, moves) = runtime.block_on(async {
        let browser = Browser::open(&url).await;
        let columns = browser.until("the board", "#board", "0").await;
        assert!(
            columns.split_whitespace().collect::<Vec<_>>()[..5] == ["0", "1", "2", "3", "4"],
            "column labels: {columns:?}"
        );
        let client = browser.client.clone();
        let result = play_until_over(&browser, |window| {
            let client = client.clone();
            async move {
                // A column move: every cell of a legal column plays it, the top one too.
                let cells = client
                    .find_all(Locator::Css("#board button.cell[data-row='0']"))
                    .await
                    .ok()?;
                let cell = cells.first()?;
                let column = cell.attr("data-col").await.ok()??;
                let same_column = client
                    .find_all(Locator::Css(&format!(
                        "#board button.cell[data-col='{column}']"
                    )))
                    .await
                    .ok()?;
                assert_eq!(same_column.len(), 4, "the whole column is clickable");
                cell.click().await.ok()?;
                Some(format!("Played {column} ({window})"))
            }
        })
        .await;
        let png = client.screenshot().await.unwrap();
        assert!(png.starts_with(b"\x89PNG"));
        let shot =
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("controller-connect4.png");
        std::fs::create_dir_all(shot.parent().unwrap()).unwrap();
        std::fs::write(&shot, png).unwrap();
        let red = browser.count_until("red discs", "#board .piece-red").await;
        assert!(red >= 1, "the person's discs are drawn");
        browser.count_until("last move", "#board .cell.last").await;
        let buttons = client
            .find_all(Locator::Css("#board button"))
            .await
            .unwrap();
        assert!(buttons.is_empty(), "nothing to click once the game is over");
        browser.close().await;
        result
    });
    assert!(moves >= 2, "{moves} moves");
    assert!(guest.finish(SESSION_LIMIT).status.success());
    host.succeed(SESSION_LIMIT);
    let (person, _, winner) = table.ended("guest");
    let expected = format!(
        "Game over ({})",
        winner
            .as_deref()
            .map_or_else(|| "closed".to_string(), |w| format!("winner: {w}"))
    );
    assert!(over.starts_with(&expected), "{over} / {expected}");
    let closed = person.events_of("decision_window_closed");
    assert_eq!(closed.len(), moves, "{closed:?}");
    assert!(
        closed
            .iter()
            .all(|c| c["origin"] == "web" && c["outcome"] == "decided"),
        "{closed:?}"
    );
}

#[test]
fn a_person_plays_coin_flip_by_clicking_buttons() {
    browser_binaries();
    let table = Table::new("coin-flip-v1");
    let (host, guest, url) = a_person_joins_in_the_browser(&table, r#"{"best_of": 3}"#);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (over, moves) = runtime.block_on(async {
        let browser = Browser::open(&url).await;
        let client = browser.client.clone();
        let result = play_until_over(&browser, |window| {
            let client = client.clone();
            async move {
                let button = client
                    .find(Locator::XPath(
                        "//div[@id='moves']/button[contains(., 'heads')]",
                    ))
                    .await
                    .ok()?;
                button.click().await.ok()?;
                Some(format!("Played heads ({window})"))
            }
        })
        .await;
        assert!(
            browser.text_of("#board").await.is_empty(),
            "Coin Flip has no board"
        );
        browser.close().await;
        result
    });
    assert!(guest.finish(SESSION_LIMIT).status.success());
    host.succeed(SESSION_LIMIT);
    let (person, _, winner) = table.ended("guest");
    let winner = winner.expect("coin flip has a winner");
    assert!(over.contains(&format!("winner: {winner}")), "{over}");
    let closed = person.events_of("decision_window_closed");
    assert_eq!(closed.len(), moves, "{closed:?}");
    assert!(
        closed
            .iter()
            .all(|c| c["origin"] == "web" && c["decision"]["choice"] == "heads"),
        "{closed:?}"
    );
}

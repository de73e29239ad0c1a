//! A person at the browser controller: headless Chromium driven through chromedriver
//! (WebDriver, fantoccini), opened on a session's controller URL. Installs Chromium and
//! chromedriver when they are missing; fails, never skips, when it cannot.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use super::net::SESSION_LIMIT;
use super::process::Proc;
use super::system::{ensure_programs, which};

/// Chromium and chromedriver, installed from the distribution's packages when missing.
pub fn browser_binaries() -> (PathBuf, PathBuf) {
    let browsers = ["chromium", "chromium-browser", "google-chrome"];
    if which(&browsers).is_none() {
        ensure_programs(
            &["chromium", "chromedriver"],
            &["chromium", "chromium-driver"],
        );
    }
    ensure_programs(&["chromedriver"], &["chromium-driver"]);
    let chromium = which(&browsers).expect("a browser after installing Chromium");
    let driver = which(&["chromedriver"]).expect("chromedriver after installing it");
    (chromium, driver)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The controller URL a `--web` session prints (`controller: URL`).
pub fn controller_url(session: &Proc) -> String {
    let line = session.wait_for_line("controller: ", SESSION_LIMIT);
    let shown = line.trim_start_matches("controller: ").trim();
    // Not a terminal: the token is not printed, only where it is kept.
    match shown
        .split_once(" (its token is in ")
        .and_then(|(_, rest)| rest.strip_suffix(", readable by you only)"))
    {
        Some(url_file) => std::fs::read_to_string(url_file)
            .unwrap()
            .trim()
            .to_string(),
        None => shown.to_string(),
    }
}

/// Headless Chromium with its own profile, through a chromedriver of its own.
pub struct Browser {
    pub client: Client,
    _driver: Proc,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts chromedriver and a browser, and opens `url`.
    pub async fn open(url: &str) -> Browser {
        let (chromium, chromedriver) = browser_binaries();
        let port = free_port();
        let driver = Proc::spawn("chromedriver", {
            let mut command = Command::new(&chromedriver);
            command.arg(format!("--port={port}"));
            command
        });
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "chromedriver did not start"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let profile = tempfile::tempdir().unwrap();
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": chromium,
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--disable-background-networking", "--disable-component-update",
                         "--disable-sync", "--no-first-run", "--window-size=1000,900",
                         format!("--user-data-dir={}", profile.path().display())],
            }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector)
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a WebDriver session with headless Chromium");
        client.goto(url).await.unwrap();
        Browser {
            client,
            _driver: driver,
            _profile: profile,
        }
    }

    /// The text of the first element `selector` finds (empty when there is none).
    pub async fn text_of(&self, selector: &str) -> String {
        match self.client.find(Locator::Css(selector)).await {
            Ok(element) => element.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    /// Waits until `selector`'s text contains `want`; returns the text.
    pub async fn until(&self, what: &str, selector: &str, want: &str) -> String {
        let started = Instant::now();
        loop {
            let text = self.text_of(selector).await;
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

    /// Waits until `selector` finds at least one element; returns how many it finds.
    pub async fn count_until(&self, what: &str, selector: &str) -> usize {
        let started = Instant::now();
        loop {
            let found = self
                .client
                .find_all(Locator::Css(selector))
                .await
                .map(|all| all.len())
                .unwrap_or(0);
            if found > 0 {
                return found;
            }
            assert!(
                started.elapsed() < SESSION_LIMIT,
                "{what}: nothing matches {selector}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Clicks the first element `selector` finds.
    pub async fn click(&self, selector: &str) {
        self.client
            .find(Locator::Css(selector))
            .await
            .unwrap_or_else(|e| panic!("no {selector}: {e}"))
            .click()
            .await
            .unwrap_or_else(|e| panic!("cannot click {selector}: {e}"));
    }

    /// Clicks the move button whose label contains `label`.
    pub async fn click_move(&self, label: &str) {
        let path = format!("//div[@id='moves']/button[contains(., '{label}')]");
        self.client
            .find(Locator::XPath(&path))
            .await
            .unwrap_or_else(|e| panic!("no move {label}: {e}"))
            .click()
            .await
            .unwrap_or_else(|e| panic!("cannot click move {label}: {e}"));
    }

    pub async fn close(self) {
        self.client.close().await.unwrap();
    }
}

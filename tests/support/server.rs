//! Helpers for community-server tests: a real `aigenora server` process on a free loopback
//! port with a fresh database (a temporary SQLite file, or a new PostgreSQL database when
//! `AIGENORA_TEST_BACKEND=postgres`), signed raw requests for refusal cases, and identities
//! that are registered on the server.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use aigenora::client::{Registered, RestClient};
use aigenora::identity::Identity;
use serde_json::Value;

use super::cli::aigenora;
use super::postgres::{self, Backend};

/// A running server process; killed when dropped.
pub struct TestServer {
    child: Option<Child>,
    pub url: String,
    pub dir: tempfile::TempDir,
    /// `sqlite://…` or `postgres://…`: the same database across restarts.
    pub database_url: String,
    extra: Vec<String>,
    /// A command our binary runs under (`nsenter … --` for a server inside a namespace).
    launcher: Vec<String>,
}

impl TestServer {
    /// A server with a fresh database of the backend under test (and `extra` server flags).
    pub fn start(extra: &[&str]) -> TestServer {
        TestServer::start_with(Backend::from_env(), extra)
    }

    /// A server with a fresh database of `backend`.
    pub fn start_with(backend: Backend, extra: &[&str]) -> TestServer {
        let dir = tempfile::tempdir().unwrap();
        let database_url = match backend {
            Backend::Sqlite => format!("sqlite://{}", database_path(dir.path()).display()),
            Backend::Postgres => postgres::fresh_database(),
        };
        TestServer::start_on(dir, database_url, extra)
    }

    /// Another instance on this server's database (a second process behind the same
    /// load balancer, as it were).
    pub fn another_instance(&self, extra: &[&str]) -> TestServer {
        TestServer::start_on(
            tempfile::tempdir().unwrap(),
            self.database_url.clone(),
            extra,
        )
    }

    /// A server on an existing database.
    pub fn start_on_database(database_url: &str, extra: &[&str]) -> TestServer {
        TestServer::start_on(
            tempfile::tempdir().unwrap(),
            database_url.to_string(),
            extra,
        )
    }

    /// A SQLite server whose database lives on `disk` (a small filesystem that the test can
    /// fill), started inside the disk's mount namespace.
    pub fn start_on_small_disk(disk: &super::small_disk::SmallDisk, extra: &[&str]) -> TestServer {
        let database_url = format!("sqlite://{}", database_path(&disk.mount).display());
        let launcher = disk.command(env!("CARGO_BIN_EXE_aigenora"));
        let mut launcher: Vec<String> = std::iter::once(launcher.get_program())
            .chain(launcher.get_args())
            .map(|part| part.to_string_lossy().into_owned())
            .collect();
        launcher.pop();
        TestServer::start_under(tempfile::tempdir().unwrap(), database_url, extra, launcher)
    }

    fn start_on(dir: tempfile::TempDir, database_url: String, extra: &[&str]) -> TestServer {
        TestServer::start_under(dir, database_url, extra, Vec::new())
    }

    fn start_under(
        dir: tempfile::TempDir,
        database_url: String,
        extra: &[&str],
        launcher: Vec<String>,
    ) -> TestServer {
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let (child, url) = spawn(&launcher, &database_url, &extra);
        TestServer {
            child: Some(child),
            url,
            dir,
            database_url,
            extra,
            launcher,
        }
    }

    pub fn backend(&self) -> Backend {
        if self.database_url.starts_with("postgres") {
            Backend::Postgres
        } else {
            Backend::Sqlite
        }
    }

    /// How many rows `table` holds (the server may be stopped).
    pub async fn count_rows(&self, table: &str) -> i64 {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        let sql = sqlx::AssertSqlSafe(sql);
        match self.backend() {
            Backend::Sqlite => {
                let pool = sqlx::SqlitePool::connect(&self.database_url).await.unwrap();
                let (n,): (i64,) = sqlx::query_as(sql).fetch_one(&pool).await.unwrap();
                pool.close().await;
                n
            }
            Backend::Postgres => {
                let pool = sqlx::PgPool::connect(&self.database_url).await.unwrap();
                let (n,): (i64,) = sqlx::query_as(sql).fetch_one(&pool).await.unwrap();
                pool.close().await;
                n
            }
        }
    }

    /// The server process's id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("the server is running").id()
    }

    /// Stops the server with SIGTERM (a graceful shutdown) and waits for it to exit.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let status = Command::new("kill")
                .arg("-TERM")
                .arg(child.id().to_string())
                .status()
                .unwrap();
            assert!(status.success());
            let exit = child.wait().unwrap();
            assert!(
                exit.success(),
                "the server exits cleanly on SIGTERM: {exit}"
            );
        }
    }

    /// Stops and starts again on the same database (the port may change).
    pub fn restart(&mut self) {
        self.stop();
        self.start_again();
    }

    /// Kills the server (SIGKILL: no shutdown at all) and starts it again on the same database.
    pub fn crash_and_restart(&mut self) {
        self.kill();
        self.start_again();
    }

    /// Kills the server (SIGKILL: no shutdown at all).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    fn start_again(&mut self) {
        let (child, url) = spawn(&self.launcher, &self.database_url, &self.extra);
        self.child = Some(child);
        self.url = url;
    }

    /// Sends SIGTERM and waits at most `limit` for the exit: (exit status, time taken).
    /// Panics (after killing the server) when it is still running then.
    pub fn terminate_within(
        &mut self,
        limit: std::time::Duration,
    ) -> (std::process::ExitStatus, std::time::Duration) {
        let mut child = self.child.take().expect("the server is running");
        let started = std::time::Instant::now();
        let sent = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status()
            .unwrap();
        assert!(sent.success());
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return (status, started.elapsed());
            }
            if started.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the server was still running {limit:?} after SIGTERM");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// `host:port` the server listens on.
    pub fn addr(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    /// The server's SQLite database file (for SQLite-only tests).
    pub fn database(&self) -> PathBuf {
        assert_eq!(self.backend(), Backend::Sqlite, "a SQLite-only check");
        database_path(self.dir.path())
    }

    /// A client of this server acting as `identity`.
    pub fn client(&self, identity: &Identity) -> RestClient {
        RestClient::new(&self.url, identity.clone()).unwrap()
    }

    /// A fresh identity, registered under `nickname`.
    pub async fn registered(&self, nickname: &str) -> (Identity, RestClient) {
        let identity = Identity::generate();
        let client = self.client(&identity);
        assert!(matches!(
            client.register(nickname, "").await.unwrap(),
            Registered::New(_)
        ));
        (identity, client)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn database_path(dir: &Path) -> PathBuf {
    dir.join("community.sqlite3")
}

/// The proof of work tests use unless they pass their own `--pow-difficulty`: the default
/// (3 bytes, about a second of optimized hashing) would take much longer in debug builds.
const TEST_POW_DIFFICULTY: &str = "2";

fn spawn(launcher: &[String], database_url: &str, extra: &[String]) -> (Child, String) {
    let mut command = match launcher.split_first() {
        Some((program, args)) => {
            let mut command = Command::new(program);
            command.args(args).arg(env!("CARGO_BIN_EXE_aigenora"));
            command
        }
        None => aigenora(),
    };
    command.args([
        "server",
        "--listen",
        "127.0.0.1:0",
        "--database",
        database_url,
    ]);
    if !extra.iter().any(|flag| flag == "--pow-difficulty") {
        command.args(["--pow-difficulty", TEST_POW_DIFFICULTY]);
    }
    let mut child = command
        .args(extra)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdout.read_line(&mut line).unwrap();
    // Later lines (the relay's, with --relay-listen) are read and dropped: a closed pipe
    // would fail the server's next print.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let url = line
        .split_whitespace()
        .find(|word| word.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in the server's first line: {line:?}"))
        .to_string();
    (child, url)
}

/// A raw response: status, headers and JSON body (Null when empty).
#[derive(Debug)]
pub struct Raw {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub bytes: Vec<u8>,
}

/// Sends a request with the given signature headers (or none) and raw body.
pub async fn raw(
    url: &str,
    method: &str,
    target: &str,
    headers: Option<&aigenora::identity::SignedHeaders>,
    body: Vec<u8>,
) -> Raw {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .unwrap();
    let mut request = http
        .request(method.parse().unwrap(), format!("{url}{target}"))
        .header("content-type", "application/json")
        .body(body);
    if let Some(headers) = headers {
        for (name, value) in headers.pairs() {
            request = request.header(name, value);
        }
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response.bytes().await.unwrap().to_vec();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Raw {
        status,
        headers,
        body,
        bytes,
    }
}

/// A correctly signed raw request as `identity`.
pub async fn signed(
    url: &str,
    identity: &Identity,
    method: &str,
    target: &str,
    body: &Value,
) -> Raw {
    let bytes = if body.is_null() {
        Vec::new()
    } else {
        serde_json::to_vec(body).unwrap()
    };
    let headers = identity.sign_request(method, target, &bytes);
    raw(url, method, target, Some(&headers), bytes).await
}

/// A spec of our own that passes the run gate; `variant` changes its protocol_id.
pub fn test_spec(name: &str, variant: u32) -> Value {
    serde_json::json!({
        "name": name,
        "spec_version": "1.0",
        "description": format!("{name}: the guest greets, the host answers"),
        "type": "protocol",
        "rules": {"variant": variant},
        "messages": [
            {"name": "hello", "direction": "guest_to_host", "fields": {
                "action": {"type": "enum", "values": ["hello"], "required": true},
                "text": {"type": "text", "required": true}}},
            {"name": "answer", "direction": "host_to_guest", "fields": {
                "action": {"type": "enum", "values": ["answer"], "required": true},
                "text": {"type": "text", "required": true}}}
        ]
    })
}

/// Registers `test_spec(name, variant)` through `client` and returns its protocol_id.
pub async fn register_test_protocol(client: &RestClient, name: &str, variant: u32) -> String {
    let spec = aigenora::spec::Spec::from_value(test_spec(name, variant)).unwrap();
    let body = aigenora::api::protocol::NewProtocol::for_spec(&spec);
    client.register_protocol(&body).await.unwrap();
    body.protocol_id
}

/// A plausible iroh ticket (the server treats tickets as opaque).
pub fn fake_ticket(seed: u32) -> String {
    format!(
        "nodeaaav{seed:08x}kt5t57fqgjbiz6pjkxbl6xuye23t7kol2cdujt7xakdg5sxpwajdnb2hi4dthixs65ltmuys2mjoojsw"
    )
}

//! The browser controller holds under load: idle connections are closed after the header
//! deadline and capped in number (a flood of them costs a playing side neither its file
//! descriptors nor the person's move), a token is checked before any body is read, event
//! streams are capped, a page is sent only a bounded tail of a long event log, an ended
//! session's stream waits for its page to close it, and a request with two Host headers is
//! refused.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::cli::aigenora;
use crate::support::control::{decide_in, window_of};
use crate::support::http::{get, status_of};
use crate::support::net::{Net, SESSION_LIMIT, wait_until};
use crate::support::process::Proc;

/// A session dir written by hand (a guest waiting in a human window), served by `session
/// web`: the server process, its port, the list token and the session's id and token.
struct Served {
    _data: tempfile::TempDir,
    _web: Proc,
    port: u16,
    session: PathBuf,
    id: String,
    token: String,
}

fn serve_a_session(events: &str) -> Served {
    let data = tempfile::tempdir().unwrap();
    let id = "guest-1700000000000".to_string();
    let session = data.path().join("sessions").join(&id);
    std::fs::create_dir_all(session.join("guest-1700000000001")).unwrap();
    std::fs::write(
        session.join("session.json"),
        json!({"role": "guest", "status": "running", "local_control_mode": "human"}).to_string(),
    )
    .unwrap();
    std::fs::write(session.join("events.jsonl"), events).unwrap();
    let mut command = aigenora();
    command
        .arg("--data-dir")
        .arg(data.path())
        .args(["session", "web", "--json"]);
    let web = Proc::spawn("session web", command);
    let line = web.wait_for_line("\"url\"", SESSION_LIMIT);
    let url: Value = serde_json::from_str(&line).unwrap();
    let url = url["url"].as_str().unwrap().to_string();
    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let list_token = url.split("#token=").nth(1).unwrap().to_string();
    let listing = http_body(
        port,
        &format!(
            "GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Aigenora-Token: {list_token}\r\nConnection: close\r\n\r\n"
        ),
    );
    let rows: Value = serde_json::from_str(&listing).unwrap();
    let token = rows[0]["token"].as_str().unwrap().to_string();
    Served {
        _data: data,
        _web: web,
        port,
        session,
        id,
        token,
    }
}

/// A raw `GET path` on a new connection to the controller at `port`, its answer unread.
fn open_stream(port: u16, path: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").as_bytes())
        .unwrap();
    stream
}

/// The body of one raw request's answer.
fn http_body(port: u16, request: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default()
}

/// Reads until the server closes `stream`; how long that took.
fn closed_after(stream: &mut TcpStream, limit: Duration) -> Duration {
    stream.set_read_timeout(Some(limit)).unwrap();
    let started = Instant::now();
    let mut buffer = [0u8; 1024];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return started.elapsed(),
            Ok(_) => {}
            Err(e) => panic!("the connection was still open after {limit:?}: {e}"),
        }
    }
}

#[test]
fn idle_and_slow_connections_are_closed_and_tokens_come_before_bodies() {
    let served = serve_a_session("");
    let port = served.port;
    let me = format!("127.0.0.1:{port}");

    // Idle: nothing sent at all, then half a request.
    let mut idle = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut half = TcpStream::connect(("127.0.0.1", port)).unwrap();
    half.write_all(b"GET /api/sessions HTTP/1.1\r\nHost: ")
        .unwrap();
    assert!(closed_after(&mut idle, Duration::from_secs(20)) < Duration::from_secs(15));
    assert!(closed_after(&mut half, Duration::from_secs(20)) < Duration::from_secs(15));

    // A decide without the token is refused at once, though its 100 MB body never comes.
    let decide = format!("/api/sessions/{}/decide", served.id);
    let mut stranger = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stranger
        .write_all(
            format!(
                "POST {decide} HTTP/1.1\r\nHost: {me}\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{{"
            )
            .as_bytes(),
        )
        .unwrap();
    stranger
        .set_read_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    let mut answer = [0u8; 64];
    let read = stranger
        .read(&mut answer)
        .expect("answered before the body");
    assert!(
        String::from_utf8_lossy(&answer[..read]).starts_with("HTTP/1.1 401"),
        "{}",
        String::from_utf8_lossy(&answer[..read])
    );
    // With the token, a body over the limit is refused; the window is untouched.
    let huge = format!("{{\"move\": \"{}\"}}", "x".repeat(100_000));
    let request = format!(
        "POST {decide} HTTP/1.1\r\nHost: {me}\r\nConnection: close\r\nX-Aigenora-Token: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{huge}",
        served.token,
        huge.len()
    );
    assert_eq!(status_of(port, &request), 413);
    assert!(
        !served
            .session
            .join("guest-1700000000001/decision/decisions.jsonl")
            .exists()
    );

    // Two Host headers: refused, even when both name this server.
    let twice = format!("Host: {me}\r\n");
    assert_eq!(get(port, &me, "/", &twice), 400);
    assert_eq!(get(port, &me, "/", ""), 200);
}

#[test]
fn event_streams_are_capped_and_a_page_gets_a_bounded_tail_of_a_long_log() {
    // 20,000 events (about 1.4 MB): a fresh page gets the newest, never the whole file.
    let mut events = String::new();
    for n in 0..20_000 {
        events.push_str(&json!({"ts": "t", "type": "note", "data": {"n": n}}).to_string());
        events.push('\n');
    }
    let served = serve_a_session(&events);
    let port = served.port;
    let path = format!("/api/sessions/{}/stream?token={}", served.id, served.token);
    let open_stream = || open_stream(port, &path);
    let mut first = open_stream();
    first
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // Read until the first `state` (sent after the events of the first look).
    let mut seen = Vec::new();
    let mut buffer = [0u8; 65536];
    while !String::from_utf8_lossy(&seen).contains("event: state") {
        let read = first.read(&mut buffer).unwrap();
        assert!(read > 0, "the stream ended early");
        seen.extend_from_slice(&buffer[..read]);
    }
    let text = String::from_utf8_lossy(&seen);
    let numbers: Vec<u64> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .filter_map(|event| event["data"]["n"].as_u64())
        .collect();
    assert!(
        !numbers.is_empty() && numbers.len() <= 200,
        "{} events",
        numbers.len()
    );
    assert_eq!(numbers.last(), Some(&19_999), "the newest ones");

    // Streams beyond the cap are refused; the first still holds its place.
    let mut held = vec![first];
    let mut refused = None;
    for _ in 0..40 {
        let mut stream = open_stream();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).unwrap();
        if head.ends_with(b"429") {
            refused = Some(held.len());
            break;
        }
        held.push(stream);
    }
    assert_eq!(refused, Some(16), "16 streams, then 429");
}

/// The newest guest session dir of a data dir, once its controller's address is written.
fn controller_of(data: &Path) -> (PathBuf, u16) {
    wait_until(SESSION_LIMIT, || {
        let sessions = std::fs::read_dir(data.join("sessions")).ok()?;
        let dir = sessions.flatten().map(|e| e.path()).find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("guest-")
        })?;
        let url = std::fs::read_to_string(dir.join("controller.url")).ok()?;
        let port = url
            .trim_start_matches("http://127.0.0.1:")
            .split('/')
            .next()?
            .parse()
            .ok()?;
        Some((dir, port))
    })
    .expect("the guest serves its controller")
}

#[test]
fn a_flood_of_idle_connections_costs_a_playing_side_neither_descriptors_nor_the_move() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let options = r#"{"best_of": 1, "termination": "fixed_rounds", "moves": "rock"}"#;
    let (host, post_id) = alice.host(
        "rock-paper-scissors",
        &["--control-mode", "autonomous", "--options", options],
    );
    // The guest gets the descriptors a default login has (1,024), fewer than the flood.
    let mut join = bob.command(&[
        "join",
        &post_id,
        "--control-mode",
        "human",
        "--web",
        "--no-prompt",
        "--think-seconds",
        "120",
    ]);
    let limit = libc::rlimit {
        rlim_cur: 1024,
        rlim_max: 1024,
    };
    // SAFETY: setrlimit is async-signal-safe; the closure only calls it.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut join, move || {
            match libc::setrlimit(libc::RLIMIT_NOFILE, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let guest = Proc::spawn("join", join);
    let (dir, port) = controller_of(&bob.dir);
    wait_until(SESSION_LIMIT, || window_of(&dir)).expect("a window opens");
    // As many connections as will open (without a cap, more than the process has
    // descriptors for: 1,024 by default); with the cap, the kernel's queue fills up first.
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let flood: Vec<TcpStream> = (0..1_200)
        .map_while(|_| TcpStream::connect_timeout(&address, Duration::from_millis(200)).ok())
        .collect();
    assert!(flood.len() > 64, "{} connections", flood.len());
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("session.json")).unwrap()).unwrap();
    let pid = record["pid"].as_u64().unwrap();
    let descriptors = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count();
    assert!(
        descriptors < 64 + 100,
        "the guest holds {descriptors} descriptors under a flood of {}",
        flood.len()
    );
    let (ok, answer) = decide_in(&dir, "paper");
    assert!(ok, "{answer}");
    assert_eq!(answer["status"], "played", "{answer}");
    drop(flood);
    guest.succeed(SESSION_LIMIT);
    host.succeed(SESSION_LIMIT);
}

#[test]
fn an_answer_naming_a_window_that_closed_is_refused_as_too_late() {
    let served = serve_a_session("");
    let engine = served.session.join("guest-1700000000001");
    let files = aigenora::records::DecisionFiles::of(&aigenora::layout::EngineDir::open(&engine));
    std::fs::create_dir_all(files.dir()).unwrap();
    let now = aigenora::decision::epoch_now();
    let window = aigenora::records::Window {
        seq: 3,
        match_key: "round".into(),
        match_value: json!(2),
        mode: aigenora::records::WindowMode::Human,
        value_field: "choice".into(),
        choices: aigenora::records::Choices::OneOf {
            values: vec![json!("rock"), json!("paper")],
        },
        open: true,
        waiting_for: "decision".into(),
        opened_at: now,
        deadline_at: now + 600.0,
        intended: None,
        timeout_action: Default::default(),
    };
    std::fs::write(files.state(), serde_json::to_string(&window).unwrap()).unwrap();
    let port = served.port;
    let body = json!({"move": "rock", "window": 2}).to_string();
    let answer = http_body(
        port,
        &format!(
            "POST /api/sessions/{}/decide HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nX-Aigenora-Token: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            served.id,
            served.token,
            body.len()
        ),
    );
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["status"], "closed", "{answer}");
    assert!(
        answer["reason"]
            .as_str()
            .unwrap()
            .starts_with("window_closed"),
        "{answer}"
    );
    assert!(
        !files.decisions().exists(),
        "nothing was written for the open window"
    );
}

/// A stream that delivered its session's end stays open (comments keep it alive) until its
/// page closes it — how a `--web` process knows the end arrived before it exits — and a
/// page's close frees its place at once: sixteen pages that saw the end and closed make room
/// for sixteen more well before the hold would have ended their streams.
#[test]
fn an_ended_sessions_stream_stays_open_until_its_page_closes_it() {
    let served = serve_a_session("");
    std::fs::write(
        served.session.join("session.json"),
        json!({"role": "guest", "status": "closed", "local_control_mode": "human"}).to_string(),
    )
    .unwrap();
    let port = served.port;
    let path = format!("/api/sessions/{}/stream?token={}", served.id, served.token);
    // A page: opened, read until it has the final state and a comment after it (the stream
    // still open), or refused (429).
    let page_sees_the_end = || -> Option<TcpStream> {
        let mut stream = open_stream(port, &path);
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let (mut seen, mut buffer) = (Vec::new(), [0u8; 4096]);
        loop {
            let text = String::from_utf8_lossy(&seen).to_string();
            if text.starts_with("HTTP/1.1 429") {
                return None;
            }
            if let Some((_, after)) = text.split_once("\"status\":\"closed\"")
                && after.contains("\n:")
            {
                return Some(stream);
            }
            let read = stream.read(&mut buffer).unwrap();
            assert!(
                read > 0,
                "the stream ended before its page closed it: {text}"
            );
            seen.extend_from_slice(&buffer[..read]);
        }
    };
    let first: Vec<TcpStream> = (0..16).map(|_| page_sees_the_end().unwrap()).collect();
    assert!(page_sees_the_end().is_none(), "the 17th is refused");
    let closed = Instant::now();
    drop(first);
    let again = wait_until(Duration::from_secs(3), || {
        let pages: Vec<TcpStream> = (0..16).map_while(|_| page_sees_the_end()).collect();
        (pages.len() == 16).then_some(pages)
    });
    assert!(
        again.is_some(),
        "closed pages still held their places {:?} after closing",
        closed.elapsed()
    );
}

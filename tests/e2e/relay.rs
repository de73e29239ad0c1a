//! Our relay on loopback: `aigenora relay` over HTTP and TLS, its probes and metrics, the
//! server recommending a relay and our clients following it (or `--relay`), and a host whose
//! relay does not answer. Sessions through NATs are in the `internet` crate.

use std::time::Duration;

use aigenora::transport::Ticket;
use serde_json::Value;

use crate::support::cli::aigenora;
use crate::support::net::{Agent, Net, SESSION_LIMIT, assert_clean_end};
use crate::support::process::Proc;
use crate::support::relay::{RelayProc, counter, free_port, self_signed};

fn relay(args: &[&str]) -> RelayProc {
    let mut command = aigenora();
    command.arg("relay").args(args).env("RUST_LOG", "warn");
    RelayProc::start(command)
}

fn blocking_get(client: &reqwest::Client, url: &str) -> (u16, String) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let response = client.get(url).send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.text().await.unwrap())
    })
}

#[test]
fn the_relay_answers_its_probes_and_counts_its_clients() {
    let relay = relay(&[
        "--listen",
        "127.0.0.1:0",
        "--stun-listen",
        "127.0.0.1:0",
        "--metrics-listen",
        "127.0.0.1:0",
    ]);
    assert!(
        relay.url().starts_with("http://127.0.0.1:"),
        "{:?}",
        relay.line
    );
    assert!(relay.line.stun.is_some(), "{:?}", relay.line);
    let http = reqwest::Client::new();
    let (status, body) = blocking_get(&http, relay.url());
    assert_eq!(status, 200);
    assert!(body.contains("Iroh Relay"), "{body}");
    assert_eq!(blocking_get(&http, &format!("{}ping", relay.url())).0, 200);
    assert_eq!(
        blocking_get(&http, &format!("{}generate_204", relay.url())).0,
        204
    );
    // A real client connects: the relay counts it.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let choice: aigenora::transport::RelayChoice = relay.url().parse().unwrap();
    let endpoint = runtime
        .block_on(aigenora::transport::SessionEndpoint::bind(&choice))
        .unwrap();
    let metrics = format!("http://{}/metrics", relay.line.metrics.as_deref().unwrap());
    let accepted = crate::support::net::wait_until(Duration::from_secs(20), || {
        let (status, text) = blocking_get(&http, &metrics);
        assert_eq!(status, 200);
        counter(&text, "relayserver_accepts").filter(|n| *n >= 1.0)
    });
    assert!(accepted.is_some(), "{}", blocking_get(&http, &metrics).1);
    runtime.block_on(endpoint.shutdown());
    relay.stop();
}

#[test]
fn the_relay_serves_tls_with_the_given_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = self_signed(dir.path(), "relay.test");
    let relay = relay(&[
        "--listen",
        "127.0.0.1:0",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
        "--captive-portal-listen",
        "127.0.0.1:0",
        "--stun-listen",
        "off",
        "--quic-listen",
        "off",
    ]);
    assert!(
        relay.url().starts_with("https://127.0.0.1:"),
        "{:?}",
        relay.line
    );
    let addr: std::net::SocketAddr = relay.url()["https://".len()..]
        .trim_end_matches('/')
        .parse()
        .unwrap();
    let root = reqwest::Certificate::from_pem(&std::fs::read(&cert).unwrap()).unwrap();
    let trusting = reqwest::Client::builder()
        .add_root_certificate(root)
        .resolve("relay.test", addr)
        .build()
        .unwrap();
    let url = format!("https://relay.test:{}/", addr.port());
    let (status, body) = blocking_get(&trusting, &url);
    assert_eq!(status, 200);
    assert!(body.contains("Iroh Relay"), "{body}");
    // A client that does not trust that certificate is refused, and plain HTTP gets nothing.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let untrusting = reqwest::Client::builder()
        .resolve("relay.test", addr)
        .build()
        .unwrap();
    assert!(runtime.block_on(untrusting.get(&url).send()).is_err());
    let plain = format!("http://{addr}/");
    assert!(runtime.block_on(reqwest::get(&plain)).is_err());
    // The captive-portal probe stays plain HTTP.
    let portal = format!(
        "http://{}/generate_204",
        relay.line.captive_portal.as_deref().unwrap()
    );
    assert_eq!(blocking_get(&reqwest::Client::new(), &portal).0, 204);
    relay.stop();
}

#[test]
fn unreadable_tls_files_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, _) = self_signed(dir.path(), "relay.test");
    let other = tempfile::tempdir().unwrap();
    let (_, wrong_key) = self_signed(other.path(), "relay.test");
    let missing = dir.path().join("missing.pem");
    let cases = [
        (
            missing.clone(),
            wrong_key.clone(),
            "cannot read the TLS certificate",
        ),
        (wrong_key.clone(), wrong_key.clone(), "no CERTIFICATE block"),
        (
            cert.clone(),
            wrong_key.clone(),
            "does not fit the certificate",
        ),
    ];
    for (cert, key, expected) in cases {
        let output = aigenora()
            .args([
                "relay",
                "--listen",
                "127.0.0.1:0",
                "--stun-listen",
                "off",
                "--tls-cert",
            ])
            .arg(&cert)
            .arg("--tls-key")
            .arg(&key)
            .env("RUST_LOG", "off")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(expected),
            "{stderr}"
        );
    }
}

#[test]
fn a_taken_port_is_a_one_line_error_naming_the_service() {
    let taken_udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let taken_tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let udp = taken_udp.local_addr().unwrap().to_string();
    let tcp = taken_tcp.local_addr().unwrap().to_string();
    for (args, expected) in [
        (
            vec!["--listen", "127.0.0.1:0", "--stun-listen", udp.as_str()],
            format!("cannot listen for STUN on {udp}: Address already in use"),
        ),
        (
            vec!["--listen", tcp.as_str(), "--stun-listen", "off"],
            format!("cannot listen for the relay on {tcp}"),
        ),
    ] {
        let output = aigenora()
            .arg("relay")
            .args(&args)
            .env("RUST_LOG", "off")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(&expected) && !stderr.contains("\\x0a"),
            "{stderr}"
        );
    }
}

/// An agent that follows the server's recommendation (no `--relay`, no `$AIGENORA_RELAY`).
fn following(agent: &Agent, args: &[&str]) -> std::process::Command {
    let mut command = agent.command(args);
    command.env_remove("AIGENORA_RELAY");
    command
}

fn invitation_ticket(net: &Net, post_id: &str) -> Ticket {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let invitation = runtime.block_on(async {
        let (_, client) = net.server.registered("reader").await;
        client.invitation(post_id).await.unwrap()
    });
    invitation.iroh_ticket.unwrap().parse().unwrap()
}

#[test]
fn the_server_recommends_its_relay_and_both_sides_use_it() {
    let relay_port = free_port();
    let relay_listen = format!("127.0.0.1:{relay_port}");
    let net = Net::start_with(&["--relay-listen", &relay_listen]);
    let relay_url = format!("http://{relay_listen}/");
    let version: Value = serde_json::from_str(
        &blocking_get(
            &reqwest::Client::new(),
            &format!("{}/api/v1/version", net.url()),
        )
        .1,
    )
    .unwrap();
    assert_eq!(version["relay_url"], relay_url.as_str(), "{version}");
    assert_eq!(version["min_client_version"], "0.1.4", "{version}");

    let alice = net.agent("alice");
    let bob = net.agent("bob");
    let host = Proc::spawn(
        "host",
        following(&alice, &["host", "--protocol-dir", "rock-paper-scissors"]),
    );
    let post_id = host.wait_for_line("post_id: ", SESSION_LIMIT)["post_id: ".len()..]
        .trim()
        .to_string();
    let ticket = invitation_ticket(&net, &post_id);
    assert_eq!(
        ticket.node_addr().relay_url().map(|url| url.to_string()),
        Some(relay_url.clone()),
        "the host's ticket names the recommended relay"
    );
    Proc::spawn("join", following(&bob, &["join", &post_id])).succeed(SESSION_LIMIT);
    host.succeed(SESSION_LIMIT);
    let (hosted, joined) = (alice.session("host"), bob.session("guest"));
    assert_clean_end(&hosted, &joined);
    for side in [&hosted, &joined] {
        let paths = side.events_of("path_changed");
        assert!(!paths.is_empty(), "{:?}", side.events);
        // The session view shows the latest one.
        let view: Value = serde_json::from_str(&alice.ok(&[
            "session",
            "snapshot",
            "--json",
            "--state-dir",
            side.dir.to_str().unwrap(),
        ]))
        .unwrap();
        assert_eq!(&view["path"], *paths.last().unwrap(), "{view}");
    }
    let text = alice.ok(&[
        "session",
        "snapshot",
        "--state-dir",
        hosted.dir.to_str().unwrap(),
    ]);
    assert!(text.lines().any(|line| line.starts_with("path ")), "{text}");
}

#[test]
fn relay_overrides_the_recommendation() {
    let net = Net::start_with(&["--relay-url", "http://192.0.2.7:3340"]);
    let alice = net.agent("alice");
    let mut command = alice.command(&[
        "host",
        "--protocol-dir",
        "rock-paper-scissors",
        "--relay",
        "disabled",
    ]);
    command.env_remove("AIGENORA_RELAY");
    let mut host = Proc::spawn("host", command);
    let post_id = host.wait_for_line("post_id: ", SESSION_LIMIT)["post_id: ".len()..]
        .trim()
        .to_string();
    assert_eq!(
        invitation_ticket(&net, &post_id).node_addr().relay_url(),
        None
    );
    host.kill_and_reap();
}

#[test]
fn a_host_whose_relay_does_not_answer_publishes_nothing() {
    let net = Net::start_with(&["--relay-url", &format!("http://127.0.0.1:{}", free_port())]);
    let alice = net.agent("alice");
    let finished = Proc::spawn(
        "host",
        following(&alice, &["host", "--protocol-dir", "rock-paper-scissors"]),
    )
    .finish(SESSION_LIMIT);
    assert_eq!(finished.status.code(), Some(1), "{}", finished.stdout);
    let stderr = finished.stderr.trim();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("does not answer"), "{stderr}");
    assert!(
        !finished.stdout.contains("post_id: "),
        "{}",
        finished.stdout
    );
    let offered = alice.ok(&["browse", "--json"]);
    assert!(!offered.contains("post_id"), "{offered}");
}

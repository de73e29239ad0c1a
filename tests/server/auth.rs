//! The community server's gate and identity endpoints, over real HTTP: signatures,
//! timestamps, replays, body limits, registration, agents, meta endpoints, startup errors,
//! and persistence across a restart.

use aigenora::client::Registered;
use aigenora::identity::{self, Identity};
use serde_json::{Value, json};

use crate::support::cli::aigenora;
use crate::support::server::{TestServer, fake_ticket, raw, register_test_protocol, signed};

#[tokio::test]
async fn unsigned_and_forged_requests_are_refused_with_json_reasons() {
    let server = TestServer::start(&[]);
    let (alice, _) = server.registered("alice").await;
    let target = "/api/v1/invitations?limit=5";

    let unsigned = raw(&server.url, "GET", target, None, Vec::new()).await;
    assert_eq!(
        (unsigned.status, unsigned.body["error"].as_str()),
        (401, Some("missing_signature"))
    );

    let good = alice.sign_request("GET", target, b"");
    let mut forged = good.clone();
    forged.signature = alice.sign_hex(b"something else");
    let refused = raw(&server.url, "GET", target, Some(&forged), Vec::new()).await;
    assert_eq!(
        (refused.status, refused.body["error"].as_str()),
        (401, Some("invalid_signature"))
    );

    // The query string is part of what is signed.
    let without_query = alice.sign_request("GET", "/api/v1/invitations", b"");
    let refused = raw(&server.url, "GET", target, Some(&without_query), Vec::new()).await;
    assert_eq!(refused.status, 401);

    // So is the raw body.
    let headers = alice.sign_request("POST", "/api/v1/protocols", br#"{"a":1}"#);
    let refused = raw(
        &server.url,
        "POST",
        "/api/v1/protocols",
        Some(&headers),
        br#"{"a":2}"#.to_vec(),
    )
    .await;
    assert_eq!(
        (refused.status, refused.body["error"].as_str()),
        (401, Some("invalid_signature"))
    );

    let stale_time = (chrono::Utc::now().timestamp() - 301).to_string();
    let stale =
        alice.sign_request_with(&stale_time, &identity::new_request_id(), "GET", target, b"");
    let refused = raw(&server.url, "GET", target, Some(&stale), Vec::new()).await;
    assert_eq!(
        (refused.status, refused.body["error"].as_str()),
        (401, Some("stale_timestamp"))
    );

    // Well beyond the window: the server reads its clock a moment after this one, and a
    // second may turn in between (the exact edge is the gate's unit test).
    let future_time = (chrono::Utc::now().timestamp() + 330).to_string();
    let future = alice.sign_request_with(
        &future_time,
        &identity::new_request_id(),
        "GET",
        target,
        b"",
    );
    assert_eq!(
        raw(&server.url, "GET", target, Some(&future), Vec::new())
            .await
            .status,
        401
    );
}

#[tokio::test]
async fn a_request_id_is_accepted_once_per_key() {
    let server = TestServer::start(&[]);
    let alice = Identity::generate();
    let target = "/api/v1/protocols?limit=20";
    let headers = alice.sign_request("GET", target, b"");
    assert_eq!(
        raw(&server.url, "GET", target, Some(&headers), Vec::new())
            .await
            .status,
        200
    );
    let replay = raw(&server.url, "GET", target, Some(&headers), Vec::new()).await;
    assert_eq!(
        (replay.status, replay.body["error"].as_str()),
        (401, Some("replayed_request"))
    );
    // Another key may use the same request id.
    let bob = Identity::generate();
    let same_id =
        bob.sign_request_with(&headers.timestamp, &headers.request_id, "GET", target, b"");
    assert_eq!(
        raw(&server.url, "GET", target, Some(&same_id), Vec::new())
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn oversized_bodies_get_413_and_unknown_paths_404_without_redirects() {
    let server = TestServer::start(&[]);
    let alice = Identity::generate();
    let body = vec![b' '; 1024 * 1024 + 1];
    let headers = alice.sign_request("POST", "/api/v1/protocols", &body);
    let refused = raw(
        &server.url,
        "POST",
        "/api/v1/protocols",
        Some(&headers),
        body,
    )
    .await;
    assert_eq!(
        (refused.status, refused.body["error"].as_str()),
        (413, Some("body_too_large"))
    );

    let slash = signed(
        &server.url,
        &alice,
        "GET",
        "/api/v1/protocols/",
        &Value::Null,
    )
    .await;
    assert_eq!(
        (slash.status, slash.body["error"].as_str()),
        (404, Some("not_found"))
    );
    let wrong_method = signed(
        &server.url,
        &alice,
        "PUT",
        "/api/v1/invitations",
        &json!({}),
    )
    .await;
    assert_eq!(wrong_method.status, 405);
    assert_eq!(wrong_method.body["error"], "method_not_allowed");
}

#[tokio::test]
async fn version_and_health_need_no_signature() {
    let server = TestServer::start(&[]);
    let version = raw(&server.url, "GET", "/api/v1/version", None, Vec::new()).await;
    assert_eq!(version.status, 200);
    assert_eq!(version.body["latest_version"], "0.1.4");
    // No relay recommended unless the server was given one.
    assert!(version.body.get("relay_url").is_none(), "{}", version.body);
    let health = raw(&server.url, "GET", "/healthz", None, Vec::new()).await;
    assert_eq!(
        (health.status, health.body["status"].as_str()),
        (200, Some("ok"))
    );
}

#[test]
fn the_relay_flags_are_checked_before_anything_starts() {
    for (flags, expected) in [
        (
            vec!["--relay-url", "disabled"],
            "--relay-url takes an http(s) URL",
        ),
        (
            vec!["--relay-listen", "0.0.0.0:3340"],
            "--relay-url is needed when --relay-listen is 0.0.0.0:3340",
        ),
    ] {
        let output = crate::support::cli::aigenora()
            .args([
                "server",
                "--listen",
                "127.0.0.1:0",
                "--database",
                "sqlite::memory:",
            ])
            .args(&flags)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{flags:?}");
        assert!(stderr.contains(expected), "{flags:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    }
    // A URL that is not one is a usage error.
    let output = crate::support::cli::aigenora()
        .args(["server", "--relay-url", "gopher://relay"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("invalid relay setting"));
}

#[tokio::test]
async fn registration_needs_a_fresh_nonce_work_and_a_signature() {
    let server = TestServer::start(&[]);
    let alice = Identity::generate();
    let client = server.client(&alice);
    let challenge = client.challenge().await.unwrap();
    assert_eq!((challenge.nonce.len(), challenge.difficulty), (32, 2));
    let pk = alice.public_key();
    let counter = identity::solve_pow(&challenge.nonce, pk, 2);
    let proof = identity::registration_canonical(&challenge.nonce, pk, "alice");
    let body = |nickname: &str, counter: u64, signature: &str| {
        json!({"public_key": pk, "nickname": nickname, "bio": "hi", "nonce": challenge.nonce,
               "counter": counter, "signature": signature})
    };
    let good_signature = alice.sign_hex(proof.as_bytes());
    let register = |body: Value| {
        let url = server.url.clone();
        let alice = alice.clone();
        async move { signed(&url, &alice, "POST", "/api/v1/auth/register", &body).await }
    };

    let lazy = register(body("alice", counter + 1, &good_signature)).await;
    assert_eq!(
        (lazy.status, lazy.body["error"].as_str()),
        (400, Some("invalid_proof_of_work"))
    );
    let wrong_name = register(body("mallory", counter, &good_signature)).await;
    assert_eq!(wrong_name.status, 400, "the nickname is signed");
    let bad_name = register(body("has space", counter, &good_signature)).await;
    assert_eq!(bad_name.body["error"], "invalid_nickname");

    let created = register(body("alice", counter, &good_signature)).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    assert_eq!(created.body["agent_id"], created.body["id"]);
    assert_eq!(created.body["nickname"], "alice");
    let reused = register(body("alice", counter, &good_signature)).await;
    assert_eq!(
        (reused.status, reused.body["error"].as_str()),
        (400, Some("invalid_nonce"))
    );

    // Someone else's key in the body is refused.
    let bob = Identity::generate();
    let stolen = signed(
        &server.url,
        &bob,
        "POST",
        "/api/v1/auth/register",
        &body("alice", counter, &good_signature),
    )
    .await;
    assert_eq!(stolen.body["error"], "key_mismatch");

    assert!(matches!(
        client.register("alice", "").await.unwrap(),
        Registered::AlreadyRegistered(_)
    ));
    let agent = client.agent(pk).await.unwrap().unwrap();
    assert_eq!(
        (agent.nickname.as_str(), agent.bio.as_str()),
        ("alice", "hi")
    );
    assert_eq!(client.agent(bob.public_key()).await.unwrap(), None);
}

#[test]
fn startup_errors_are_one_clear_line() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let unreachable = format!(
        "postgres://app:secret@{}/community",
        closed.local_addr().unwrap()
    );
    drop(closed);
    let output = aigenora()
        .args([
            "server",
            "--listen",
            "127.0.0.1:0",
            "--database",
            &unreachable,
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    let last = stderr.lines().last().unwrap();
    assert!(
        last.starts_with("error: cannot open the database postgres://app:***@")
            && last.contains("Connection refused"),
        "{stderr}"
    );
    assert!(!stderr.contains("secret"), "the password is never shown");

    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let output = aigenora()
        .arg("--data-dir")
        .arg(dir.path())
        .args(["server", "--listen", &addr])
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(!output.status.success());
    assert!(
        stderr
            .lines()
            .last()
            .unwrap()
            .starts_with(&format!("error: cannot listen on {addr}")),
        "{stderr}"
    );
    assert!(
        !dir.path().join("server").exists(),
        "the port is bound before the database is opened: a second server touches nothing"
    );
}

#[tokio::test]
async fn data_survives_a_restart() {
    let mut server = TestServer::start(&[]);
    let (alice, client) = server.registered("alice").await;
    let protocol_id = register_test_protocol(&client, "Persist", 1).await;
    let mut new =
        aigenora::api::invitation::NewInvitation::signed(&alice, &protocol_id, &fake_ticket(1));
    new.tags = vec!["persist".into()];
    let post_id = client.create_invitation(&new).await.unwrap().post_id;

    server.restart();
    let client = server.client(&alice);
    assert_eq!(
        client
            .agent(alice.public_key())
            .await
            .unwrap()
            .unwrap()
            .nickname,
        "alice"
    );
    assert_eq!(client.protocol(&protocol_id).await.unwrap().name, "Persist");
    assert_eq!(
        client.invitation(&post_id).await.unwrap().tags,
        vec!["persist"]
    );
    server.stop();
}

//! Several `aigenora server` processes on one PostgreSQL database behave as one server:
//! a write through one is read through the other at once (list caches included), a
//! request replayed at the other instance is refused, the 3-active-invitations rule holds
//! under concurrent creates spread over both, and an instance killed mid-burst loses
//! nothing it acknowledged. These tests always use PostgreSQL (whatever
//! `AIGENORA_TEST_BACKEND` says): several instances need a shared database.

use std::collections::HashMap;
use std::time::Duration;

use aigenora::api::invitation::{BrowseFilter, NewInvitation};
use aigenora::client::RestClient;
use aigenora::identity::Identity;

use crate::support::postgres::Backend;
use crate::support::postgres::one_burst_at_a_time;
use crate::support::server::{TestServer, fake_ticket, raw, register_test_protocol};

/// Flags for load from one address: no per-address limits, a cheap proof of work.
const BURSTY: &[&str] = &[
    "--address-rate",
    "0",
    "--connections-per-address",
    "0",
    "--key-rate",
    "0",
    "--challenges-per-address",
    "1000",
    "--pow-difficulty",
    "1",
];

fn two_instances(extra: &[&str]) -> (TestServer, TestServer) {
    let first = TestServer::start_with(Backend::Postgres, extra);
    let second = first.another_instance(extra);
    (first, second)
}

async fn offered(client: &RestClient) -> Vec<String> {
    let list = client.browse(&BrowseFilter::default()).await.unwrap();
    list.results.into_iter().map(|item| item.post_id).collect()
}

#[tokio::test]
async fn a_write_through_one_instance_is_read_through_the_other_at_once() {
    let (a, b) = two_instances(&[]);
    let (alice, via_a) = a.registered("alice").await;
    let via_b = b.client(&alice);
    assert_eq!(
        via_b
            .agent(alice.public_key())
            .await
            .unwrap()
            .unwrap()
            .nickname,
        "alice"
    );
    let protocol_id = register_test_protocol(&via_a, "Shared", 1).await;
    assert_eq!(
        via_b.protocol(&protocol_id).await.unwrap().protocol_id,
        protocol_id
    );

    // Both instances cache the (empty) list; each write through one must show through the
    // other on the very next read.
    assert!(offered(&via_a).await.is_empty() && offered(&via_b).await.is_empty());
    let lease = via_a
        .create_invitation(&NewInvitation::signed(
            &alice,
            &protocol_id,
            &fake_ticket(1),
        ))
        .await
        .unwrap();
    assert_eq!(offered(&via_b).await, vec![lease.post_id.clone()]);
    assert_eq!(offered(&via_a).await, vec![lease.post_id.clone()]);
    via_b.cancel_invitation(&lease.post_id).await.unwrap();
    assert!(
        offered(&via_a).await.is_empty(),
        "the cancel through B shows through A"
    );
    assert_eq!(
        via_a.invitation(&lease.post_id).await.unwrap().status,
        "cancelled"
    );
}

#[tokio::test]
async fn a_request_replayed_at_the_other_instance_is_refused() {
    let (a, b) = two_instances(&[]);
    let (alice, via_a) = a.registered("alice").await;
    let protocol_id = register_test_protocol(&via_a, "Replayed", 1).await;

    let read = format!("/api/v1/protocols/{protocol_id}");
    let headers = alice.sign_request("GET", &read, b"");
    assert_eq!(
        raw(&a.url, "GET", &read, Some(&headers), Vec::new())
            .await
            .status,
        200
    );
    let replayed = raw(&b.url, "GET", &read, Some(&headers), Vec::new()).await;
    assert_eq!(
        (replayed.status, replayed.body["error"].as_str()),
        (401, Some("replayed_request")),
        "a read replayed at the other instance"
    );

    let body = serde_json::to_vec(&NewInvitation::signed(
        &alice,
        &protocol_id,
        &fake_ticket(2),
    ))
    .unwrap();
    let headers = alice.sign_request("POST", "/api/v1/invitations", &body);
    let created = raw(
        &b.url,
        "POST",
        "/api/v1/invitations",
        Some(&headers),
        body.clone(),
    )
    .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let replayed = raw(&a.url, "POST", "/api/v1/invitations", Some(&headers), body).await;
    assert_eq!(
        (replayed.status, replayed.body["error"].as_str()),
        (401, Some("replayed_request")),
        "a write replayed at the other instance"
    );
    assert_eq!(offered(&via_a).await.len(), 1, "the replay created nothing");
}

/// How often a burst's request is sent again while the server answers that it is busy.
const BUSY_RETRIES: usize = 20;

#[tokio::test]
async fn concurrent_creates_over_both_instances_leave_exactly_three_per_key() {
    let _burst = one_burst_at_a_time();
    let (a, b) = two_instances(BURSTY);
    let (owner, owner_client) = a.registered("owner").await;
    let protocol_id = register_test_protocol(&owner_client, "Crowded", 1).await;
    drop(owner);
    let mut registrations = Vec::new();
    for n in 0..50u32 {
        let server = if n.is_multiple_of(2) { &a } else { &b };
        let identity = Identity::generate();
        let client = server.client(&identity);
        registrations.push(async move {
            client.register(&format!("k{n}"), "").await.unwrap();
            identity
        });
    }
    let keys = futures_util::future::join_all(registrations).await;

    // 4 creates per key (200 in all), alternating instances, all at once.
    let mut creates = Vec::new();
    for (k, identity) in keys.iter().enumerate() {
        for attempt in 0..4u32 {
            let server = if (k as u32 + attempt).is_multiple_of(2) {
                &a
            } else {
                &b
            };
            let client = server.client(identity);
            let protocol_id = &protocol_id;
            creates.push(async move {
                // A server short of database connections answers 503 (busy) before it
                // records anything; a client sends a fresh request again, as this one does.
                let ticket = fake_ticket(k as u32 * 10 + attempt);
                for _ in 0..BUSY_RETRIES {
                    let new = NewInvitation::signed(identity, protocol_id, &ticket);
                    match client.create_invitation(&new).await {
                        Err(busy) if busy.status() == Some(503) => continue,
                        outcome => return (k, outcome),
                    }
                }
                panic!("POST /api/v1/invitations stayed busy after {BUSY_RETRIES} tries")
            });
        }
    }
    let mut accepted: HashMap<usize, usize> = HashMap::new();
    for (k, outcome) in futures_util::future::join_all(creates).await {
        match outcome {
            Ok(_) => *accepted.entry(k).or_default() += 1,
            Err(error) => assert_eq!(error.status(), Some(429), "{error}"),
        }
    }
    assert_eq!(accepted.len(), 50);
    assert!(accepted.values().all(|&n| n == 3), "{accepted:?}");
    let listed = owner_client
        .browse(&BrowseFilter {
            limit: Some(1),
            ..BrowseFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(listed.total, 150, "exactly 3 offered per key");
}

#[tokio::test]
async fn an_instance_killed_mid_burst_loses_nothing_it_acknowledged() {
    let _burst = one_burst_at_a_time();
    let (mut a, b) = two_instances(BURSTY);
    let (alice, via_a) = a.registered("alice").await;
    let via_b = b.client(&alice);
    let burst: Vec<_> = (0..60u32)
        .map(|variant| {
            let client = via_a.clone();
            tokio::spawn(async move {
                let spec = aigenora::spec::Spec::from_value(crate::support::server::test_spec(
                    "Burst", variant,
                ))
                .unwrap();
                let body = aigenora::api::protocol::NewProtocol::for_spec(&spec);
                client
                    .register_protocol(&body)
                    .await
                    .map(|_| body.protocol_id)
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(150)).await;
    a.kill();
    let mut acknowledged = Vec::new();
    for task in burst {
        if let Ok(protocol_id) = task.await.unwrap() {
            acknowledged.push(protocol_id);
        }
    }
    for protocol_id in &acknowledged {
        let record = via_b.protocol(protocol_id).await.unwrap();
        assert_eq!(&record.protocol_id, protocol_id, "acknowledged, then lost");
    }
    // The other instance goes on serving, and the killed one comes back on the same data.
    a.crash_and_restart();
    let listed = a
        .client(&alice)
        .list_protocols(100, None, None)
        .await
        .unwrap();
    assert!(
        acknowledged
            .iter()
            .all(|id| listed.results.iter().any(|p| &p.protocol_id == id)),
        "{} acknowledged",
        acknowledged.len()
    );
}

/// A TCP relay to the database that the test can cut (every connection dropped, new ones
/// refused) and restore on the same port.
struct Relay {
    addr: std::net::SocketAddr,
    to: std::net::SocketAddr,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Relay {
    async fn start(to: std::net::SocketAddr) -> Relay {
        let mut relay = Relay {
            addr: "127.0.0.1:0".parse().unwrap(),
            to,
            task: None,
        };
        relay.restore().await;
        relay
    }

    async fn restore(&mut self) {
        let listener = tokio::net::TcpListener::bind(self.addr).await.unwrap();
        self.addr = listener.local_addr().unwrap();
        let to = self.to;
        self.task = Some(tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((mut inbound, _)) = listener.accept().await {
                connections.spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(to).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        }));
    }

    /// Drops every relayed connection and stops listening.
    async fn cut(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
    }
}

// Multi-threaded: the relay must run while the test waits (blocking) for the server's
// first line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_database_answers_503_and_service_resumes_when_it_is_back() {
    let direct = crate::support::postgres::fresh_database();
    let (prefix, rest) = direct.rsplit_once('@').unwrap();
    let (host_port, database) = rest.split_once('/').unwrap();
    let mut relay = Relay::start(host_port.parse().unwrap()).await;
    let database_url = format!("{prefix}@{}/{database}", relay.addr);
    let server = TestServer::start_on_database(&database_url, &[]);
    let (alice, client) = server.registered("alice").await;
    let protocol_id = register_test_protocol(&client, "Lost", 1).await;

    relay.cut().await;
    let health = raw(&server.url, "GET", "/healthz", None, Vec::new()).await;
    assert_eq!(
        (health.status, health.body["error"].as_str()),
        (503, Some("database_unavailable"))
    );
    let target = format!("/api/v1/protocols/{protocol_id}");
    let read = crate::support::server::signed(
        &server.url,
        &alice,
        "GET",
        &target,
        &serde_json::Value::Null,
    )
    .await;
    assert_eq!(read.status, 503, "{:?}", read.body);

    relay.restore().await;
    let mut healthy = false;
    for _ in 0..50 {
        if raw(&server.url, "GET", "/healthz", None, Vec::new())
            .await
            .status
            == 200
        {
            healthy = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(healthy, "the server reconnects once the database is back");
    assert_eq!(
        client.protocol(&protocol_id).await.unwrap().protocol_id,
        protocol_id
    );
}

/// `aigenora server` on `database_url`, expected to refuse to start: its last stderr line.
fn refused_start(database_url: &str) -> String {
    let output = crate::support::cli::aigenora()
        .args([
            "server",
            "--listen",
            "127.0.0.1:0",
            "--database",
            database_url,
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    stderr.lines().last().unwrap_or_default().to_string()
}

#[tokio::test]
async fn an_unknown_role_or_a_newer_schema_is_one_clear_line() {
    let database_url = crate::support::postgres::fresh_database();
    let (_, rest) = database_url.split_once('@').unwrap();
    let line = refused_start(&format!("postgres://nobody:pw@{rest}"));
    assert!(
        line.starts_with("error: cannot open the database postgres://nobody:***@")
            && line.contains("role \"nobody\" does not exist"),
        "{line}"
    );

    // A database migrated by a newer server (a migration this one does not know).
    let mut server = TestServer::start_on_database(&database_url, &[]);
    server.stop();
    let pool = sqlx::PgPool::connect(&database_url).await.unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (3, 'future', TRUE, '\\x00', 0)",
    )
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
    let line = refused_start(&database_url);
    assert!(
        line.contains("does not have this server's schema: migration 3 was previously applied"),
        "{line}"
    );
}

#[tokio::test]
async fn expired_rows_are_swept_by_one_instance_at_a_time() {
    use aigenora::server::store::{HOUSEKEEPING_LOCK, Store};
    use sqlx::Connection;

    let url = crate::support::postgres::fresh_database();
    let (first, second) = (
        Store::open(&url).await.unwrap(),
        Store::open(&url).await.unwrap(),
    );
    let mut other = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::query("INSERT INTO request_ids (digest, expires_at) VALUES ('expired', 5), ('live', 50)")
        .execute(&mut other)
        .await
        .unwrap();
    let remaining = async |conn: &mut sqlx::PgConnection| {
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM request_ids")
            .fetch_one(conn)
            .await
            .unwrap();
        n
    };

    // Another instance is sweeping (it holds the lock): this one skips.
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(HOUSEKEEPING_LOCK)
        .execute(&mut other)
        .await
        .unwrap();
    assert!(!first.housekeep(10).await.unwrap());
    assert!(!second.housekeep(10).await.unwrap());
    assert_eq!(remaining(&mut other).await, 2);
    sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(HOUSEKEEPING_LOCK)
        .execute(&mut other)
        .await
        .unwrap();
    assert!(second.housekeep(10).await.unwrap());
    assert_eq!(remaining(&mut other).await, 1, "only the expired row went");
    assert!(first.housekeep(10).await.unwrap(), "the lock was released");
}

#[tokio::test]
async fn a_key_rate_limit_counts_requests_at_both_instances_together() {
    let limited = ["--key-rate", "1", "--key-burst", "4"];
    let (a, b) = two_instances(&limited);
    let (alice, _) = a.registered("alice").await;
    let (via_a, via_b) = (a.client(&alice), b.client(&alice));
    // Registration used some of the burst; exhaust the rest, alternating instances.
    let mut allowed = 0;
    let mut refused = None;
    for n in 0..10u32 {
        let client = if n.is_multiple_of(2) { &via_a } else { &via_b };
        match client.agent(alice.public_key()).await {
            Ok(_) => allowed += 1,
            Err(error) => {
                refused = Some(error);
                break;
            }
        }
    }
    let refused = refused.expect("the burst is shared, not 4 per instance");
    assert_eq!(refused.status(), Some(429), "{refused}");
    assert!(allowed <= 4, "{allowed} allowed");
}

#[tokio::test]
async fn an_invitation_is_matched_once_and_its_session_ends_once_across_instances() {
    use aigenora::api::session::{NewSession, SessionStatus};
    use aigenora::identity;

    let _burst = one_burst_at_a_time();
    let (a, b) = two_instances(BURSTY);
    let (host, host_client) = a.registered("host").await;
    let protocol_id = register_test_protocol(&host_client, "Once", 1).await;
    let new = NewInvitation::signed(&host, &protocol_id, &fake_ticket(1));
    let post_id = host_client.create_invitation(&new).await.unwrap().post_id;

    // Ten guests post their match at once, alternating instances.
    let mut guests = Vec::new();
    for n in 0..10u32 {
        let server = if n.is_multiple_of(2) { &a } else { &b };
        guests.push(server.registered(&format!("guest{n}")).await);
    }
    let attempts = guests.iter().map(|(guest, client)| {
        let nonce = identity::new_session_nonce();
        let canonical = identity::session_canonical(
            &post_id,
            host.public_key(),
            guest.public_key(),
            &protocol_id,
            &nonce,
        );
        let host_signature = host.sign_hex(canonical.as_bytes());
        let proof = NewSession::signed_by_guest(
            guest,
            &post_id,
            host.public_key(),
            &protocol_id,
            &nonce,
            &host_signature,
        );
        async move { (client.create_session(&proof).await, client) }
    });
    let outcomes = futures_util::future::join_all(attempts).await;
    let mut created = Vec::new();
    for (outcome, client) in outcomes {
        match outcome {
            Ok(session) => created.push((session.session_id, client.clone())),
            Err(error) => {
                let status = error.status().unwrap_or_default();
                assert!((400..500).contains(&status), "{error}");
            }
        }
    }
    assert_eq!(created.len(), 1, "exactly one guest matched the invitation");
    let (session_id, guest_client) = created.pop().unwrap();

    // Host (through A) and guest (through B) end it at once: one end wins.
    let via_b = b.client(guest_client.identity());
    let (by_host, by_guest) = tokio::join!(
        host_client.set_session_status(&session_id, SessionStatus::Closed, None),
        via_b.set_session_status(&session_id, SessionStatus::Failed, None),
    );
    let ended: Vec<_> = [&by_host, &by_guest]
        .into_iter()
        .filter(|outcome| outcome.is_ok())
        .collect();
    assert_eq!(ended.len(), 1, "{by_host:?} / {by_guest:?}");
    let loser = if by_host.is_err() { by_host } else { by_guest };
    assert_eq!(loser.unwrap_err().status(), Some(409));
}

#[tokio::test]
async fn the_shared_list_version_moves_with_the_very_first_write() {
    use aigenora::server::store::{NewAgent, NewChallenge, RegisterOutcome, Store};

    let store = Store::open(&crate::support::postgres::fresh_database())
        .await
        .unwrap();
    let before = store.offered_version().await.unwrap();
    let key = "ab".repeat(32);
    let challenge = NewChallenge {
        nonce: "n",
        public_key: &key,
        address: "192.0.2.1",
        expires_at: i64::MAX,
    };
    store.insert_challenge(&challenge, 8, 0).await.unwrap();
    let agent = NewAgent {
        nonce: "n",
        public_key: &key,
        nickname: "first",
        bio: "",
    };
    let registered = store.register_agent(&agent, None, 1).await.unwrap();
    assert!(matches!(registered, RegisterOutcome::Registered(_)));
    let after = store.offered_version().await.unwrap();
    assert_ne!(
        before, after,
        "a cache filled before the first write must go stale"
    );
}

/// The most connections the server at `extra` holds on its database while 120 signed reads
/// arrive at once (all of them answered).
async fn peak_connections_under_a_burst(extra: &[&str]) -> i64 {
    let _burst = one_burst_at_a_time();
    let server = TestServer::start_with(Backend::Postgres, extra);
    let (alice, _) = server.registered("alice").await;
    let watcher = sqlx::PgPool::connect(&server.database_url).await.unwrap();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = tokio::spawn({
        let (watcher, done) = (watcher.clone(), done.clone());
        async move {
            let mut peak = 0;
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                let (n,): (i64,) = sqlx::query_as(
                    "SELECT COUNT(*) FROM pg_stat_activity \
                     WHERE application_name = 'aigenora-server' AND datname = current_database()",
                )
                .fetch_one(&watcher)
                .await
                .unwrap();
                peak = peak.max(n);
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            peak
        }
    });
    let reads = (0..120).map(|_| {
        let client = server.client(&alice);
        let key = alice.public_key().to_string();
        async move {
            // A slow machine may keep a read waiting past the pool's patience: the server
            // answers 503 (retry later), as a client would retry it; the bound must hold
            // all the same.
            for _ in 0..50 {
                match client.agent(&key).await {
                    Err(aigenora::client::ClientError::Status { status: 503, .. }) => {
                        tokio::time::sleep(Duration::from_millis(100)).await
                    }
                    answer => return answer,
                }
            }
            client.agent(&key).await
        }
    });
    for answer in futures_util::future::join_all(reads).await {
        assert!(answer.unwrap().is_some());
    }
    done.store(true, std::sync::atomic::Ordering::Release);
    let peak = sampler.await.unwrap();
    watcher.close().await;
    peak
}

#[tokio::test]
async fn database_connections_bound_what_one_instance_opens() {
    let bounded =
        peak_connections_under_a_burst(&[BURSTY, &["--database-connections", "2"]].concat()).await;
    assert!(
        bounded <= 2 + 2,
        "2 for requests and 2 for request ids and rate counts, saw {bounded}"
    );
    let default = peak_connections_under_a_burst(BURSTY).await;
    assert!(
        default > 4,
        "the default pools grow beyond that under the same burst (saw {default}), so the bound above is the flag's"
    );
}

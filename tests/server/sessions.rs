//! Sessions over real HTTP: the guest registers a match with both signatures, the
//! invitation leaves the market, participants end it once and report results.

use aigenora::api::invitation::{BrowseFilter, NewInvitation};
use aigenora::api::session::{NewSession, SessionStatus, Winner};
use aigenora::client::RestClient;
use aigenora::identity::{self, Identity};
use serde_json::{Value, json};

use crate::support::server::{TestServer, fake_ticket, register_test_protocol, signed};

struct Match {
    host: Identity,
    host_client: RestClient,
    guest: Identity,
    guest_client: RestClient,
    post_id: String,
    protocol_id: String,
}

async fn offered(server: &TestServer) -> Match {
    let (host, host_client) = server.registered("host").await;
    let (guest, guest_client) = server.registered("guest").await;
    let protocol_id = register_test_protocol(&host_client, "Greeting", 1).await;
    let new = NewInvitation::signed(&host, &protocol_id, &fake_ticket(1));
    let post_id = host_client.create_invitation(&new).await.unwrap().post_id;
    Match {
        host,
        host_client,
        guest,
        guest_client,
        post_id,
        protocol_id,
    }
}

/// The proof a guest would post after the P2P handshake.
fn proof(m: &Match, nonce: &str) -> NewSession {
    let canonical = identity::session_canonical(
        &m.post_id,
        m.host.public_key(),
        m.guest.public_key(),
        &m.protocol_id,
        nonce,
    );
    let host_signature = m.host.sign_hex(canonical.as_bytes());
    NewSession::signed_by_guest(
        &m.guest,
        &m.post_id,
        m.host.public_key(),
        &m.protocol_id,
        nonce,
        &host_signature,
    )
}

#[tokio::test]
async fn a_guest_matches_an_offer_and_both_end_it_once() {
    let server = TestServer::start(&[]);
    let m = offered(&server).await;
    let outsider = server.client(&Identity::generate());
    let before = outsider.browse(&BrowseFilter::default()).await.unwrap();
    assert_eq!(before.total, 1, "offered until matched");
    let nonce = identity::new_session_nonce();
    let session = proof(&m, &nonce);
    let created = m.guest_client.create_session(&session).await.unwrap();
    assert_eq!(created.session_id, session.session_id());
    assert_eq!(created.status, Some(SessionStatus::Matched));

    assert_eq!(
        outsider
            .browse(&BrowseFilter::default())
            .await
            .unwrap()
            .total,
        0,
        "matched offers leave the market"
    );
    assert_eq!(
        outsider.invitation(&m.post_id).await.unwrap_err().status(),
        Some(409)
    );
    let again = m
        .guest_client
        .create_session(&proof(&m, &identity::new_session_nonce()))
        .await
        .unwrap_err();
    assert_eq!(again.status(), Some(409));

    let read = outsider.session(&created.session_id).await.unwrap();
    assert_eq!(
        (
            read.host_public_key.as_str(),
            read.guest_public_key.as_str()
        ),
        (m.host.public_key(), m.guest.public_key())
    );
    assert_eq!(
        (read.status, read.post_id.as_str()),
        (SessionStatus::Matched, m.post_id.as_str())
    );

    assert_eq!(
        outsider
            .set_session_status(&created.session_id, SessionStatus::Closed, None)
            .await
            .unwrap_err()
            .status(),
        Some(403)
    );
    let closed = m
        .host_client
        .set_session_status(&created.session_id, SessionStatus::Closed, None)
        .await
        .unwrap();
    assert_eq!(closed.status, SessionStatus::Closed);
    let second = m
        .guest_client
        .set_session_status(&created.session_id, SessionStatus::Closed, None)
        .await
        .unwrap_err();
    assert_eq!(second.status(), Some(409));
    assert_eq!(
        m.host_client.invitation(&m.post_id).await.unwrap().status,
        "closed"
    );

    m.host_client
        .report_result(&created.session_id, Winner::Host)
        .await
        .unwrap();
    let pending = outsider
        .session(&created.session_id)
        .await
        .unwrap()
        .result
        .unwrap();
    assert_eq!(
        (pending.outcome.as_str(), pending.winner),
        ("pending", None)
    );
    let agreed = m
        .guest_client
        .report_result(&created.session_id, Winner::Host)
        .await
        .unwrap()
        .result
        .unwrap();
    assert_eq!(
        (agreed.outcome.as_str(), agreed.winner),
        ("agreed", Some(Winner::Host))
    );
    m.guest_client
        .report_result(&created.session_id, Winner::Host)
        .await
        .expect("repeating a report is fine");
    let changed = m
        .guest_client
        .report_result(&created.session_id, Winner::Guest)
        .await
        .unwrap_err();
    assert_eq!(changed.status(), Some(409));
    assert_eq!(
        outsider
            .report_result(&created.session_id, Winner::Draw)
            .await
            .unwrap_err()
            .status(),
        Some(403)
    );
    assert_eq!(
        outsider
            .session(&"f".repeat(64))
            .await
            .unwrap_err()
            .status(),
        Some(404)
    );
}

#[tokio::test]
async fn session_proofs_are_checked() {
    let server = TestServer::start(&[]);
    let m = offered(&server).await;
    let nonce = identity::new_session_nonce();
    let post = |who: &Identity, body: &NewSession| {
        let (url, who, body) = (
            server.url.clone(),
            who.clone(),
            serde_json::to_value(body).unwrap(),
        );
        async move { signed(&url, &who, "POST", "/api/v1/sessions", &body).await }
    };

    let mut tampered = proof(&m, &nonce);
    tampered.host_signature = m.host.sign_hex(b"another canonical");
    let refused = post(&m.guest, &tampered).await;
    assert_eq!(refused.body["error"], "invalid_session_signature");
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap()
            .starts_with("host_signature")
    );

    let mut other_nonce = proof(&m, &nonce);
    other_nonce.session_nonce = identity::new_session_nonce();
    assert_eq!(
        post(&m.guest, &other_nonce).await.body["error"],
        "invalid_session_signature"
    );

    let as_host = post(&m.host, &proof(&m, &nonce)).await;
    assert_eq!(
        (as_host.status, as_host.body["error"].as_str()),
        (403, Some("not_guest"))
    );

    let mut wrong_protocol = proof(&m, &nonce);
    wrong_protocol.protocol_id = "a".repeat(64);
    assert_eq!(
        post(&m.guest, &wrong_protocol).await.body["error"],
        "protocol_mismatch"
    );

    let self_match = Match {
        guest: m.host.clone(),
        guest_client: m.host_client.clone(),
        host: m.host.clone(),
        host_client: m.host_client.clone(),
        post_id: m.post_id.clone(),
        protocol_id: m.protocol_id.clone(),
    };
    assert_eq!(
        post(&m.host, &proof(&self_match, &nonce)).await.body["error"],
        "self_session"
    );

    let stranger = Identity::generate();
    let unregistered = Match {
        guest: stranger.clone(),
        guest_client: server.client(&stranger),
        host: m.host.clone(),
        host_client: m.host_client.clone(),
        post_id: m.post_id.clone(),
        protocol_id: m.protocol_id.clone(),
    };
    let refused = post(&stranger, &proof(&unregistered, &nonce)).await;
    assert_eq!(
        (refused.status, refused.body["error"].as_str()),
        (403, Some("not_registered"))
    );

    let mut bad_nonce = proof(&m, "a:b");
    bad_nonce.session_nonce = "a:b".into();
    assert_eq!(
        post(&m.guest, &bad_nonce).await.body["error"],
        "invalid_session"
    );

    let status = signed(
        &server.url,
        &m.guest,
        "POST",
        "/api/v1/sessions/x/status",
        &json!({"status": "matched"}),
    )
    .await;
    assert_eq!(status.body["error"], "invalid_status");
    let missing = signed(
        &server.url,
        &m.guest,
        "POST",
        "/api/v1/sessions",
        &Value::Null,
    )
    .await;
    assert_eq!(missing.body["error"], "invalid_body");
    // Nothing above consumed the offer.
    m.guest_client
        .create_session(&proof(&m, &nonce))
        .await
        .unwrap();
}

#[tokio::test]
async fn an_expired_offer_cannot_be_matched() {
    let server = TestServer::start(&["--invitation-ttl-seconds", "1"]);
    let m = offered(&server).await;
    tokio::time::sleep(std::time::Duration::from_millis(1300)).await;
    let refused = m
        .guest_client
        .create_session(&proof(&m, &identity::new_session_nonce()))
        .await
        .unwrap_err();
    assert_eq!(refused.status(), Some(410));
}

/// An end names its party's winner in the same request: both are written in one
/// transaction, or (when the winner contradicts that party's earlier report) neither.
#[tokio::test]
async fn an_end_carries_its_winner_and_writes_both_or_neither() {
    let server = TestServer::start(&[]);
    let m = offered(&server).await;
    let session = proof(&m, &identity::new_session_nonce());
    let id = m
        .guest_client
        .create_session(&session)
        .await
        .unwrap()
        .session_id;

    m.guest_client
        .report_result(&id, Winner::Guest)
        .await
        .unwrap();
    let contradicted = m
        .guest_client
        .set_session_status(&id, SessionStatus::Closed, Some(Winner::Host))
        .await
        .unwrap_err();
    assert_eq!(
        contradicted.code(),
        Some("result_reported"),
        "{contradicted}"
    );
    let untouched = m.host_client.session(&id).await.unwrap();
    assert_eq!(untouched.status, SessionStatus::Matched);
    assert_eq!(
        m.host_client.invitation(&m.post_id).await.unwrap().status,
        "matched"
    );

    let ended = m
        .host_client
        .set_session_status(&id, SessionStatus::Closed, Some(Winner::Host))
        .await
        .unwrap();
    assert_eq!(ended.status, SessionStatus::Closed);
    let result = ended.result.unwrap();
    assert_eq!(
        (
            result.host_report,
            result.guest_report,
            result.outcome.as_str()
        ),
        (Some(Winner::Host), Some(Winner::Guest), "disputed")
    );
    assert_eq!(
        m.host_client.invitation(&m.post_id).await.unwrap().status,
        "closed"
    );
    let second = m
        .guest_client
        .set_session_status(&id, SessionStatus::Closed, Some(Winner::Guest))
        .await
        .unwrap_err();
    assert_eq!(second.code(), Some("session_ended"), "{second}");
}

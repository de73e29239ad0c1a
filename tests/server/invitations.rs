//! Invitations over real HTTP: create checks, browse filters, detail, renew, cancel, the
//! per-key limit, and expiry on every read.

use std::time::Duration;

use aigenora::api::invitation::{BrowseFilter, InvitationType, NewInvitation};
use aigenora::client::RestClient;
use aigenora::identity::Identity;
use serde_json::{Value, json};

use crate::support::server::{Raw, TestServer, fake_ticket, register_test_protocol, signed};

fn post(host: &Identity, protocol_id: &str, seed: u32) -> NewInvitation {
    let mut new = NewInvitation::signed(host, protocol_id, &fake_ticket(seed));
    new.message = "Greeting".into();
    new.tags = vec!["game".into(), "greet".into()];
    new
}

/// Three invitations by `host` for `protocol_id` (the most one key may offer); their ids.
async fn offer_three(client: &RestClient, host: &Identity, protocol_id: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for seed in 0..3 {
        let lease = client
            .create_invitation(&post(host, protocol_id, seed))
            .await;
        ids.push(lease.unwrap().post_id);
    }
    ids
}

async fn create_raw(server: &TestServer, who: &Identity, body: Value) -> Raw {
    signed(&server.url, who, "POST", "/api/v1/invitations", &body).await
}

#[tokio::test]
async fn create_checks_the_binding_the_ticket_the_protocol_and_the_tags() {
    let server = TestServer::start(&[]);
    let (alice, client) = server.registered("alice").await;
    let protocol_id = register_test_protocol(&client, "Greeting", 1).await;
    let good = serde_json::to_value(post(&alice, &protocol_id, 1)).unwrap();

    let mut forged = good.clone();
    forged["iroh_ticket"] = json!(fake_ticket(2));
    forged["transport_info"]["ticket"] = json!(fake_ticket(2));
    let refused = create_raw(&server, &alice, forged).await;
    assert_eq!(
        (refused.status, refused.body["error"].as_str()),
        (400, Some("invalid_binding_signature"))
    );

    let mut mismatch = good.clone();
    mismatch["transport_info"]["ticket"] = json!(fake_ticket(3));
    assert_eq!(
        create_raw(&server, &alice, mismatch).await.body["error"],
        "ticket_mismatch"
    );

    let (bob, _) = server.registered("bob").await;
    let stolen = create_raw(&server, &bob, good.clone()).await;
    assert_eq!(
        stolen.status, 400,
        "a binding signed by someone else is refused: {}",
        stolen.body
    );

    let unknown = serde_json::to_value(post(&alice, &"ab".repeat(32), 4)).unwrap();
    let refused = create_raw(&server, &alice, unknown).await;
    assert_eq!(
        (refused.status, refused.body["message"].as_str()),
        (400, Some("protocol_id not found"))
    );

    let mut bad_tags = post(&alice, &protocol_id, 5);
    bad_tags.tags = vec!["no spaces".into()];
    assert_eq!(
        create_raw(&server, &alice, serde_json::to_value(bad_tags).unwrap())
            .await
            .body["error"],
        "invalid_tags"
    );
    let mut bad_type = good.clone();
    bad_type["type"] = json!("auction");
    assert_eq!(
        create_raw(&server, &alice, bad_type).await.body["error"],
        "invalid_body"
    );

    let created = create_raw(&server, &alice, good).await;
    assert_eq!(created.status, 201);
    let post_id = created.body["post_id"].as_str().unwrap();
    assert!(post_id.len() == 16 && aigenora::api::is_url_safe_id(post_id));
    assert_eq!(created.body["status"], "active");
}

#[tokio::test]
async fn browse_filters_and_detail_carry_what_join_needs() {
    let server = TestServer::start(&[]);
    let (alice, client) = server.registered("alice").await;
    let (bob, _) = server.registered("bob").await;
    let greet = register_test_protocol(&client, "Greeting", 1).await;
    let other = register_test_protocol(&client, "Other", 2).await;
    let mut first = post(&alice, &greet, 1);
    first.options = json!({"best_of": 3, "pricing": {"model": "free"}})
        .as_object()
        .unwrap()
        .clone();
    let first_id = client.create_invitation(&first).await.unwrap().post_id;
    let mut second = post(&bob, &other, 2);
    second.invitation_type = InvitationType::Demand;
    second.tags = vec!["other".into()];
    server
        .client(&bob)
        .create_invitation(&second)
        .await
        .unwrap();

    let reader = server.client(&Identity::generate());
    let all = reader.browse(&BrowseFilter::default()).await.unwrap();
    assert_eq!((all.total, all.results.len()), (2, 2));
    let by = |filter: BrowseFilter| {
        let reader = reader.clone();
        async move {
            reader
                .browse(&filter)
                .await
                .unwrap()
                .results
                .into_iter()
                .map(|i| i.post_id)
                .collect::<Vec<_>>()
        }
    };
    let tags = |t: &[&str]| BrowseFilter {
        tags: t.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let only_first = std::slice::from_ref(&first_id);
    assert_eq!(by(tags(&["game", "greet"])).await, only_first);
    assert_eq!(by(tags(&["game", "other"])).await, Vec::<String>::new());
    assert_eq!(
        by(BrowseFilter {
            protocol_id: Some(greet.clone()),
            ..Default::default()
        })
        .await,
        only_first
    );
    let demand = BrowseFilter {
        invitation_type: Some(InvitationType::Demand),
        ..Default::default()
    };
    assert_eq!(by(demand).await.len(), 1);

    let item = &reader.browse(&tags(&["greet"])).await.unwrap().results[0];
    assert!(item.registered);
    assert_eq!(
        (item.nickname.as_deref(), item.pricing.clone()),
        (Some("alice"), Some(json!({"model": "free"})))
    );
    let page = signed(
        &server.url,
        &bob,
        "GET",
        "/api/v1/invitations?limit=1",
        &Value::Null,
    )
    .await;
    assert!(
        page.body["results"][0].get("transport_info").is_none()
            && page.body["results"][0].get("options").is_none()
    );
    assert!(page.body["next_cursor"].is_string());
    assert_eq!(page.body["total"], 2, "the total counts beyond the page");
    for bad in ["?tags=", "?tags=a%20b", "?type=auction", "?protocol_id=abc"] {
        let refused = signed(
            &server.url,
            &bob,
            "GET",
            &format!("/api/v1/invitations{bad}"),
            &Value::Null,
        )
        .await;
        assert_eq!(
            (refused.status, refused.body["error"].as_str()),
            (400, Some("invalid_filter")),
            "{bad}"
        );
    }

    let detail = reader.invitation(&first_id).await.unwrap();
    assert_eq!(detail.verified_ticket().unwrap(), fake_ticket(1));
    assert_eq!(detail.options["best_of"], 3);
    assert_eq!(
        detail.transport_info.unwrap().endpoint_id,
        alice.public_key()
    );
}

#[tokio::test]
async fn owners_renew_and_cancel_others_cannot_and_a_fourth_offer_is_refused() {
    let server = TestServer::start(&[]);
    let (alice, client) = server.registered("alice").await;
    let protocol_id = register_test_protocol(&client, "Greeting", 1).await;
    let ids = offer_three(&client, &alice, &protocol_id).await;
    let fourth = client
        .create_invitation(&post(&alice, &protocol_id, 4))
        .await
        .unwrap_err();
    assert_eq!(
        fourth.to_string(),
        "POST /api/v1/invitations failed: HTTP 429: at most 3 active invitations per key"
    );

    let mallory = server.client(&Identity::generate());
    assert_eq!(
        mallory
            .renew_invitation(&ids[0])
            .await
            .unwrap_err()
            .status(),
        Some(403)
    );
    assert_eq!(
        mallory
            .cancel_invitation(&ids[0])
            .await
            .unwrap_err()
            .status(),
        Some(403)
    );
    let renewed = client.renew_invitation(&ids[0]).await.unwrap();
    assert_eq!(
        (renewed.post_id.as_str(), renewed.status.as_str()),
        (ids[0].as_str(), "active")
    );
    // The collab host renews with an empty body.
    let empty = signed(
        &server.url,
        &alice,
        "POST",
        &format!("/api/v1/invitations/{}/renew", ids[0]),
        &Value::Null,
    )
    .await;
    assert_eq!(empty.status, 200);

    let cancelled = signed(
        &server.url,
        &alice,
        "DELETE",
        &format!("/api/v1/invitations/{}", ids[0]),
        &Value::Null,
    )
    .await;
    assert_eq!((cancelled.status, cancelled.bytes.len()), (204, 0));
    assert_eq!(
        client
            .cancel_invitation(&ids[0])
            .await
            .unwrap_err()
            .status(),
        Some(410)
    );
    assert_eq!(
        client.renew_invitation(&ids[0]).await.unwrap_err().status(),
        Some(410)
    );
    assert_eq!(
        mallory.invitation(&ids[0]).await.unwrap_err().status(),
        Some(410)
    );
    assert_eq!(
        client.invitation(&ids[0]).await.unwrap().status,
        "cancelled",
        "the owner still sees it"
    );
    assert_eq!(
        mallory
            .browse(&BrowseFilter::default())
            .await
            .unwrap()
            .total,
        2
    );
    client
        .create_invitation(&post(&alice, &protocol_id, 5))
        .await
        .expect("a cancelled one frees a slot");
    assert_eq!(
        client.cancel_invitation("nope").await.unwrap_err().status(),
        Some(404)
    );
}

/// The server keeps browse answers while nothing changed: every write must show at once.
#[tokio::test]
async fn browse_answers_follow_every_write_at_once() {
    let server = TestServer::start(&[]);
    let (alice, client) = server.registered("alice").await;
    let protocol_id = register_test_protocol(&client, "Greeting", 1).await;
    let reader = server.client(&Identity::generate());
    let browse = || async { reader.browse(&BrowseFilter::default()).await.unwrap() };
    assert_eq!(browse().await.total, 0);
    assert_eq!(browse().await.total, 0);

    let first = client
        .create_invitation(&post(&alice, &protocol_id, 1))
        .await
        .unwrap();
    let listed = browse().await;
    assert_eq!(listed.total, 1, "a new offer");
    assert_eq!(browse().await.results, listed.results);
    tokio::time::sleep(Duration::from_millis(5)).await;
    let renewed = client.renew_invitation(&first.post_id).await.unwrap();
    assert_ne!(renewed.expires_at, first.expires_at);
    assert_eq!(
        browse().await.results[0].expires_at.as_ref(),
        Some(&renewed.expires_at),
        "a renewal"
    );

    let (bob, bob_client) = server.registered("bob").await;
    bob_client
        .create_invitation(&post(&bob, &protocol_id, 2))
        .await
        .unwrap();
    let listed = browse().await;
    assert_eq!(listed.total, 2, "another key's offer");
    assert_eq!(
        (
            listed.results[0].registered,
            listed.results[0].nickname.as_deref()
        ),
        (true, Some("bob")),
        "with its creator's registration"
    );

    client.cancel_invitation(&first.post_id).await.unwrap();
    assert_eq!(browse().await.total, 1, "a cancellation");
}

#[tokio::test]
async fn expiry_is_enforced_on_every_read() {
    let server = TestServer::start(&["--invitation-ttl-seconds", "1"]);
    let (alice, client) = server.registered("alice").await;
    let protocol_id = register_test_protocol(&client, "Greeting", 1).await;
    let ids = offer_three(&client, &alice, &protocol_id).await;
    let reader = server.client(&Identity::generate());
    assert_eq!(
        reader.browse(&BrowseFilter::default()).await.unwrap().total,
        3
    );
    tokio::time::sleep(Duration::from_millis(1300)).await;

    assert_eq!(
        reader.browse(&BrowseFilter::default()).await.unwrap().total,
        0
    );
    let gone = reader.invitation(&ids[0]).await.unwrap_err();
    assert_eq!(gone.status(), Some(410));
    assert!(
        gone.to_string().contains("the invitation expired at"),
        "{gone}"
    );
    assert_eq!(client.invitation(&ids[0]).await.unwrap().status, "expired");
    assert_eq!(
        client.renew_invitation(&ids[0]).await.unwrap_err().status(),
        Some(410)
    );
    client
        .create_invitation(&post(&alice, &protocol_id, 9))
        .await
        .expect("expired offers do not count");
    client
        .cancel_invitation(&ids[1])
        .await
        .expect("an expired offer can still be withdrawn");
}

//! Protocol registration, lookup and the directory, over real HTTP.

use aigenora::api::protocol::NewProtocol;
use aigenora::client::ProtocolRegistered;
use aigenora::identity::Identity;
use aigenora::spec::Spec;
use serde_json::{Value, json};

use crate::support::server::{TestServer, register_test_protocol, signed, test_spec};

fn registration(spec: Value) -> NewProtocol {
    NewProtocol::for_spec(&Spec::from_value(spec).unwrap())
}

#[tokio::test]
async fn register_recomputes_the_id_and_applies_the_run_gate() {
    let server = TestServer::start(&[]);
    let (alice, client) = server.registered("alice").await;
    let body = registration(test_spec("Greeting", 1));
    let ProtocolRegistered::New(record) = client.register_protocol(&body).await.unwrap() else {
        panic!("first registration creates");
    };
    assert_eq!(record.protocol_id, body.protocol_id);
    assert_eq!(
        record.public_key.as_deref(),
        Some(alice.public_key()),
        "the registrant is stored"
    );
    assert!(matches!(
        client.register_protocol(&body).await.unwrap(),
        ProtocolRegistered::AlreadyRegistered(_)
    ));
    let duplicate = signed(
        &server.url,
        &alice,
        "POST",
        "/api/v1/protocols",
        &serde_json::to_value(&body).unwrap(),
    )
    .await;
    assert_eq!(
        (duplicate.status, duplicate.body["error"].as_str()),
        (409, Some("protocol_exists"))
    );

    let mut lying = registration(test_spec("Greeting", 2));
    lying.protocol_id = body.protocol_id.clone();
    let refused = signed(
        &server.url,
        &alice,
        "POST",
        "/api/v1/protocols",
        &serde_json::to_value(&lying).unwrap(),
    )
    .await;
    assert_eq!(
        (refused.status, refused.body["error"].as_str()),
        (400, Some("protocol_id_mismatch"))
    );

    let mut broken = test_spec("Broken", 3);
    broken["messages"][0]["fields"]["text"]["type"] = json!("string");
    let refused = signed(
        &server.url,
        &alice,
        "POST",
        "/api/v1/protocols",
        &serde_json::to_value(registration(broken)).unwrap(),
    )
    .await;
    assert_eq!(refused.status, 400);
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap()
            .contains("messages[0].fields.text.type"),
        "{}",
        refused.body
    );

    let mut future = test_spec("Future", 4);
    future["spec_version"] = json!("2.0");
    let refused = signed(
        &server.url,
        &alice,
        "POST",
        "/api/v1/protocols",
        &serde_json::to_value(registration(future)).unwrap(),
    )
    .await;
    assert!(
        refused.body["message"]
            .as_str()
            .unwrap()
            .contains("unsupported spec_version"),
        "{}",
        refused.body
    );

    // A spec sent as a JSON string is accepted too.
    let mut as_text = registration(test_spec("Text", 5));
    as_text.spec_json = Value::String(as_text.spec_json.to_string());
    let created = signed(
        &server.url,
        &alice,
        "POST",
        "/api/v1/protocols",
        &serde_json::to_value(&as_text).unwrap(),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
}

#[tokio::test]
async fn a_protocol_is_read_back_by_id_and_bundles_are_not_served() {
    let server = TestServer::start(&[]);
    let (alice, client) = server.registered("alice").await;
    let protocol_id = register_test_protocol(&client, "Readback", 1).await;
    let record = client.protocol(&protocol_id).await.unwrap();
    assert_eq!(record.spec_json, test_spec("Readback", 1));
    assert_eq!(
        (record.name.as_str(), record.protocol_type.as_str()),
        ("Readback", "protocol")
    );
    assert_eq!(
        client.protocol_spec(&protocol_id).await.unwrap(),
        test_spec("Readback", 1)
    );

    let bundle = signed(
        &server.url,
        &alice,
        "GET",
        &format!("/api/v1/protocols/{protocol_id}/bundle"),
        &Value::Null,
    )
    .await;
    assert_eq!(bundle.status, 404);
    let unknown = client.protocol(&"0".repeat(64)).await.unwrap_err();
    assert_eq!(unknown.status(), Some(404));
    assert!(
        unknown
            .to_string()
            .ends_with("HTTP 404: protocol_id not found"),
        "{unknown}"
    );
}

#[tokio::test]
async fn the_directory_pages_newest_first_with_filter_bound_cursors() {
    let server = TestServer::start(&[]);
    let (_, client) = server.registered("lister").await;
    let mut ids = Vec::new();
    for (variant, name) in ["Alpha chess", "Beta poker", "Gamma chess"]
        .iter()
        .enumerate()
    {
        ids.push(register_test_protocol(&client, name, variant as u32).await);
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let first = client.list_protocols(2, None, None).await.unwrap();
    let names: Vec<&str> = first.results.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["Gamma chess", "Beta poker"]);
    let cursor = first.next_cursor.clone().expect("a second page");
    let second = client.list_protocols(2, Some(&cursor), None).await.unwrap();
    assert_eq!(second.results[0].name, "Alpha chess", "then the older ones");
    let seeded = aigenora::protocols::BUILTINS.len();
    let mut rest = second.results.len();
    let mut next = second.next_cursor.clone();
    while let Some(cursor) = next {
        let page = client.list_protocols(2, Some(&cursor), None).await.unwrap();
        rest += page.results.len();
        next = page.next_cursor;
    }
    assert_eq!(rest, 1 + seeded, "Alpha chess, then the seeded built-ins");

    let chess = client
        .list_protocols(20, None, Some("CHESS"))
        .await
        .unwrap();
    assert_eq!(chess.results.len(), 2);
    let mixed = client
        .list_protocols(2, Some(&cursor), Some("chess"))
        .await
        .unwrap_err();
    assert!(
        mixed
            .to_string()
            .contains("HTTP 400: the cursor was issued for different filters"),
        "{mixed}"
    );

    let alice = Identity::generate();
    let clamped = signed(
        &server.url,
        &alice,
        "GET",
        "/api/v1/protocols?limit=1000",
        &Value::Null,
    )
    .await;
    assert_eq!(
        (
            clamped.status,
            clamped.body["results"].as_array().unwrap().len()
        ),
        (200, 3 + aigenora::protocols::BUILTINS.len())
    );
    let zero = signed(
        &server.url,
        &alice,
        "GET",
        "/api/v1/protocols?limit=0",
        &Value::Null,
    )
    .await;
    assert_eq!(zero.body["error"], "invalid_limit");
    let offset = signed(
        &server.url,
        &alice,
        "GET",
        "/api/v1/protocols?offset=0&limit=1",
        &Value::Null,
    )
    .await;
    assert_eq!(offset.status, 200);
}

//! Durable or refused: on a disk that fills up, the server answers every write either with
//! its success after the write committed, or with 503; once space is back, writes commit
//! again, and everything acknowledged is still there from a fresh connection and after a
//! restart. A database whose pages are corrupt is refused at start-up.

use aigenora::api::protocol::NewProtocol;
use aigenora::client::{ClientError, ProtocolRegistered, RestClient};
use aigenora::spec::Spec;
use serde_json::json;

use crate::support::server::TestServer;
use crate::support::small_disk::SmallDisk;

/// A protocol of a few KiB (so the disk fills in a few dozen writes) whose id depends on `n`.
fn bulky_protocol(n: u32) -> NewProtocol {
    let spec = json!({
        "name": format!("Bulky {n}"),
        "spec_version": "1.0",
        "description": "A protocol that takes room on disk",
        "type": "protocol",
        "rules": {"variant": n, "notes": "x".repeat(3000)},
        "messages": [
            {"name": "hello", "direction": "guest_to_host", "fields": {
                "action": {"type": "enum", "values": ["hello"], "required": true}}},
            {"name": "answer", "direction": "host_to_guest", "fields": {
                "action": {"type": "enum", "values": ["answer"], "required": true}}}
        ]
    });
    NewProtocol::for_spec(&Spec::from_value(spec).unwrap())
}

/// Registers protocol `n`: Some(id) when acknowledged, None when refused with 503; any other
/// answer fails the test.
async fn try_register(client: &RestClient, n: u32) -> Option<String> {
    let body = bulky_protocol(n);
    match client.register_protocol(&body).await {
        Ok(ProtocolRegistered::New(record)) => {
            assert_eq!(record.protocol_id, body.protocol_id);
            Some(body.protocol_id)
        }
        Err(ClientError::Status { status: 503, .. }) => None,
        other => panic!("write {n}: expected 201 or 503, got {other:?}"),
    }
}

const UNLIMITED: &[&str] = &[
    "--key-rate",
    "0",
    "--address-rate",
    "0",
    "--protocols-per-key",
    "100000",
    "--protocol-bytes-per-key",
    "1000000000",
];

#[tokio::test]
async fn a_full_disk_never_gets_a_write_acknowledged_that_is_not_stored() {
    let disk = SmallDisk::new(6 * 1024 * 1024);
    let mut server = TestServer::start_on_small_disk(&disk, UNLIMITED);
    let (_, client) = server.registered("filler").await;
    let mut acknowledged = Vec::new();
    let mut n = 0;
    for _ in 0..5 {
        acknowledged.push(try_register(&client, n).await.expect("space left"));
        n += 1;
    }

    disk.fill("filler");
    let mut refused = 0;
    for _ in 0..40 {
        match try_register(&client, n).await {
            Some(id) => acknowledged.push(id),
            None => refused += 1,
        }
        n += 1;
    }
    assert!(refused > 0, "the full disk refused no write at all");

    disk.free("filler");
    for _ in 0..10 {
        let id = try_register(&client, n)
            .await
            .unwrap_or_else(|| panic!("write {n} refused although the disk has space again"));
        acknowledged.push(id);
        n += 1;
    }

    // Every acknowledged write, read back at once from a fresh connection on what is on
    // disk (a copy of the database and its WAL: SQLite resolves /proc/<pid>/root to `/`).
    let copy = tempfile::tempdir().unwrap();
    for file in ["community.sqlite3", "community.sqlite3-wal"] {
        std::fs::copy(
            disk.outside(std::path::Path::new(file)),
            copy.path().join(file),
        )
        .unwrap();
    }
    let fresh = format!(
        "sqlite://{}",
        copy.path().join("community.sqlite3").display()
    );
    let pool = sqlx::SqlitePool::connect(&fresh).await.unwrap();
    for id in &acknowledged {
        let found: Option<(String,)> =
            sqlx::query_as("SELECT protocol_id FROM protocols WHERE protocol_id = ?")
                .bind(id)
                .fetch_optional(&pool)
                .await
                .unwrap();
        assert!(
            found.is_some(),
            "acknowledged protocol {id} is not in the database"
        );
    }
    pool.close().await;
    // ... and through the server after a graceful restart (which must exit 0).
    server.restart();
    let client = RestClient::new(&server.url, client.identity().clone()).unwrap();
    for id in &acknowledged {
        let record = client.protocol(id).await.unwrap_or_else(|e| {
            panic!("acknowledged protocol {id} is gone after the restart: {e}")
        });
        assert_eq!(&record.protocol_id, id);
    }
    assert!(try_register(&client, n).await.is_some());
}

#[tokio::test]
async fn a_database_with_damaged_pages_is_refused_at_start_with_one_line() {
    let mut server = TestServer::start_with(crate::support::postgres::Backend::Sqlite, UNLIMITED);
    let (_, client) = server.registered("writer").await;
    for n in 0..20 {
        assert!(try_register(&client, n).await.is_some());
    }
    server.stop();
    let path = server.database();
    let mut bytes = std::fs::read(&path).unwrap();
    let page = u16::from_be_bytes([bytes[16], bytes[17]]) as usize;
    assert!(bytes.len() >= 4 * page, "a database of several pages");
    // Every page but the first (the schema): the tables' b-trees are garbage now.
    for byte in &mut bytes[page..] {
        *byte = 0x5A;
    }
    std::fs::write(&path, bytes).unwrap();

    let output = crate::support::cli::aigenora()
        .args(["server", "--listen", "127.0.0.1:0", "--database"])
        .arg(&server.database_url)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("is damaged"), "{stderr}");
    assert!(
        output.stdout.is_empty(),
        "no URL printed for a refused database"
    );
}

//! The server started in-process from the library (as `aigenora demo` will): a free
//! loopback port, a temporary database, a client, and a clean shutdown.

use aigenora::client::RestClient;
use aigenora::identity::Identity;
use aigenora::server::{self, ServerConfig};

use crate::support::postgres::{self, Backend};

#[tokio::test]
async fn serve_binds_a_free_port_and_shuts_down_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::from_env();
    let database = match backend {
        Backend::Sqlite => server::sqlite_url(&dir.path().join("demo.sqlite3")),
        Backend::Postgres => postgres::fresh_database(),
    };
    let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), database);
    config.pow_difficulty = 2;
    let handle = server::serve(config).await.unwrap();
    assert_ne!(handle.addr().port(), 0);
    let client = RestClient::new(&handle.url(), Identity::generate()).unwrap();
    client.register("demo", "").await.unwrap();
    let listed = client.list_protocols(100, None, None).await.unwrap();
    assert_eq!(
        listed.results.len(),
        aigenora::protocols::BUILTINS.len(),
        "the built-ins are seeded"
    );
    assert!(listed.next_cursor.is_none());
    handle.shutdown().await.unwrap();
    assert!(
        client.list_protocols(5, None, None).await.is_err(),
        "nothing listens any more"
    );
    if backend == Backend::Sqlite {
        assert!(
            !dir.path().join("demo.sqlite3-wal").exists(),
            "the WAL is checkpointed on close"
        );
    }
}

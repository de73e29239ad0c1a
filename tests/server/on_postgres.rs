//! The whole server suite once more on PostgreSQL, so that `cargo test` holds both backends
//! to the same tests (each test above runs on SQLite unless `AIGENORA_TEST_BACKEND` says).

use crate::support::postgres::rerun_on_postgres;

#[test]
fn the_server_suite_passes_on_postgres() {
    rerun_on_postgres("", "the_server_suite_passes_on_postgres");
}

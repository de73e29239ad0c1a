//! Startup seeding: every built-in protocol of this binary is known to the server, so
//! hosts can post invitations for them without registering them first.

use super::clock::now_ms;
use super::store::{InsertProtocol, NewProtocolRow, Store, StoreError};
use crate::api::protocol::NewProtocol;
use crate::protocols::BUILTINS;
use crate::spec::Spec;

/// Stores each built-in spec that is not stored yet (a broken one is logged and skipped).
pub async fn seed_builtin_protocols(store: &Store) -> Result<(), StoreError> {
    for builtin in BUILTINS {
        let spec = match Spec::from_bytes(builtin.spec_json.as_bytes()) {
            Ok(spec) => spec,
            Err(error) => {
                tracing::error!(alias = builtin.alias, %error, "built-in protocol not seeded");
                continue;
            }
        };
        let body = NewProtocol::for_spec(&spec);
        let compact =
            serde_json::to_string(&body.spec_json).expect("a JSON value always serializes");
        let row = NewProtocolRow {
            protocol_id: &body.protocol_id,
            name: &body.name,
            description: &body.description,
            protocol_type: &body.protocol_type,
            spec_json: &compact,
            registrant_key: None,
        };
        if store.insert_protocol(&row, None, None, now_ms()).await? == InsertProtocol::Inserted {
            tracing::info!(alias = builtin.alias, protocol_id = %body.protocol_id, "seeded built-in protocol");
        }
    }
    Ok(())
}

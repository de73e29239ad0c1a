//! The `mp_*` frames as types: how each is built (field order and text exactly as the
//! reference writes them) and parsed. Parsing is strict on top of the spec's schema check:
//! exact hex lengths, canonical numbers and ids, exact key sets inside the JSON texts the
//! frames carry, every big integer below its modulus. A frame that fails is a typed
//! [`Abort`](super::Abort), never a panic.

mod closing;
mod setup;
mod turns;

use serde_json::{Map, Value};

pub(crate) use closing::{
    Opening, OpeningItem, Receipt, Witness, parse_witnesses, sorted, witness_frame, witness_payload,
};
pub(crate) use setup::Setup;
pub(crate) use turns::{Play, ot_request, ot_response, parse_ot};

/// A JSON text carried in a string field, as an object with exactly `keys`.
pub(super) fn embedded(item: &Value, keys: &[&str]) -> Option<Map<String, Value>> {
    embedded_object(item).filter(|fields| has_exactly(fields, keys))
}

pub(super) fn embedded_object(item: &Value) -> Option<Map<String, Value>> {
    match serde_json::from_str::<Value>(item.as_str()?) {
        Ok(Value::Object(fields)) => Some(fields),
        _ => None,
    }
}

pub(super) fn has_exactly(fields: &Map<String, Value>, keys: &[&str]) -> bool {
    fields.len() == keys.len() && keys.iter().all(|key| fields.contains_key(*key))
}

pub(super) fn str_field<'a>(fields: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    fields.get(key).and_then(Value::as_str)
}

pub(super) fn list<'a>(frame: &'a Value, key: &str) -> Option<&'a Vec<Value>> {
    frame.get(key).and_then(Value::as_array)
}

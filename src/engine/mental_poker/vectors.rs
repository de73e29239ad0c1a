//! The reference's known-answer vectors (`tests/vectors/mental_poker/`, made once by its
//! `generate.py` from the reference client), loaded for the unit tests.

use std::sync::OnceLock;

use serde_json::Value;

fn load(name: &str) -> Value {
    let path = format!(
        "{}/tests/vectors/mental_poker/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Context bytes, FDH, raw RSA, HKDF keys, sealed entries, deck blobs, transcript roots.
pub(crate) fn primitives() -> &'static Value {
    static VALUE: OnceLock<Value> = OnceLock::new();
    VALUE.get_or_init(|| load("primitives.json"))
}

/// A recorded honest reference game (`crazy_eights` or `briscola`).
pub(crate) fn game(name: &str) -> Value {
    load(&format!("{name}_game.json"))
}

//! Small file helpers shared by the desk and the submitters: one-line JSON appends that
//! never stop a game, the wall clock in Unix seconds.

use std::path::Path;

use serde_json::Value;

pub use crate::layout::write_atomic;

/// Appends `value` as one compact JSON line ([`crate::layout::append_json_line`]). Failures
/// are reported on stderr and otherwise ignored: a lost audit line must not stop a game.
pub fn append_line(path: &Path, value: &Value) {
    if let Err(error) = crate::layout::append_json_line(path, value) {
        eprintln!("warning: cannot append to {}: {error}", path.display());
    }
}

/// Now, in Unix seconds.
pub fn epoch_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}

//! Small file helpers shared by the desk and the submitters: atomic rewrites, one-line
//! JSON appends, the wall clock in Unix seconds.

use std::io::Write;
use std::path::Path;

use serde_json::Value;

/// Rewrites `path` through a `.tmp` sibling and a rename, so readers never see half a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temporary = path.with_extension("tmp");
    std::fs::write(&temporary, bytes)?;
    std::fs::rename(temporary, path)
}

/// Appends `value` as one compact JSON line (one `write` call, so concurrent appenders never
/// interleave within a line). Failures are reported on stderr and otherwise ignored: a lost
/// audit line must not stop a game.
pub fn append_line(path: &Path, value: &Value) {
    let mut line = value.to_string();
    line.push('\n');
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(line.as_bytes()));
    if let Err(error) = written {
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

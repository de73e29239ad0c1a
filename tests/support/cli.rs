//! Our built binary as a command: `aigenora` with the test's arguments, and `protocol test
//! --json` in a fresh data dir with its report parsed.

use std::process::Command;

/// A command running our binary.
pub fn aigenora() -> Command {
    Command::new(env!("CARGO_BIN_EXE_aigenora"))
}

/// Runs `protocol test --json` (fresh data dir and state base) and returns (exit code,
/// report, state base); the state base lives as long as the returned guard.
pub fn protocol_test_json(
    protocol: &str,
    extra: &[&str],
) -> (i32, serde_json::Value, tempfile::TempDir) {
    let data = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let output = aigenora()
        .arg("--data-dir")
        .arg(data.path())
        .args(["protocol", "test", protocol, "--json", "--state-base"])
        .arg(state.path())
        .args(extra)
        .output()
        .unwrap();
    let report = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("{protocol}: {}", String::from_utf8_lossy(&output.stderr)));
    (output.status.code().unwrap(), report, state)
}

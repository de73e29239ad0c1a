//! Shared helpers for integration tests: the built binary, scratch dirs, and the reference
//! client (`aigenora==0.1.4`) in its own venv for interop tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The reference client version every interop test runs against.
pub const REFERENCE_VERSION: &str = "0.1.4";

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

/// The Python interpreter of a venv holding the reference client.
///
/// `AIGENORA_REFERENCE_PYTHON` names an existing one (CI sets it); otherwise a venv is
/// created once under `target/reference-venv`. Interop tests never skip: if the reference
/// cannot be installed, this panics with the reason.
pub fn reference_python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        if let Some(python) = std::env::var_os("AIGENORA_REFERENCE_PYTHON") {
            return PathBuf::from(python);
        }
        let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/reference-venv");
        let python = venv.join("bin/python");
        let marker = venv.join(format!("aigenora-{REFERENCE_VERSION}.installed"));
        if !marker.exists() {
            let lock = venv.with_extension("lock");
            std::fs::create_dir_all(venv.parent().unwrap()).unwrap();
            let _guard = FileLock::acquire(&lock);
            if !marker.exists() {
                run(
                    Command::new("python3").args(["-m", "venv"]).arg(&venv),
                    "create the reference venv",
                );
                run(
                    Command::new(&python).args([
                        "-m",
                        "pip",
                        "install",
                        "-q",
                        &format!("aigenora=={REFERENCE_VERSION}"),
                    ]),
                    "install the reference client (aigenora) from PyPI",
                );
                std::fs::write(&marker, "").unwrap();
            }
        }
        python
    })
}

/// The installed reference package directory (for its built-in protocols and hooks).
pub fn reference_package_dir() -> PathBuf {
    let output = Command::new(reference_python())
        .args([
            "-c",
            "import aigenora, os; print(os.path.dirname(aigenora.__file__))",
        ])
        .output()
        .expect("run the reference python");
    assert!(
        output.status.success(),
        "reference package not importable: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    PathBuf::from(String::from_utf8(output.stdout).unwrap().trim())
}

/// The `aigenora` console script of the reference client.
pub fn reference_cli() -> Command {
    let python = reference_python();
    let mut command = Command::new(python);
    command.args(["-m", "aigenora"]);
    command
}

fn run(command: &mut Command, what: &str) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot {what}: {e}"));
    assert!(
        output.status.success(),
        "cannot {what}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A crude cross-process lock (exclusive create), so parallel test binaries install once.
struct FileLock(PathBuf);

impl FileLock {
    fn acquire(path: &Path) -> FileLock {
        for _ in 0..1200 {
            if std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .is_ok()
            {
                return FileLock(path.to_path_buf());
            }
            std::thread::sleep(std::time::Duration::from_millis(250));
        }
        panic!("timed out waiting for {}", path.display());
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

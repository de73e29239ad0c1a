//! Runs the Python test suite of the embedded SDK and the built-in protocols
//! (`tests/python/`, stdlib unittest) so `cargo test` covers it. Never skips: a missing
//! `python3` or reference client fails the test with the reason.

use std::path::Path;
use std::process::Command;

use crate::support::reference::{reference_package_dir, reference_python};

#[test]
fn python_sdk_unittest_suite_passes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let reference_python = reference_python();
    let reference_package = reference_package_dir();
    let output = Command::new("python3")
        .args(["-m", "unittest", "discover", "-s", "tests/python", "-v"])
        .current_dir(root)
        .env("PYTHONPATH", root.join("src/hooks/python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("AIGENORA_REFERENCE_PYTHON", reference_python)
        .env("AIGENORA_REFERENCE_PACKAGE", &reference_package)
        .output()
        .expect("cannot run python3 (needed for the embedded SDK tests)");
    let report = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "python SDK test suite failed:\n{report}"
    );
    assert!(
        report.contains("\nOK"),
        "unexpected unittest report:\n{report}"
    );
}

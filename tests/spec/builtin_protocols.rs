//! The built-in protocols shipped in the binary: every spec lints clean (no errors, no
//! warnings) through `aigenora validate`, and each alias resolves to its own files.

use aigenora::protocols::{BUILTINS, find};
use serde_json::Value;

use crate::support::cli::aigenora;

#[test]
fn every_builtin_spec_lints_clean() {
    assert_eq!(BUILTINS.len(), 8, "expected the eight built-in protocols");
    for builtin in BUILTINS {
        let dir = tempfile::tempdir().unwrap();
        let spec_path = dir.path().join("spec.json");
        std::fs::write(&spec_path, builtin.spec_json).unwrap();
        let output = aigenora()
            .arg("validate")
            .arg(&spec_path)
            .arg("--json")
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!(
                "{}: no JSON report ({e}): {}",
                builtin.alias,
                String::from_utf8_lossy(&output.stderr)
            )
        });
        assert!(output.status.success(), "{}: {report}", builtin.alias);
        assert_eq!(report["errors"], 0, "{}: {report}", builtin.alias);
        assert_eq!(report["warnings"], 0, "{}: {report}", builtin.alias);
        let spec: Value = serde_json::from_str(builtin.spec_json).unwrap();
        assert_eq!(spec["spec_version"], "1.0", "{}", builtin.alias);
    }
}

#[test]
fn aliases_resolve_to_their_hooks() {
    for builtin in BUILTINS {
        let found = find(builtin.alias).expect("alias resolves");
        assert!(
            found
                .hooks_py
                .lines()
                .any(|line| line.starts_with("class Hooks(") && line.ends_with("Hooks):")),
            "{}: no `class Hooks(<an SDK hooks base>):`",
            builtin.alias
        );
        assert!(
            found.hooks_py.starts_with("\"\"\""),
            "{}: hooks.py must open with a docstring",
            builtin.alias
        );
    }
    assert!(find("no-such-protocol").is_none());
}

//! `aigenora protocol hash`: the hash vectors in tests/vectors/hash, every reference built-in,
//! and the spec_version warning, through the binary.

use std::path::Path;

use crate::support::cli::aigenora;
use crate::support::reference::reference_package_dir;

fn hash(path: &Path) -> std::process::Output {
    aigenora()
        .args(["protocol", "hash"])
        .arg(path)
        .output()
        .unwrap()
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn every_shared_vector_hashes_to_its_expected_id() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/hash");
    let expected = std::fs::read_to_string(dir.join("expected.tsv")).unwrap();
    let mut checked = 0;
    for line in expected.lines().filter(|l| !l.is_empty()) {
        let (name, id) = line.split_once('\t').unwrap();
        let output = hash(&dir.join(format!("{name}.json")));
        assert!(
            output.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(stdout(&output), format!("{id}\n"), "vector {name}");
        checked += 1;
    }
    assert!(checked >= 13, "only {checked} vectors found");
}

#[test]
fn canonical_text_matches_the_reference_bytes() {
    use aigenora::canonical;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/hash");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .strip_suffix(".canonical.txt")
        else {
            continue;
        };
        let spec =
            canonical::parse(&std::fs::read(dir.join(format!("{name}.json"))).unwrap()).unwrap();
        let contract = aigenora::spec::protocol_id::contract(&spec).unwrap();
        let expected = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            canonical::to_canonical_string(&contract),
            expected.trim_end_matches('\n'),
            "{name}"
        );
    }
}

#[test]
fn every_reference_builtin_hashes_to_its_directory_name() {
    let protocols = reference_package_dir().join("protocols");
    let mut checked = 0;
    for prefix in std::fs::read_dir(&protocols).unwrap() {
        let prefix = prefix.unwrap().path();
        let Some(head) = prefix
            .file_name()
            .unwrap()
            .to_str()
            .filter(|n| n.len() == 8)
            .map(str::to_string)
        else {
            continue;
        };
        for rest in std::fs::read_dir(&prefix).unwrap() {
            let dir = rest.unwrap().path();
            let id = format!("{head}{}", dir.file_name().unwrap().to_str().unwrap());
            let output = hash(&dir.join("spec.json"));
            assert_eq!(stdout(&output), format!("{id}\n"), "{}", dir.display());
            checked += 1;
        }
    }
    assert_eq!(checked, 21, "the reference ships 21 built-in protocols");
}

#[test]
fn unknown_spec_version_warns_but_still_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.json");
    std::fs::write(&spec, r#"{"spec_version":"2.0","messages":[]}"#).unwrap();
    let output = hash(&spec);
    assert!(output.status.success());
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "[warning] unsupported spec_version: '2.0' (supported: 1.0)\n"
    );
    std::fs::write(dir.path().join("plain.json"), r#"{"messages":[]}"#).unwrap();
    assert_eq!(
        stdout(&output),
        stdout(&hash(&dir.path().join("plain.json")))
    );
}

#[test]
fn json_output_carries_id_and_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.json");
    std::fs::write(&spec, r#"{"spec_version":1.0}"#).unwrap();
    let output = aigenora()
        .args(["protocol", "hash", "--json"])
        .arg(&spec)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        report["protocol_id"],
        "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
    );
    assert_eq!(
        report["warnings"][0],
        "unsupported spec_version: 1.0 (supported: 1.0)"
    );
}

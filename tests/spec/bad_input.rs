//! Bad input never panics: one clear error line naming the problem and the file, exit 1
//! (exit 2 when the command line names nothing to check).

use std::path::Path;

use crate::support::cli::aigenora;

/// Runs `args` + the file and returns (exit code, stderr).
fn run(args: &[&str], file: &Path) -> (i32, String) {
    let output = aigenora().args(args).arg(file).output().unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

fn assert_clear_error(content: &[u8], expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("spec.json");
    std::fs::write(&file, content).unwrap();
    for args in [&["protocol", "hash"][..], &["validate"][..]] {
        let (code, stderr) = run(args, &file);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert_eq!(
            stderr.lines().count(),
            1,
            "{args:?} must print one line, got: {stderr}"
        );
        assert!(stderr.starts_with("error: "), "{stderr}");
        assert!(
            stderr.contains(expected),
            "{args:?}: {stderr:?} should mention {expected:?}"
        );
        assert!(
            stderr.contains("spec.json"),
            "{stderr} should name the file"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn empty_file() {
    assert_clear_error(b"", "file is empty");
}

#[test]
fn invalid_utf8() {
    assert_clear_error(b"{\"name\": \"\xff\xfe\"}", "invalid UTF-8 at byte 10");
}

#[test]
fn invalid_json() {
    assert_clear_error(
        b"{\"name\": \"x\",}",
        "expecting a property name in double quotes at line 1 column 14",
    );
}

#[test]
fn top_level_array() {
    assert_clear_error(
        b"[{\"name\": \"x\"}]",
        "the spec must be a JSON object, found an array",
    );
}

#[test]
fn byte_order_mark() {
    assert_clear_error("\u{feff}{}".as_bytes(), "unexpected UTF-8 BOM");
}

#[test]
fn lone_surrogate() {
    assert_clear_error(br#"{"name": "\ud800"}"#, "lone surrogate");
}

#[test]
fn deeply_nested_json() {
    let deep = format!("{{\"rules\":{}{}}}", "[".repeat(50_000), "]".repeat(50_000));
    assert_clear_error(deep.as_bytes(), "nesting deeper than 988 levels");
}

#[test]
fn hundred_megabyte_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("spec.json");
    let handle = std::fs::File::create(&file).unwrap();
    handle.set_len(100 * 1024 * 1024).unwrap();
    for args in [&["protocol", "hash"][..], &["validate"][..]] {
        let (code, stderr) = run(args, &file);
        assert_eq!(code, 1);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("104857600 bytes; the limit is 8388608 bytes"),
            "{stderr}"
        );
    }
}

#[test]
fn missing_file_and_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = run(&["protocol", "hash"], &dir.path().join("nope.json"));
    assert_eq!(code, 1);
    assert!(stderr.contains("No such file"), "{stderr}");
    // validate searches a directory for spec.json files: none there is a usage error.
    let (code, stderr) = run(&["validate"], dir.path());
    assert_eq!(code, 2);
    assert!(stderr.contains("no spec.json found under"), "{stderr}");
    let (code, stderr) = run(&["validate"], &dir.path().join("nope.json"));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("nope.json: no such file or directory"),
        "{stderr}"
    );
}

/// Files that are not regular files are refused before they are read: `/dev/zero` would be
/// read until memory runs out, and a FIFO with no writer would never answer.
#[test]
fn devices_and_fifos_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("spec.json");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    for file in [Path::new("/dev/zero"), fifo.as_path()] {
        for args in [&["protocol", "hash"][..], &["validate"][..]] {
            let started = std::time::Instant::now();
            let (code, stderr) = run(args, file);
            assert_eq!(code, 1, "{args:?} {}: {stderr}", file.display());
            assert!(stderr.contains("is not a regular file"), "{stderr}");
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
            assert!(started.elapsed() < std::time::Duration::from_secs(30));
        }
    }
}

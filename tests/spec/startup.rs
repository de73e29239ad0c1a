//! Start-up of the two binaries: the spec commands run in `aigenora` itself, one small image
//! without libpython (the dynamic loader's own report, `LD_DEBUG=files`, names every object
//! it loads), and every other command gets `aigenora-full`, with the interpreter, in the
//! same process through `aigenora`'s hand-over.

use std::path::Path;
use std::process::Output;

use crate::support::cli::aigenora;

/// Runs our `aigenora` with `args`, the loader reporting each object it loads on stderr.
fn traced(args: &[&str], data_dir: &Path) -> Output {
    aigenora()
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .env("LD_DEBUG", "files")
        .output()
        .unwrap()
}

/// The loader's lines (`<pid>: file=...`), apart from the command's own output.
fn loader_lines(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|line| line.contains("file="))
        .map(str::to_string)
        .collect()
}

fn builtin(alias: &str) -> String {
    let spec =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("src/protocols/{alias}/spec.json"));
    spec.to_str().unwrap().to_string()
}

/// How many program images the loader started in this process: each maps its own libc
/// (`file=libc.so.6 [0];  generating link map`), the main program itself is not reported.
fn libc_loads(loaded: &[String]) -> usize {
    loaded
        .iter()
        .filter(|line| line.contains("file=libc.so") && line.contains("generating link map"))
        .count()
}

#[test]
fn spec_commands_run_in_one_small_image_without_libpython() {
    let data = tempfile::tempdir().unwrap();
    let (old, new) = (builtin("coin-flip"), builtin("rock-paper-scissors"));
    let commands: [&[&str]; 6] = [
        &["--version"],
        &["--help"],
        &["protocol", "hash", &old],
        &["validate", &old],
        &["protocol", "diff", &old, &new],
        &["protocol", "schema"],
    ];
    for args in commands {
        let output = traced(args, data.path());
        assert!(output.status.success(), "{args:?}: {output:?}");
        assert!(!output.stdout.is_empty(), "{args:?} printed nothing");
        let loaded = loader_lines(&output);
        assert_eq!(
            libc_loads(&loaded),
            1,
            "{args:?}: expected one image and no hand-over (is LD_DEBUG honoured?): {loaded:?}"
        );
        let python: Vec<&String> = loaded.iter().filter(|l| l.contains("libpython")).collect();
        assert!(python.is_empty(), "{args:?} loaded libpython: {python:?}");
    }
}

/// The size of a binary's machine code (its `.text` section; debug info, which a debug build
/// keeps for every crate it links, does not count).
fn code_size(binary: &str) -> u64 {
    use object::{Object, ObjectSection};
    let bytes = std::fs::read(binary).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    file.section_by_name(".text").unwrap().size()
}

#[test]
fn the_front_binary_links_a_fraction_of_the_code() {
    let front = code_size(env!("CARGO_BIN_EXE_aigenora"));
    let full = code_size(env!("CARGO_BIN_EXE_aigenora-full"));
    // Today about a fourteenth in a debug build, a fifteenth in a release one: iroh, the server,
    // the relay or the interpreter's bindings linked into the front would break this.
    assert!(
        front * 3 < full,
        "aigenora has {front} bytes of code, aigenora-full {full}: the front links more than \
         the spec commands need"
    );
}

#[test]
fn every_other_command_becomes_aigenora_full_in_the_same_process() {
    let data = tempfile::tempdir().unwrap();
    let listed = traced(&["session", "list"], data.path());
    assert!(listed.status.success(), "{listed:?}");
    let loaded = loader_lines(&listed);
    assert_eq!(libc_loads(&loaded), 2, "{loaded:?}");
    assert!(
        loaded.iter().any(|line| line.contains("libpython")),
        "{loaded:?}"
    );
}

#[test]
fn a_command_that_needs_the_interpreter_gets_it_in_the_same_process() {
    let data = tempfile::tempdir().unwrap();
    // No identity yet: doctor reports it and exits 1, which the hand-over passes through.
    let output = traced(&["doctor", "--offline"], data.path());
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("ok") && l.contains("python")),
        "{stdout}"
    );
    let loaded = loader_lines(&output);
    assert!(
        loaded.iter().any(|line| line.contains("libpython")),
        "{loaded:?}"
    );
    // One process image after another, under one pid: an exec, not a child.
    let pids: std::collections::BTreeSet<&str> = loaded
        .iter()
        .map(|line| line.split(':').next().unwrap().trim())
        .collect();
    assert_eq!(pids.len(), 1, "{loaded:?}");
}

#[test]
fn without_aigenora_full_beside_it_a_command_fails_in_one_line() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let alone = dir.path().join("aigenora");
    std::fs::hard_link(env!("CARGO_BIN_EXE_aigenora"), &alone)
        .or_else(|_| std::fs::copy(env!("CARGO_BIN_EXE_aigenora"), &alone).map(drop))
        .unwrap();
    let output = std::process::Command::new(&alone)
        .arg("--data-dir")
        .arg(dir.path())
        .args(["protocol", "test", "coin-flip"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: only the spec commands run without")
            && stderr.contains(&format!("{}", dir.path().join("aigenora-full").display()))
            && stderr.contains("cargo install --path ."),
        "{stderr}"
    );
    // The spec commands, which it runs itself, still work there.
    let hashed = std::process::Command::new(&alone)
        .args(["protocol", "hash", &builtin("coin-flip")])
        .output()
        .unwrap();
    assert!(hashed.status.success(), "{hashed:?}");
}

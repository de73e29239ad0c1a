//! Start-up of the two binaries: the commands that never run hooks start without loading
//! libpython (the dynamic loader's own report, `LD_DEBUG=files`, names every object it
//! loads), and the ones that do still get the interpreter, in the same process, through
//! `aigenora`'s hand-over to `aigenora-hooks`.

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

#[test]
fn commands_that_never_run_hooks_start_without_libpython() {
    let data = tempfile::tempdir().unwrap();
    let (old, new) = (builtin("coin-flip"), builtin("rock-paper-scissors"));
    let commands: [&[&str]; 7] = [
        &["--version"],
        &["--help"],
        &["protocol", "hash", &old],
        &["validate", &old],
        &["protocol", "diff", &old, &new],
        &["protocol", "schema"],
        &["session", "list"],
    ];
    for args in commands {
        let output = traced(args, data.path());
        assert!(output.status.success(), "{args:?}: {output:?}");
        assert!(!output.stdout.is_empty(), "{args:?} printed nothing");
        let loaded = loader_lines(&output);
        assert!(
            loaded.iter().any(|line| line.contains("libc.so")),
            "{args:?}: the loader reported nothing (is LD_DEBUG honoured?): {loaded:?}"
        );
        let python: Vec<&String> = loaded.iter().filter(|l| l.contains("libpython")).collect();
        assert!(python.is_empty(), "{args:?} loaded libpython: {python:?}");
    }
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
fn without_aigenora_hooks_beside_it_a_hook_command_fails_in_one_line() {
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
        stderr.starts_with("error: this command needs the embedded interpreter")
            && stderr.contains(&format!("{}", dir.path().join("aigenora-hooks").display()))
            && stderr.contains("cargo install --path ."),
        "{stderr}"
    );
    // The commands it runs itself still work there.
    let hashed = std::process::Command::new(&alone)
        .args(["protocol", "hash", &builtin("coin-flip")])
        .output()
        .unwrap();
    assert!(hashed.status.success(), "{hashed:?}");
}

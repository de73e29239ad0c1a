//! A person answering decision windows from outside the session: finding the open window of
//! a session dir (ours, under a data dir or a self-play state base) and answering it with
//! `aigenora session decide`, once or for every window of a game.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use aigenora::control::Target;
use aigenora::records::{DecisionFiles, Window};
use serde_json::Value;

/// The newest `<role>-*` session dir directly under `base`.
pub fn newest_dir(base: &Path, role: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(base)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with(&format!("{role}-")))
        })
        .collect();
    dirs.sort();
    dirs.pop()
}

/// The open window of the session dir `dir`, if any.
pub fn window_of(dir: &Path) -> Option<Window> {
    let engine = Target::at(dir).ok()?.engine_dir()?;
    DecisionFiles::of(&engine).window().filter(|w| w.open)
}

/// The snapshot.json of the session dir `dir` (null when there is none yet).
pub fn snapshot_of(dir: &Path) -> Value {
    Target::at(dir)
        .ok()
        .and_then(|target| target.engine_dir())
        .and_then(|engine| std::fs::read_to_string(engine.snapshot_file()).ok())
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

/// Runs `command` (a `session decide ... --json` command line) and returns (success, answer).
pub fn run_decide(mut command: Command) -> (bool, Value) {
    let output = command.output().unwrap();
    let answer = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
        panic!(
            "decide printed no JSON: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.success(), answer)
}

/// `aigenora session decide VALUE --state-dir DIR --json`, outside any data dir.
pub fn decide_in(dir: &Path, value: &str) -> (bool, Value) {
    let mut command = super::cli::aigenora();
    command.args(["session", "decide", value, "--state-dir"]);
    command.arg(dir).arg("--json");
    run_decide(command)
}

/// The number of the choice labelled "Check" or "Call …" among a Hold'em table window's
/// `options` (as its `state.json` and the MCP `session_wait` show them).
pub fn check_or_call(options: &Value) -> usize {
    options
        .as_array()
        .expect("a table window lists its options")
        .iter()
        .position(|c| {
            let label = c["label"].as_str().unwrap();
            label == "Check" || label.starts_with("Call")
        })
        .expect("a betting seat may always check or call")
}

/// What a person answers to a window: the side's role, the window and its snapshot in,
/// the move (as `session decide` takes it) out.
pub type Answer = dyn Fn(&str, &Window, &Value) -> String + Send + 'static;

/// A person at `session decide`: answers every window of the newest `roles` session dirs
/// under `base` (each once) until `stop` is set; returns the answers.
pub fn answer_windows(
    base: PathBuf,
    roles: &'static [&'static str],
    stop: Arc<AtomicBool>,
    answer: Box<Answer>,
) -> std::thread::JoinHandle<Vec<Value>> {
    std::thread::spawn(move || {
        let mut answers = Vec::new();
        let mut seen = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            for role in roles {
                let Some(dir) = newest_dir(&base, role) else {
                    continue;
                };
                let Some(window) = window_of(&dir) else {
                    continue;
                };
                let name = format!(
                    "{}{role}{}{}",
                    dir.display(),
                    window.key(),
                    window.opened_at
                );
                if seen.contains(&name) {
                    continue;
                }
                seen.push(name);
                let value = answer(role, &window, &snapshot_of(&dir));
                answers.push(decide_in(&dir, &value).1);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        answers
    })
}

//! Free-mode input for a networked session: lines typed on stdin and records appended to
//! the engine dir's `inbox.jsonl` (`{"text": ...}` per line, as a web UI writes them).

use std::io::BufRead;
use std::path::PathBuf;
use std::sync::mpsc::{Sender, channel};
use std::time::Duration;

use crate::engine::{LineInput, LocalInput};
use crate::layout::EngineDir;

/// Longest inbox line taken (a chat line, with room to spare).
const MAX_INBOX_LINE: usize = 1 << 20;
/// How often the inbox file is looked at.
const INBOX_POLL: Duration = Duration::from_millis(100);

/// Starts the stdin reader and the inbox watcher; the engine polls the returned input.
pub fn start(engine_dir: &EngineDir, read_stdin: bool) -> Box<dyn LocalInput> {
    let (lines, input) = channel();
    if read_stdin {
        let to_engine = lines.clone();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { return };
                if to_engine.send(line).is_err() {
                    return;
                }
            }
        });
    }
    let inbox = engine_dir.inbox_file();
    std::thread::spawn(move || watch_inbox(inbox, lines));
    Box::new(LineInput(input))
}

/// Forwards complete inbox records; a half-written last line is retried on the next poll,
/// and a line that is not UTF-8, not a record or too long is skipped.
fn watch_inbox(path: PathBuf, lines: Sender<String>) {
    let mut inbox = crate::layout::Tail::new(path, MAX_INBOX_LINE);
    loop {
        for line in inbox.read() {
            let crate::layout::TailLine::Text { text, .. } = line else {
                continue;
            };
            let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
                continue;
            };
            let Some(line) = value
                .get("text")
                .and_then(|t| t.as_str())
                .filter(|t| !t.is_empty())
            else {
                continue;
            };
            if lines.send(line.to_string()).is_err() {
                return;
            }
        }
        std::thread::sleep(INBOX_POLL);
    }
}

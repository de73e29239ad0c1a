//! Lines a session appends (its events, the hooks' details and events) held back while the
//! engine works a step, and written when the session's runtime next goes idle: just after
//! the step's frames have left, while the peer works on them. On a round played in a few
//! hundred microseconds the eight or so `write` calls of a step, and rendering the events,
//! were a tenth of each side's part of the round; here they come after the frames left, one
//! `write` per file.
//!
//! A [`Hold`] (one per session driver) turns the holding on; with none alive, or while a
//! hold's `passing` flag is up (the driver's main thread holds the runtime: the engine is
//! away from the exchange, in a hook or with a person), every line is written at once.
//! Lines reach each file whole and in the order they were appended, one `write` per file.
//! They wait at most until the runtime next idles or the driver's main thread takes it over
//! (after the engine was away a couple of milliseconds, see `transport::drive`); a reader in
//! this process calls [`flush`] first, and the driver flushes when it ends. A process killed
//! outright loses what was held, at most those milliseconds of lines.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value};

/// A file opened for appending lines, shared by everyone who appends to it.
#[derive(Debug)]
pub struct Appender {
    file: File,
    path: PathBuf,
}

impl Appender {
    /// Opens `path` for appending (see [`crate::layout::open_append`]), first ending a line
    /// an earlier writer left torn, so the next line is read whole.
    pub fn open(path: &Path) -> std::io::Result<Arc<Appender>> {
        let mut file = crate::layout::open_append(path)?;
        crate::layout::end_torn_line(&mut file)?;
        Ok(Arc::new(Appender {
            file,
            path: path.to_path_buf(),
        }))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// One line to append, without its newline.
pub enum Line {
    Bytes(Vec<u8>),
    /// Rendered as compact JSON when written.
    Json(Map<String, Value>),
}

impl Line {
    fn render_into(self, out: &mut Vec<u8>) {
        match self {
            Line::Bytes(bytes) => out.extend_from_slice(&bytes),
            Line::Json(map) => {
                serde_json::to_writer(&mut *out, &map).expect("a JSON map always serializes")
            }
        }
        out.push(b'\n');
    }
}

/// Lines held back and the holds that hold them; the process has one ([`append`],
/// [`flush`], [`Hold`]).
struct Queue {
    state: Mutex<Held>,
    /// Taken by whoever writes lines out, before it takes them from `state`: lines reach
    /// their files in the order they were appended, and appending a line never waits for
    /// someone else's write.
    writing: Mutex<()>,
}

struct Held {
    /// The live holds' `passing` flags.
    holds: Vec<Arc<AtomicBool>>,
    lines: Vec<(Arc<Appender>, Line)>,
}

static PROCESS: Queue = Queue::new();

/// Held lines are written at once beyond this many, whatever holds them (an engine that
/// never waits: a peer's flood it works through); a step appends a handful.
const MAX_HELD_LINES: usize = 1024;

impl Queue {
    const fn new() -> Queue {
        Queue {
            state: Mutex::new(Held {
                holds: Vec::new(),
                lines: Vec::new(),
            }),
            writing: Mutex::new(()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Held> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn hold(&self, passing: &Arc<AtomicBool>) {
        self.lock().holds.push(Arc::clone(passing));
    }

    fn release(&self, passing: &Arc<AtomicBool>) {
        self.lock().holds.retain(|hold| !Arc::ptr_eq(hold, passing));
        self.flush();
    }

    fn append(&self, to: &Arc<Appender>, line: Line) {
        let now = {
            let mut held = self.lock();
            held.lines.push((Arc::clone(to), line));
            held.lines.len() >= MAX_HELD_LINES
                || held.holds.iter().all(|passing| passing.load(SeqCst))
        };
        if now {
            self.flush();
        }
    }

    /// Writes the held lines: one `write` per file, its lines in their order.
    fn flush(&self) {
        let _writing = self
            .writing
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let lines = std::mem::take(&mut self.lock().lines);
        let mut files: Vec<(Arc<Appender>, Vec<u8>)> = Vec::new();
        for (to, line) in lines {
            let at = match files.iter().position(|(file, _)| Arc::ptr_eq(file, &to)) {
                Some(at) => at,
                None => {
                    files.push((to, Vec::new()));
                    files.len() - 1
                }
            };
            line.render_into(&mut files[at].1);
        }
        for (to, bytes) in files {
            if let Err(error) = (&to.file).write_all(&bytes) {
                eprintln!("warning: cannot append to {}: {error}", to.path().display());
            }
        }
    }
}

/// Holds the process's appended lines back until the next [`flush`] for as long as it
/// lives, except while its `passing` flag is up; dropping it flushes.
pub struct Hold {
    passing: Arc<AtomicBool>,
}

impl Hold {
    pub fn new(passing: Arc<AtomicBool>) -> Hold {
        PROCESS.hold(&passing);
        Hold { passing }
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        PROCESS.release(&self.passing);
    }
}

/// Appends `line` to `to`: held while a [`Hold`] lives, else written now. A failed write is
/// reported on stderr (naming the file) and never stops a session.
pub fn append(to: &Arc<Appender>, line: Line) {
    PROCESS.append(to, line);
}

/// Writes every held line now.
pub fn flush() {
    PROCESS.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap_or_default()
    }

    fn json_line(value: Value) -> Line {
        Line::Json(value.as_object().unwrap().clone())
    }

    #[test]
    fn held_lines_wait_for_a_flush_and_keep_their_order() {
        let queue = Queue::new();
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("sub/b.jsonl"));
        let (to_a, to_b) = (Appender::open(&a).unwrap(), Appender::open(&b).unwrap());
        let passing = Arc::new(AtomicBool::new(false));
        queue.hold(&passing);
        queue.append(&to_a, Line::Bytes(b"one".to_vec()));
        queue.append(&to_b, json_line(json!({"n": 1})));
        queue.append(&to_a, json_line(json!({"n": 2})));
        assert_eq!((text(&a), text(&b)), (String::new(), String::new()));
        queue.flush();
        assert_eq!(text(&a), "one\n{\"n\":2}\n");
        assert_eq!(text(&b), "{\"n\":1}\n");
        queue.append(&to_a, Line::Bytes(b"three".to_vec()));
        passing.store(true, SeqCst);
        queue.append(&to_a, Line::Bytes(b"four".to_vec()));
        assert_eq!(
            text(&a),
            "one\n{\"n\":2}\nthree\nfour\n",
            "passing: written at once"
        );
        passing.store(false, SeqCst);
        queue.append(&to_a, Line::Bytes(b"five".to_vec()));
        queue.release(&passing);
        assert!(text(&a).ends_with("four\nfive\n"), "letting go flushes");
        queue.append(&to_a, Line::Bytes(b"six".to_vec()));
        assert!(
            text(&a).ends_with("five\nsix\n"),
            "no hold: written at once"
        );
    }

    #[test]
    fn a_hold_keeps_no_more_than_its_bound() {
        let queue = Queue::new();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flood.jsonl");
        let to = Appender::open(&path).unwrap();
        let passing = Arc::new(AtomicBool::new(false));
        queue.hold(&passing);
        for _ in 0..MAX_HELD_LINES - 1 {
            queue.append(&to, Line::Bytes(b"{}".to_vec()));
        }
        assert_eq!(text(&path), "");
        queue.append(&to, Line::Bytes(b"{}".to_vec()));
        assert_eq!(text(&path).lines().count(), MAX_HELD_LINES);
        queue.release(&passing);
    }

    #[test]
    fn opening_ends_a_torn_line_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("torn.jsonl");
        std::fs::write(&path, "{\"whole\":1}\n{\"torn\":").unwrap();
        Queue::new().append(&Appender::open(&path).unwrap(), Line::Bytes(b"{}".to_vec()));
        assert_eq!(text(&path), "{\"whole\":1}\n{\"torn\":\n{}\n");
    }
}

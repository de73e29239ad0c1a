//! Reading JSON-lines files that other processes append to (decisions, events, a chat
//! inbox), so that no line can poison the ones after it: only complete lines are read, each
//! read is bounded in bytes, and a line that is too long or not UTF-8 is skipped — reported
//! to the reader, who records why — while every later line is still read. What a line holds
//! (JSON of which shape) is the reader's business.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Bytes one [`Tail::read`] takes from the file at most.
pub const READ_BUDGET: usize = 1 << 20;

/// One line of a tailed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TailLine {
    /// A complete line (without its newline), and the byte offset just past it.
    Text { text: String, end: u64 },
    /// A line that was skipped, why, and the offset just past it.
    Skipped { reason: Skip, end: u64 },
}

/// Why a line was skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Longer than the reader's limit (its length in bytes).
    TooLong(u64),
    /// Not valid UTF-8.
    NotUtf8,
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Skip::TooLong(bytes) => write!(f, "a line of {bytes} bytes is over the limit"),
            Skip::NotUtf8 => f.write_str("a line is not valid UTF-8"),
        }
    }
}

/// Follows a file from an offset, one bounded read at a time.
#[derive(Debug, Clone)]
pub struct Tail {
    path: PathBuf,
    offset: u64,
    max_line: usize,
    /// Bytes of an over-long line consumed so far (its end not seen yet).
    long_line: Option<u64>,
}

impl Tail {
    /// Reads `path` from its start; lines over `max_line` bytes are skipped.
    pub fn new(path: impl Into<PathBuf>, max_line: usize) -> Tail {
        Tail::from_offset(path, max_line, 0)
    }

    /// Reads `path` from byte `offset` (which should be a line start, e.g. an earlier end).
    pub fn from_offset(path: impl Into<PathBuf>, max_line: usize, offset: u64) -> Tail {
        Tail {
            path: path.into(),
            offset,
            max_line,
            long_line: None,
        }
    }

    /// The offset of the next unread byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The complete lines appended since the last read (at most [`READ_BUDGET`] bytes of
    /// them; call again for more). A missing file has no lines yet.
    pub fn read(&mut self) -> Vec<TailLine> {
        let Ok(mut file) = std::fs::File::open(&self.path) else {
            return Vec::new();
        };
        let length = file.metadata().map(|m| m.len()).unwrap_or(0);
        if length <= self.offset || file.seek(SeekFrom::Start(self.offset)).is_err() {
            return Vec::new();
        }
        let mut chunk = Vec::new();
        let wanted = (length - self.offset).min(READ_BUDGET as u64);
        if file.take(wanted).read_to_end(&mut chunk).is_err() {
            return Vec::new();
        }
        let mut lines = Vec::new();
        let mut start = 0;
        while let Some(newline) = chunk[start..].iter().position(|&b| b == b'\n') {
            let line = &chunk[start..start + newline];
            let end = self.offset + (start + newline + 1) as u64;
            lines.push(match self.long_line.take() {
                Some(earlier) => TailLine::Skipped {
                    reason: Skip::TooLong(earlier + line.len() as u64),
                    end,
                },
                None => self.line(line, end),
            });
            start += newline + 1;
        }
        let rest = (chunk.len() - start) as u64;
        self.offset += start as u64;
        // A partial line waits for its newline, unless it is already too long to keep.
        let pending = self.long_line.unwrap_or(0) + rest;
        if self.long_line.is_some() || rest > self.max_line as u64 {
            self.long_line = Some(pending);
            self.offset += rest;
        }
        lines
    }

    fn line(&self, bytes: &[u8], end: u64) -> TailLine {
        if bytes.len() > self.max_line {
            return TailLine::Skipped {
                reason: Skip::TooLong(bytes.len() as u64),
                end,
            };
        }
        match std::str::from_utf8(bytes) {
            Ok(text) => TailLine::Text {
                text: text.trim_end_matches('\r').to_string(),
                end,
            },
            Err(_) => TailLine::Skipped {
                reason: Skip::NotUtf8,
                end,
            },
        }
    }

    /// Every line from the current offset to the end of the file as it is now.
    pub fn read_to_end(&mut self) -> Vec<TailLine> {
        let mut all = Vec::new();
        loop {
            let before = self.offset;
            let lines = self.read();
            if lines.is_empty() && self.offset == before {
                return all;
            }
            all.extend(lines);
        }
    }
}

/// The text of every readable line of `path` (lines over `max_line` bytes or not UTF-8 are
/// left out); nothing when the file does not exist.
pub fn read_lines(path: &Path, max_line: usize) -> Vec<String> {
    Tail::new(path, max_line)
        .read_to_end()
        .into_iter()
        .filter_map(|line| match line {
            TailLine::Text { text, .. } => Some(text),
            TailLine::Skipped { .. } => None,
        })
        .collect()
}

/// The offset of the first line that starts within the last `bytes` of `path` (0 for a
/// shorter file): where a reader that wants only the recent lines begins.
pub fn recent_start(path: &Path, bytes: u64) -> u64 {
    let Ok(mut file) = std::fs::File::open(path) else {
        return 0;
    };
    let length = file.metadata().map(|m| m.len()).unwrap_or(0);
    if length <= bytes {
        return 0;
    }
    let from = length - bytes;
    // The byte before `from` decides whether `from` is a line start.
    let mut window = Vec::new();
    if file.seek(SeekFrom::Start(from - 1)).is_err()
        || file
            .take(bytes.min(READ_BUDGET as u64) + 1)
            .read_to_end(&mut window)
            .is_err()
    {
        return length;
    }
    match window.iter().position(|&b| b == b'\n') {
        Some(newline) => from + newline as u64,
        None => length,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[TailLine]) -> Vec<&str> {
        lines
            .iter()
            .filter_map(|line| match line {
                TailLine::Text { text, .. } => Some(text.as_str()),
                TailLine::Skipped { .. } => None,
            })
            .collect()
    }

    #[test]
    fn a_bad_byte_or_an_oversized_line_never_blocks_the_next_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("decisions.jsonl");
        let mut bytes = b"{\"a\":1}\n".to_vec();
        bytes.extend_from_slice(b"{\"bad\":\"\xff\xfe\"}\n");
        bytes.extend_from_slice(&[b'x'; 100]);
        bytes.extend_from_slice(b"\n{\"a\":2}\n{\"half\":");
        std::fs::write(&path, &bytes).unwrap();
        let mut tail = Tail::new(&path, 64);
        let lines = tail.read();
        assert_eq!(texts(&lines), ["{\"a\":1}", "{\"a\":2}"]);
        assert!(matches!(
            lines[1],
            TailLine::Skipped {
                reason: Skip::NotUtf8,
                ..
            }
        ));
        assert!(matches!(
            lines[2],
            TailLine::Skipped {
                reason: Skip::TooLong(100),
                ..
            }
        ));
        // The torn last line waits for its end.
        assert!(tail.read().is_empty());
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut file, b"1}\n").unwrap();
        assert_eq!(texts(&tail.read()), ["{\"half\":1}"]);
    }

    #[test]
    fn a_line_longer_than_the_limit_is_skipped_without_being_held_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut file = std::fs::File::create(&path).unwrap();
        std::io::Write::write_all(&mut file, &vec![b'y'; 3 * READ_BUDGET]).unwrap();
        let mut tail = Tail::new(&path, 1024);
        for _ in 0..3 {
            assert!(tail.read().is_empty());
        }
        assert_eq!(
            tail.offset(),
            3 * READ_BUDGET as u64,
            "consumed, not buffered"
        );
        std::io::Write::write_all(&mut file, b"zz\n{\"ok\":true}\n").unwrap();
        let lines = tail.read();
        assert_eq!(
            lines[0],
            TailLine::Skipped {
                reason: Skip::TooLong(3 * READ_BUDGET as u64 + 2),
                end: 3 * READ_BUDGET as u64 + 3
            }
        );
        assert_eq!(texts(&lines), ["{\"ok\":true}"]);
    }

    #[test]
    fn recent_lines_start_at_a_line_boundary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(&path, "aaaa\nbbbb\ncccc\n").unwrap();
        assert_eq!(recent_start(&path, 100), 0);
        assert_eq!(
            recent_start(&path, 10),
            5,
            "bbbb starts exactly 10 bytes from the end"
        );
        assert_eq!(recent_start(&path, 7), 10);
        let mut tail = Tail::from_offset(&path, 64, recent_start(&path, 7));
        assert_eq!(texts(&tail.read()), ["cccc"]);
    }
}

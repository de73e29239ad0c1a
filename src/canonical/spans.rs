//! Where things are in a JSON document: the line and column of each key and array item,
//! found by the linter's JSON paths (`messages[2].fields.action`), so findings can point
//! into the file.

use std::collections::HashMap;

use serde::Serialize;

/// A place in a document: 1-based line, and 1-based column counted in characters (Unicode
/// code points, as Python counts them in its JSON errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl Position {
    pub const START: Position = Position { line: 1, column: 1 };

    /// The position of byte `offset` of `text` (an offset past the end counts as the end).
    pub fn of_offset(text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
        Position {
            line: before.bytes().filter(|b| *b == b'\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// The recorded start of every path of one document (see `parse_with_spans`).
#[derive(Debug, Clone)]
pub struct Spans {
    text: String,
    line_starts: Vec<usize>,
    offsets: HashMap<String, usize>,
}

impl Spans {
    pub(crate) fn new(text: &str, offsets: HashMap<String, usize>) -> Spans {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(at, _)| at + 1))
            .collect();
        Spans {
            text: text.to_string(),
            line_starts,
            offsets,
        }
    }

    /// Where `path` starts: the key of an object member, the first character of an array
    /// item. A path that does not exist (a missing key) gets its nearest existing ancestor.
    pub fn locate(&self, path: &str) -> Position {
        let mut current = path;
        loop {
            if let Some(&offset) = self.offsets.get(current) {
                return self.position(offset);
            }
            if current.is_empty() {
                return Position::START;
            }
            current = parent(current);
        }
    }

    fn position(&self, offset: usize) -> Position {
        let line = self.line_starts.partition_point(|start| *start <= offset);
        let start = self.line_starts[line - 1];
        Position {
            line,
            column: self.text[start..offset].chars().count() + 1,
        }
    }
}

/// `a.b[2]` → `a.b` → `a` → `` (a key holding `.` or `[` is cut there too, which only
/// moves a finding to an ancestor).
fn parent(path: &str) -> &str {
    match path.rfind(['.', '[']) {
        Some(cut) => &path[..cut],
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use crate::canonical::parse_with_spans;

    use super::*;

    #[test]
    fn keys_items_and_missing_paths_are_located() {
        let text = "{\n  \"messages\": [\n    {\"name\": \"é\", \"fields\": {}},\n    7\n  ],\n\"a.b\": 1}";
        let (_, spans) = parse_with_spans(text.as_bytes()).unwrap();
        let at = |path| spans.locate(path).to_string();
        assert_eq!(at(""), "1:1");
        assert_eq!(at("messages"), "2:3");
        assert_eq!(at("messages[0]"), "3:5");
        assert_eq!(at("messages[0].fields"), "3:19", "columns count characters");
        assert_eq!(
            at("messages[0].fields.action"),
            "3:19",
            "missing: the parent"
        );
        assert_eq!(at("messages[1]"), "4:5");
        assert_eq!(at("a.b"), "6:1", "a dotted key is found as written");
        assert_eq!(at("nothing[3].x"), "1:1");
    }

    #[test]
    fn a_repeated_key_points_at_the_value_that_wins() {
        let (_, spans) = parse_with_spans(b"{\"a\": 1,\n \"a\": 2}").unwrap();
        assert_eq!(spans.locate("a"), Position { line: 2, column: 2 });
    }

    #[test]
    fn offsets_become_positions() {
        assert_eq!(Position::of_offset("ab\ncé\nx", 6).to_string(), "2:3");
        assert_eq!(Position::of_offset("", 9), Position::START);
    }
}

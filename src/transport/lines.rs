//! JSON-lines framing over an iroh stream: one compact JSON value per `\n`-terminated line.
//!
//! Writing: `serde_json::to_string` (compact, raw UTF-8, sender's key order) plus `\n`.
//! Reading: split on `\n`, skip blank lines, never buffer more than the reader's line limit
//! of one line: [`HANDSHAKE_FRAME_BYTES`] until the peer is authenticated, then
//! [`MAX_FRAME_BYTES`]. Lines are cut one at a time, so a raised limit applies from the very
//! next line. A line that is too long or not JSON becomes [`Line::Malformed`] and reading
//! goes on with the next line: the stream stays in sync, so the engine decides whether that
//! ends the session (the reference always treats it as fatal).
//!
//! Parsing costs memory: a JSON value takes many times its text (`[0,0,…]` about 16×). Lines
//! up to [`EAGER_PARSE_BYTES`] are parsed by the reader (the `_sys` layer must see them);
//! longer ones travel as text and are parsed once, when the engine takes them, and a line
//! holding more than [`MAX_FRAME_VALUES`] JSON values is refused unparsed.

use std::collections::VecDeque;

use iroh::endpoint::{ConnectionError, ReadError, RecvStream};
use serde_json::Value;

use super::{ChannelError, MAX_FRAME_BYTES};

/// How much one read pulls from the stream.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Largest line before the peer is authenticated: handshake frames are a few hundred bytes.
pub const HANDSHAKE_FRAME_BYTES: usize = 16 * 1024;

/// Lines up to this size are parsed as soon as they are read; longer ones when taken.
pub(crate) const EAGER_PARSE_BYTES: usize = 4 * 1024;

/// Most JSON values (scalars, arrays, objects) one frame may hold: bounds the memory a
/// parsed frame takes (a few tens of MB at worst) whatever its shape.
pub const MAX_FRAME_VALUES: usize = 200_000;

/// Serializes one frame as a wire line, refusing frames the peer would reject as oversized.
pub(crate) fn encode_line(frame: &Value) -> Result<Vec<u8>, ChannelError> {
    let mut line = serde_json::to_vec(frame)
        .map_err(|e| ChannelError::Malformed(format!("cannot serialize frame: {e}")))?;
    if line.len() > MAX_FRAME_BYTES {
        return Err(ChannelError::Malformed(format!(
            "outgoing frame of {} bytes exceeds the {MAX_FRAME_BYTES}-byte limit",
            line.len()
        )));
    }
    line.push(b'\n');
    Ok(line)
}

/// One unit read from the peer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Line {
    /// A complete, parsed JSON value.
    Frame(Value),
    /// A complete line longer than [`EAGER_PARSE_BYTES`], not parsed yet ([`parse_text`]).
    Text(Vec<u8>),
    /// A line that is not a frame; the reason says why.
    Malformed(String),
    /// Nothing more will arrive; the reason says why.
    End(String),
}

/// A complete line's bytes, or the news that a line outgrew the limit.
#[derive(Debug, PartialEq)]
enum Piece {
    Complete(Vec<u8>),
    Oversized,
}

/// Cuts a byte stream into lines, holding at most `limit` bytes of an unfinished line.
#[derive(Debug)]
struct LineSplitter {
    partial: Vec<u8>,
    /// Set while skipping the rest of a line that exceeded the limit.
    discarding: bool,
    limit: usize,
}

impl LineSplitter {
    fn new(limit: usize) -> Self {
        LineSplitter {
            partial: Vec::new(),
            discarding: false,
            limit,
        }
    }

    fn push(&mut self, mut chunk: &[u8], out: &mut VecDeque<Piece>) {
        while !chunk.is_empty() {
            let newline = chunk.iter().position(|&b| b == b'\n');
            let (segment, rest) = match newline {
                Some(at) => (&chunk[..at], &chunk[at + 1..]),
                None => (chunk, &[][..]),
            };
            chunk = rest;
            if !self.discarding {
                if self.partial.len() + segment.len() > self.limit {
                    self.partial = Vec::new();
                    self.discarding = true;
                    out.push_back(Piece::Oversized);
                } else {
                    self.partial.extend_from_slice(segment);
                }
            }
            if newline.is_some() && !std::mem::take(&mut self.discarding) {
                out.push_back(Piece::Complete(std::mem::take(&mut self.partial)));
            }
        }
    }

    /// Whether the stream stopped in the middle of a line not yet reported (a line being
    /// discarded was reported as oversized already).
    fn has_partial_line(&self) -> bool {
        !self.discarding && self.partial.iter().any(|b| !b.is_ascii_whitespace())
    }
}

/// Turns a complete line into a [`Line`], or `None` for a blank line: parsed when short,
/// kept as text when long.
fn classify_line(bytes: Vec<u8>) -> Option<Line> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(if bytes.len() <= EAGER_PARSE_BYTES {
        parse_text(&bytes)
    } else {
        Line::Text(bytes)
    })
}

/// Parses one line's text into a frame, refusing lines with too many values before
/// building them.
pub(crate) fn parse_text(bytes: &[u8]) -> Line {
    if count_values(bytes) > MAX_FRAME_VALUES {
        return Line::Malformed(format!(
            "frame holds more than {MAX_FRAME_VALUES} JSON values"
        ));
    }
    match serde_json::from_slice(bytes) {
        Ok(value) => Line::Frame(value),
        Err(e) => Line::Malformed(format!("invalid JSON line: {e}")),
    }
}

/// An upper bound on the number of JSON values in `bytes`: one plus the separators and
/// openings outside strings (exact for valid JSON up to empty containers).
fn count_values(bytes: &[u8]) -> usize {
    let (mut count, mut in_string, mut escaped) = (1usize, false, false);
    for &byte in bytes {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b',' | b'[' | b'{' => count += 1,
                _ => {}
            }
        }
    }
    count
}

/// Reads [`Line`]s from an iroh receive stream.
pub(crate) struct LineReader {
    stream: RecvStream,
    splitter: LineSplitter,
    ready: VecDeque<Piece>,
    ended: Option<String>,
    buffer: Box<[u8]>,
    /// Bytes read but not cut into lines yet: `buffer[start..end]`.
    start: usize,
    end: usize,
}

impl LineReader {
    /// A reader with the pre-authentication line limit.
    pub(crate) fn new(stream: RecvStream) -> Self {
        LineReader {
            stream,
            splitter: LineSplitter::new(HANDSHAKE_FRAME_BYTES),
            ready: VecDeque::new(),
            ended: None,
            buffer: vec![0u8; READ_CHUNK_BYTES].into_boxed_slice(),
            start: 0,
            end: 0,
        }
    }

    /// Raises (or lowers) the line limit from the next line on: [`MAX_FRAME_BYTES`] once the
    /// peer is authenticated.
    pub(crate) fn set_limit(&mut self, limit: usize) {
        self.splitter.limit = limit;
    }

    /// The next frame, long line, malformed line, or the end of the stream (repeated once
    /// reached).
    pub(crate) async fn next(&mut self) -> Line {
        loop {
            while let Some(piece) = self.ready.pop_front() {
                match piece {
                    Piece::Oversized => {
                        return Line::Malformed(format!(
                            "frame exceeds the {}-byte limit",
                            self.splitter.limit
                        ));
                    }
                    Piece::Complete(bytes) => {
                        if let Some(line) = classify_line(bytes) {
                            return line;
                        }
                    }
                }
            }
            if self.start < self.end {
                // One line at a time, so a new limit applies from the next line.
                let pending = &self.buffer[self.start..self.end];
                let take = pending
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(pending.len(), |at| at + 1);
                self.splitter.push(&pending[..take], &mut self.ready);
                self.start += take;
                continue;
            }
            if let Some(reason) = &self.ended {
                return Line::End(reason.clone());
            }
            match self.stream.read(&mut self.buffer).await {
                Ok(Some(count)) => (self.start, self.end) = (0, count),
                Ok(None) => {
                    self.ended = Some("peer finished its stream".into());
                    if self.splitter.has_partial_line() {
                        return Line::Malformed("stream ended inside an unterminated line".into());
                    }
                }
                Err(error) => self.ended = Some(describe_read_error(&error)),
            }
        }
    }
}

/// A short, user-facing reason for a failed read.
fn describe_read_error(error: &ReadError) -> String {
    match error {
        ReadError::ConnectionLost(ConnectionError::ApplicationClosed(_)) => {
            "peer closed the connection".into()
        }
        ReadError::ConnectionLost(ConnectionError::LocallyClosed) => {
            "connection closed locally".into()
        }
        ReadError::ConnectionLost(ConnectionError::TimedOut) => {
            "connection timed out (peer unreachable)".into()
        }
        ReadError::Reset(code) => format!("peer reset its stream (code {code})"),
        other => format!("iroh stream read failed: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn split(limit: usize, chunks: &[&[u8]]) -> Vec<Piece> {
        let mut splitter = LineSplitter::new(limit);
        let mut out = VecDeque::new();
        for chunk in chunks {
            splitter.push(chunk, &mut out);
        }
        out.into()
    }

    fn complete(text: &str) -> Piece {
        Piece::Complete(text.as_bytes().to_vec())
    }

    #[test]
    fn lines_split_across_and_within_chunks() {
        let pieces = split(100, &[b"{\"a\":1}\n{\"b\"", b":2}\n\n{}", b"\n"]);
        assert_eq!(
            pieces,
            vec![
                complete("{\"a\":1}"),
                complete("{\"b\":2}"),
                complete(""),
                complete("{}")
            ]
        );
    }

    #[test]
    fn an_oversized_line_is_reported_once_and_skipped_without_buffering() {
        let mut splitter = LineSplitter::new(8);
        let mut out = VecDeque::new();
        splitter.push(b"{\"x\":\"0123", &mut out);
        splitter.push(b"4567890123456789", &mut out);
        assert!(
            splitter.partial.is_empty(),
            "the oversized line must not be kept"
        );
        splitter.push(b"\"}\n{}\n", &mut out);
        assert_eq!(Vec::from(out), vec![Piece::Oversized, complete("{}")]);
    }

    #[test]
    fn a_line_of_exactly_the_limit_is_accepted() {
        assert_eq!(split(4, &[b"1234\n"]), vec![complete("1234")]);
        assert_eq!(split(4, &[b"12345\n"]), vec![Piece::Oversized]);
    }

    #[test]
    fn blank_lines_are_skipped_and_bad_json_is_malformed() {
        let line = |text: &[u8]| classify_line(text.to_vec());
        assert_eq!(line(b""), None);
        assert_eq!(line(b" \r"), None);
        assert_eq!(line(b"{\"a\":1}\r"), Some(Line::Frame(json!({"a": 1}))));
        assert!(matches!(line(b"{nope"), Some(Line::Malformed(_))));
        assert!(matches!(line(b"\xff\xfe"), Some(Line::Malformed(_))));
    }

    #[test]
    fn long_lines_wait_unparsed_and_value_floods_are_refused() {
        let long = format!("{{\"blob\":\"{}\"}}", "a".repeat(EAGER_PARSE_BYTES));
        let Some(Line::Text(text)) = classify_line(long.clone().into_bytes()) else {
            panic!("a long line is kept as text");
        };
        assert_eq!(
            parse_text(&text),
            Line::Frame(serde_json::from_str(&long).unwrap())
        );
        let flood = format!("[{}0]", "0,".repeat(MAX_FRAME_VALUES));
        assert!(
            matches!(parse_text(flood.as_bytes()), Line::Malformed(m) if m.contains("JSON values"))
        );
        let fits = format!("[{}0]", "0,".repeat(MAX_FRAME_VALUES - 2));
        assert!(matches!(parse_text(fits.as_bytes()), Line::Frame(_)));
        // Separators inside strings (escaped quotes too) are not values.
        assert_eq!(count_values(br#"{"a":"x,[{\",y","b":[1,2]}"#), 5);
    }

    #[test]
    fn encoding_is_compact_raw_utf8_in_insertion_order() {
        let frame = json!({"z": "héllo ♥", "a": [1, 2.5, null]});
        assert_eq!(
            encode_line(&frame).unwrap(),
            "{\"z\":\"héllo ♥\",\"a\":[1,2.5,null]}\n".as_bytes()
        );
    }

    #[test]
    fn an_outgoing_frame_over_the_limit_is_refused() {
        let frame = json!({"blob": "x".repeat(MAX_FRAME_BYTES)});
        assert!(matches!(
            encode_line(&frame),
            Err(ChannelError::Malformed(_))
        ));
    }
}

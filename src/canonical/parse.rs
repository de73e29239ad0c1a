//! A JSON parser with Python `json.load` acceptance rules: `NaN`/`Infinity` tokens,
//! arbitrary-size integers (up to Python's 4300-digit limit), last-wins duplicate keys,
//! strict strings (no raw control characters), and no BOM. On request it also records
//! where every key and array item starts ([`Spans`]), for findings that name a line.

use std::collections::{BTreeMap, HashMap};

use super::{JsonError, PyJson, Spans};

/// Largest document accepted (a spec far beyond any real protocol; same as the P2P frame limit).
pub const MAX_INPUT_BYTES: usize = 8 * 1024 * 1024;
/// Deepest nesting accepted: where the reference's `protocol hash` gives up (its recursion
/// limit stops Python's parser at 988 levels), so both accept exactly the same documents.
pub const MAX_DEPTH: usize = 988;
/// Python 3.11 refuses to convert integer literals longer than this (`sys.int_info`).
const MAX_INT_DIGITS: usize = 4300;

/// Parses a whole document the way the reference's `json.load` would.
pub fn parse(bytes: &[u8]) -> Result<PyJson, JsonError> {
    parse_document(bytes, false).map(|(value, _)| value)
}

/// [`parse`], also recording where each key and array item starts.
pub fn parse_with_spans(bytes: &[u8]) -> Result<(PyJson, Spans), JsonError> {
    let (value, parser_spans) = parse_document(bytes, true)?;
    let text = std::str::from_utf8(bytes).expect("parsed documents are UTF-8");
    Ok((value, Spans::new(text, parser_spans.unwrap_or_default())))
}

type Offsets = HashMap<String, usize>;

fn parse_document(bytes: &[u8], record: bool) -> Result<(PyJson, Option<Offsets>), JsonError> {
    if bytes.is_empty() {
        return Err(JsonError::Empty);
    }
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(JsonError::TooLarge {
            size: bytes.len(),
            limit: MAX_INPUT_BYTES,
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|error| JsonError::InvalidUtf8 {
        offset: error.valid_up_to(),
    })?;
    if text.starts_with('\u{feff}') {
        return Err(JsonError::Bom);
    }
    let mut parser = Parser {
        text,
        pos: 0,
        path: String::new(),
        offsets: record.then(HashMap::new),
    };
    parser.skip_whitespace();
    parser.record();
    let value = parser.value(0)?;
    parser.skip_whitespace();
    if parser.pos != text.len() {
        return Err(parser.syntax("extra data after the JSON value"));
    }
    Ok((value, parser.offsets))
}

/// Python's `str(int(literal))`: drops the sign of zero.
pub(crate) fn normalize_int(literal: &str) -> String {
    match literal.strip_prefix('-') {
        Some(digits) if digits.bytes().all(|b| b == b'0') => "0".to_string(),
        _ => literal.strip_prefix('+').unwrap_or(literal).to_string(),
    }
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
    /// The linter-style path of the value being read (`a.b[2]`), kept only when recording.
    path: String,
    /// Where each path starts (the key of a member, the first byte of an item), when asked.
    offsets: Option<Offsets>,
}

impl Parser<'_> {
    /// Notes that the current path starts here. A repeated key moves it (last wins, as the
    /// value does).
    fn record(&mut self) {
        if let Some(offsets) = &mut self.offsets {
            offsets.insert(self.path.clone(), self.pos);
        }
    }

    /// Extends the current path by a segment (when recording); returns the length to restore.
    fn descend(&mut self, segment: impl FnOnce(&mut String)) -> usize {
        let restore = self.path.len();
        if self.offsets.is_some() {
            segment(&mut self.path);
        }
        restore
    }

    fn value(&mut self, depth: usize) -> Result<PyJson, JsonError> {
        let rest = &self.text[self.pos..];
        match rest.as_bytes().first() {
            None => Err(self.syntax("expecting a value, found the end of the input")),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(PyJson::Str(self.string()?)),
            Some(b'-' | b'0'..=b'9') if !rest.starts_with("-Infinity") => self.number(),
            _ => self.literal(),
        }
    }

    fn literal(&mut self) -> Result<PyJson, JsonError> {
        type Make = fn() -> PyJson;
        const LITERALS: [(&str, Make); 6] = [
            ("null", || PyJson::Null),
            ("true", || PyJson::Bool(true)),
            ("false", || PyJson::Bool(false)),
            ("NaN", || PyJson::Float(f64::NAN)),
            ("Infinity", || PyJson::Float(f64::INFINITY)),
            ("-Infinity", || PyJson::Float(f64::NEG_INFINITY)),
        ];
        let rest = &self.text[self.pos..];
        for (word, make) in LITERALS {
            if rest.starts_with(word) {
                self.pos += word.len();
                return Ok(make());
            }
        }
        Err(self.syntax("expecting a value"))
    }

    fn enter(&self, depth: usize) -> Result<(), JsonError> {
        if depth > MAX_DEPTH {
            let (line, column) = self.line_column();
            return Err(JsonError::TooDeep {
                limit: MAX_DEPTH,
                line,
                column,
            });
        }
        Ok(())
    }

    fn object(&mut self, depth: usize) -> Result<PyJson, JsonError> {
        self.enter(depth)?;
        self.pos += 1;
        let mut map = BTreeMap::new();
        self.skip_whitespace();
        if self.eat(b'}') {
            return Ok(PyJson::Object(map));
        }
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'"') {
                return Err(self.syntax("expecting a property name in double quotes"));
            }
            let key_at = self.pos;
            let key = self.string()?;
            let restore = self.descend(|path| {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&key);
            });
            if let Some(offsets) = &mut self.offsets {
                offsets.insert(self.path.clone(), key_at);
            }
            self.skip_whitespace();
            if !self.eat(b':') {
                return Err(self.syntax("expecting ':' after a property name"));
            }
            self.skip_whitespace();
            let item = self.value(depth)?;
            self.path.truncate(restore);
            map.insert(key, item);
            self.skip_whitespace();
            if self.eat(b'}') {
                return Ok(PyJson::Object(map));
            }
            if !self.eat(b',') {
                return Err(self.syntax("expecting ',' or '}' in an object"));
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<PyJson, JsonError> {
        self.enter(depth)?;
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.eat(b']') {
            return Ok(PyJson::Array(items));
        }
        loop {
            self.skip_whitespace();
            let index = items.len();
            let restore = self.descend(|path| {
                use std::fmt::Write;
                write!(path, "[{index}]").expect("writing to a String");
            });
            self.record();
            items.push(self.value(depth)?);
            self.path.truncate(restore);
            self.skip_whitespace();
            if self.eat(b']') {
                return Ok(PyJson::Array(items));
            }
            if !self.eat(b',') {
                return Err(self.syntax("expecting ',' or ']' in an array"));
            }
        }
    }

    fn number(&mut self) -> Result<PyJson, JsonError> {
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let mut end = start;
        if bytes[end] == b'-' {
            end += 1;
        }
        let int_start = end;
        match bytes.get(end) {
            Some(b'0') => end += 1,
            Some(b'1'..=b'9') => end += digit_run(&bytes[end..]),
            _ => {
                self.pos = end;
                return Err(self.syntax("expecting a value"));
            }
        }
        let int_digits = end - int_start;
        let mut is_float = false;
        if bytes.get(end) == Some(&b'.') && bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
            is_float = true;
            end += 1 + digit_run(&bytes[end + 1..]);
        }
        if matches!(bytes.get(end), Some(b'e' | b'E')) {
            let mut exp_end = end + 1;
            if matches!(bytes.get(exp_end), Some(b'+' | b'-')) {
                exp_end += 1;
            }
            let exp_digits = digit_run(&bytes[exp_end..]);
            if exp_digits > 0 {
                is_float = true;
                end = exp_end + exp_digits;
            }
        }
        let literal = &self.text[start..end];
        self.pos = end;
        if is_float {
            let value: f64 = literal.parse().expect("grammar-checked float literal");
            return Ok(PyJson::Float(value));
        }
        if int_digits > MAX_INT_DIGITS {
            self.pos = start;
            return Err(self.syntax(&format!(
                "integer literal has {int_digits} digits; Python accepts at most {MAX_INT_DIGITS}"
            )));
        }
        Ok(PyJson::Int(normalize_int(literal)))
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.pos += 1; // opening quote
        let mut out = String::new();
        loop {
            let rest = &self.text[self.pos..];
            let Some(stop) = rest.find(|c: char| c == '"' || c == '\\' || c < ' ') else {
                self.pos = self.text.len();
                return Err(self.syntax("unterminated string"));
            };
            out.push_str(&rest[..stop]);
            self.pos += stop;
            match self.text.as_bytes()[self.pos] {
                b'"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => self.escape(&mut out)?,
                _ => return Err(self.syntax("invalid control character in a string")),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), JsonError> {
        let code = self.text.as_bytes().get(self.pos + 1).copied();
        let simple = match code {
            Some(b'"') => Some('"'),
            Some(b'\\') => Some('\\'),
            Some(b'/') => Some('/'),
            Some(b'b') => Some('\u{8}'),
            Some(b'f') => Some('\u{c}'),
            Some(b'n') => Some('\n'),
            Some(b'r') => Some('\r'),
            Some(b't') => Some('\t'),
            Some(b'u') => None,
            _ => return Err(self.syntax("invalid escape in a string")),
        };
        if let Some(ch) = simple {
            out.push(ch);
            self.pos += 2;
            return Ok(());
        }
        let unit = self.hex4(self.pos + 2)?;
        self.pos += 6;
        let ch = match unit {
            0xD800..=0xDBFF => {
                let low = if self.text[self.pos..].starts_with("\\u") {
                    Some(self.hex4(self.pos + 2)?)
                } else {
                    None
                };
                match low {
                    Some(low @ 0xDC00..=0xDFFF) => {
                        self.pos += 6;
                        let combined = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        char::from_u32(combined).expect("valid surrogate pair")
                    }
                    _ => return Err(self.lone_surrogate(unit)),
                }
            }
            0xDC00..=0xDFFF => return Err(self.lone_surrogate(unit)),
            _ => char::from_u32(unit).expect("non-surrogate BMP code point"),
        };
        out.push(ch);
        Ok(())
    }

    fn lone_surrogate(&mut self, unit: u32) -> JsonError {
        self.pos -= 6;
        self.syntax(&format!(
            "lone surrogate \\u{unit:04x} in a string (not encodable as UTF-8)"
        ))
    }

    fn hex4(&mut self, at: usize) -> Result<u32, JsonError> {
        let digits = self
            .text
            .get(at..at + 4)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()));
        match digits {
            Some(digits) => Ok(u32::from_str_radix(digits, 16).expect("checked hex digits")),
            None => Err(self.syntax("invalid \\uXXXX escape")),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        if self.peek() == Some(byte) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn line_column(&self) -> (usize, usize) {
        let before = &self.text[..self.pos];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, column)
    }

    fn syntax(&self, message: &str) -> JsonError {
        let (line, column) = self.line_column();
        JsonError::Syntax {
            message: message.to_string(),
            line,
            column,
        }
    }
}

fn digit_run(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|b| b.is_ascii_digit()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(text: &str) -> String {
        crate::canonical::to_canonical_string(&parse(text.as_bytes()).unwrap())
    }

    #[test]
    fn python_number_model() {
        assert_eq!(
            canonical("[-0, 0, 1.0, 1e2, 1E+2, -0.0, 18446744073709551616]"),
            "[0,0,1.0,100.0,100.0,-0.0,18446744073709551616]"
        );
        assert_eq!(
            canonical("[NaN, Infinity, -Infinity, 1e400, 1e-400]"),
            "[NaN,Infinity,-Infinity,Infinity,0.0]"
        );
    }

    #[test]
    fn duplicate_keys_last_wins_and_escapes_decode() {
        assert_eq!(
            canonical(r#"{"a":1,"a":2,"caf\u00e9":"\ud83d\ude00"}"#),
            "{\"a\":2,\"café\":\"😀\"}"
        );
    }

    #[test]
    fn rejects_what_python_rejects() {
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            "\"\u{1}\"",
            "\"\\ud800\"",
            "\"\\x\"",
            "nul",
            "{} x",
        ] {
            assert!(parse(bad.as_bytes()).is_err(), "{bad:?} should fail");
        }
        assert_eq!(parse("\u{feff}{}".as_bytes()), Err(JsonError::Bom));
        assert!(matches!(
            parse(b"{\"a\":\"\xff\"}"),
            Err(JsonError::InvalidUtf8 { offset: 6 })
        ));
        let huge = "9".repeat(4301);
        assert!(parse(huge.as_bytes()).is_err());
        assert!(parse("9".repeat(4300).as_bytes()).is_ok());
    }

    #[test]
    fn depth_is_bounded_without_overflowing_the_stack() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(matches!(
            parse(deep.as_bytes()),
            Err(JsonError::TooDeep { .. })
        ));
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(ok.as_bytes()).is_ok());
    }

    #[test]
    fn errors_name_line_and_column() {
        let error = parse(b"{\n  \"a\": tru\n}").unwrap_err();
        assert_eq!(error.to_string(), "expecting a value at line 2 column 8");
    }
}

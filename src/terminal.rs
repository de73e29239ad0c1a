//! Text that other parties wrote (the community server, invitation creators, protocol
//! authors), made safe to show in a terminal: control characters (C0, DEL, C1: ESC
//! sequences could move the cursor, recolor, retitle or hide text) and bidirectional
//! overrides (which reorder what is shown) are escaped. One helper for every place such
//! text is printed; JSON output stays exact JSON.

use std::borrow::Cow;
use std::fmt::Write;

use serde::Serialize;

/// True for the characters a terminal must not receive raw from someone else's text.
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with every unsafe character written as an escape: `\x1b` below U+0080 (so a tab
/// or a newline shows as `\x09`, `\x0a`), `\u{9b}` above. Borrowed when nothing changes.
/// For one-line fields (names, messages, reasons).
pub fn escape_control(text: &str) -> Cow<'_, str> {
    escape_where(text, is_unsafe)
}

/// Like [`escape_control`], but tabs and newlines pass: for multi-line text meant to be read
/// as lines (what hooks display, a peer's chat).
pub fn escape_display(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| is_unsafe(c) && c != '\n' && c != '\t')
}

fn escape_where(text: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escape) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !escape(c) => escaped.push(c),
            c if (c as u32) < 0x80 => {
                let _ = write!(escaped, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(escaped, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(escaped)
}

/// `value` as compact JSON with every unsafe character written as a `\uXXXX` escape. The
/// JSON means exactly the same (DEL, C1 and bidi controls can only occur inside strings,
/// where `\uXXXX` is the same character).
pub fn json_line(value: &impl Serialize) -> String {
    escape_json(serde_json::to_string(value).expect("output always serializes"))
}

/// Like [`json_line`], indented.
pub fn json_pretty(value: &impl Serialize) -> String {
    escape_json(serde_json::to_string_pretty(value).expect("output always serializes"))
}

/// JSON text that serde_json wrote (a `.jsonl` file's lines, say) with DEL, C1 and bidi
/// controls escaped; serde_json already escapes C0 characters inside strings, and outside
/// strings the only ones are newlines.
pub fn escape_json(json: String) -> String {
    let unsafe_in_json = |c: char| is_unsafe(c) && u32::from(c) >= 0x7f;
    if !json.chars().any(unsafe_in_json) {
        return json;
    }
    let mut escaped = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if unsafe_in_json(c) {
            let _ = write!(escaped, "\\u{:04x}", c as u32);
        } else {
            escaped.push(c);
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn escape_sequences_and_overrides_are_shown_not_obeyed() {
        assert!(matches!(escape_control("Rock ✓ é"), Cow::Borrowed(_)));
        assert_eq!(
            escape_control("\u{1b}[2J\u{1b}]0;pwned\u{7}x"),
            "\\x1b[2J\\x1b]0;pwned\\x07x"
        );
        assert_eq!(escape_control("a\tb\nc\u{7f}"), "a\\x09b\\x0ac\\x7f");
        assert_eq!(escape_control("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(escape_control("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(escape_display("rock\tpaper\n"), "rock\tpaper\n");
        assert_eq!(
            escape_display("\u{1b}[2Jboom\r\u{7}\u{9b}"),
            "\\x1b[2Jboom\\x0d\\x07\\u{9b}"
        );
    }

    #[test]
    fn json_output_stays_the_same_json() {
        let value = json!({"message": "\u{1b}[31mred\u{9b}\u{202e}\u{7f}", "n": 1});
        let line = json_line(&value);
        assert!(!line.chars().any(is_unsafe), "{line}");
        assert!(
            line.contains("\\u001b[31mred\\u009b\\u202e\\u007f"),
            "{line}"
        );
        assert_eq!(serde_json::from_str::<Value>(&line).unwrap(), value);
        let pretty = json_pretty(&value);
        assert!(
            !pretty.chars().any(|c| is_unsafe(c) && c != '\n'),
            "{pretty}"
        );
        assert_eq!(serde_json::from_str::<Value>(&pretty).unwrap(), value);
    }
}

//! The community REST contract (docs/rest-api.md): request and response bodies, their
//! enums and field rules. The client sends and the server accepts exactly these types, so
//! the wire format has one home. Bodies serialize in the reference's key order.

pub mod agent;
pub mod group;
pub mod invitation;
pub mod meta;
pub mod protocol;
pub mod session;

use serde::{Deserialize, Serialize};

/// Every community endpoint lives under this prefix.
pub const API_PREFIX: &str = "/api/v1";
/// Lists return this many items unless asked otherwise.
pub const DEFAULT_LIST_LIMIT: u32 = 20;
/// Lists never return more than this many items.
pub const MAX_LIST_LIMIT: u32 = 100;

/// The body of every error response: a stable snake_case code and a human sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: String,
    pub message: String,
}

/// True for the URL-safe ids the server issues (`[A-Za-z0-9_-]`, 1..=128 characters), so a
/// caller never has to percent-encode an id it puts in a path.
pub fn is_url_safe_id(text: &str) -> bool {
    (1..=128).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Percent-encodes a query value the way Python's `urlencode` does (space becomes `+`), so
/// the signed target and the sent target are the same string.
pub fn encode_query_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'~' => {
                out.push(byte as char)
            }
            b' ' => out.push('+'),
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

/// Builds `?k=v&...` from the given pairs in order (empty string when there are none).
pub fn query_string(pairs: &[(&str, String)]) -> String {
    if pairs.is_empty() {
        return String::new();
    }
    let joined: Vec<String> = pairs
        .iter()
        .map(|(key, value)| format!("{key}={}", encode_query_value(value)))
        .collect();
    format!("?{}", joined.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_encoded_like_urlencode() {
        assert_eq!(encode_query_value("game,rps"), "game%2Crps");
        assert_eq!(encode_query_value("a:b c"), "a%3Ab+c");
        assert_eq!(query_string(&[]), "");
        assert_eq!(
            query_string(&[("type", "supply".into()), ("limit", "5".into())]),
            "?type=supply&limit=5"
        );
    }

    #[test]
    fn url_safe_ids() {
        assert!(is_url_safe_id("d79a1dfdb7a1f656"));
        assert!(!is_url_safe_id("a/b"));
        assert!(!is_url_safe_id(""));
    }
}

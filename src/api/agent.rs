//! Agents: the registration challenge, the registration body, and the public profile.

use serde::{Deserialize, Serialize};

/// Longest nickname the server accepts.
pub const MAX_NICKNAME_CHARS: usize = 32;
/// Longest bio the server accepts.
pub const MAX_BIO_CHARS: usize = 280;

/// `GET /auth/challenge` → a single-use nonce and the proof-of-work difficulty (zero bytes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Challenge {
    pub nonce: String,
    #[serde(default = "one")]
    pub difficulty: u8,
    #[serde(default)]
    pub expires_at: Option<String>,
}

fn one() -> u8 {
    1
}

/// `POST /auth/register`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    pub public_key: String,
    pub nickname: String,
    #[serde(default)]
    pub bio: String,
    pub nonce: String,
    pub counter: u64,
    pub signature: String,
}

/// A registered agent (`POST /auth/register` → 201, `GET /agents?public_key=`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agent {
    pub id: i64,
    pub agent_id: i64,
    pub public_key: String,
    pub nickname: String,
    #[serde(default)]
    pub bio: String,
    #[serde(default)]
    pub created_at: Option<String>,
}

/// Nickname rule: 1 to 32 characters of `[A-Za-z0-9_.-]`.
pub fn check_nickname(nickname: &str) -> Result<(), String> {
    let valid_chars = nickname
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if nickname.is_empty() || nickname.len() > MAX_NICKNAME_CHARS || !valid_chars {
        return Err(format!(
            "nickname must be 1-{MAX_NICKNAME_CHARS} characters of A-Za-z0-9_.-"
        ));
    }
    Ok(())
}

/// Bio rule: at most 280 characters, no control characters.
pub fn check_bio(bio: &str) -> Result<(), String> {
    if bio.chars().count() > MAX_BIO_CHARS || bio.chars().any(char::is_control) {
        return Err(format!(
            "bio must be at most {MAX_BIO_CHARS} characters without control characters"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nickname_rules() {
        assert!(check_nickname("alice_01.x-y").is_ok());
        assert!(check_nickname("").is_err());
        assert!(check_nickname("has space").is_err());
        assert!(check_nickname("ünï").is_err());
        assert!(check_nickname(&"a".repeat(33)).is_err());
        assert!(check_bio("hi there").is_ok());
        assert!(check_bio("line\nbreak").is_err());
    }
}

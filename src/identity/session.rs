//! The session proof: both parties sign `post_id:host:guest:protocol_id:nonce`, and the
//! session id is the SHA-256 of that same string (docs/rest-api.md#session-records).

use rand::RngCore;

/// The colon-joined string both parties sign; a missing protocol id is the empty string.
pub fn session_canonical(
    post_id: &str,
    host_public_key: &str,
    guest_public_key: &str,
    protocol_id: &str,
    session_nonce: &str,
) -> String {
    format!("{post_id}:{host_public_key}:{guest_public_key}:{protocol_id}:{session_nonce}")
}

/// The session id: lowercase hex SHA-256 of the session canonical.
pub fn session_id(canonical: &str) -> String {
    crate::canonical::sha256_hex(canonical)
}

/// A guest's session nonce: 8 random bytes as 16 lowercase hex characters.
pub fn new_session_nonce() -> String {
    let mut bytes = [0u8; 8];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    hex::encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::super::Identity;
    use super::super::vectors::*;
    use super::*;

    #[test]
    fn reproduces_the_captured_rps_session() {
        let canonical = session_canonical(
            "d79a1dfdb7a1f656",
            ALICE_PUBLIC,
            BOB_PUBLIC,
            "43a806481a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f",
            "278d88a663765108",
        );
        assert_eq!(
            session_id(&canonical),
            "a5ba10081631d1c25b693044d8df0ecc1e90ee2a1c5d4465ae9beda1bad2f09c"
        );
        let host = Identity::from_seed_hex(ALICE_SEED).unwrap();
        let guest = Identity::from_seed_hex(BOB_SEED).unwrap();
        assert_eq!(
            host.sign_hex(canonical.as_bytes()),
            "6e94cf09eeb5c141019a2f17cbdb6e0ccf1da2863ff3bdca50954581333885a6\
             dd0f1473962462acf5df9752855013b7987ac449e3714b46ba7587f0df7f180b"
        );
        assert_eq!(
            guest.sign_hex(canonical.as_bytes()),
            "fbc40d77efb49634850da68002d0570029f2ddba051e7cd5f4cc0f84df51a559\
             cac46b09ec7cf8c4a179d0d1a3ed838b2085a2bd3e515b0d52befdf41a95ea08"
        );
    }

    #[test]
    fn nonces_are_16_hex() {
        let nonce = new_session_nonce();
        assert_eq!(nonce.len(), 16);
        assert!(nonce.bytes().all(|b| b.is_ascii_hexdigit()));
    }
}

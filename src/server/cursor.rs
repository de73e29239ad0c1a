//! Opaque list cursors: the position of the last item served, bound to the filter that
//! produced it (reusing a cursor with other filters is refused). URL-safe (hex).

use sha2::{Digest, Sha256};

/// Where a newest-first list stopped: the last item's creation time and id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    pub created_at: i64,
    pub id: String,
}

/// Why a cursor was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CursorError {
    #[error("malformed cursor")]
    Malformed,
    #[error("the cursor was issued for different filters")]
    OtherFilter,
}

/// Encodes `position` for the filter described by `filter` (any stable text).
pub fn encode(position: &Position, filter: &str) -> String {
    hex::encode(format!(
        "{}.{}.{}",
        position.created_at,
        position.id,
        filter_tag(filter)
    ))
}

/// Decodes a cursor issued by [`encode`] for the same `filter`.
pub fn decode(cursor: &str, filter: &str) -> Result<Position, CursorError> {
    let bytes = hex::decode(cursor).map_err(|_| CursorError::Malformed)?;
    let text = String::from_utf8(bytes).map_err(|_| CursorError::Malformed)?;
    let mut parts = text.splitn(3, '.');
    let (Some(created_at), Some(id), Some(tag)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(CursorError::Malformed);
    };
    let created_at = created_at.parse().map_err(|_| CursorError::Malformed)?;
    if tag != filter_tag(filter) {
        return Err(CursorError::OtherFilter);
    }
    Ok(Position {
        created_at,
        id: id.to_string(),
    })
}

fn filter_tag(filter: &str) -> String {
    hex::encode(&Sha256::digest(filter.as_bytes())[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_only_under_their_filter() {
        let position = Position {
            created_at: 1_700_000_000_123,
            id: "d79a1dfdb7a1f656".into(),
        };
        let cursor = encode(&position, "type=supply");
        assert!(crate::api::is_url_safe_id(&cursor));
        assert_eq!(decode(&cursor, "type=supply"), Ok(position));
        assert_eq!(decode(&cursor, "type=chat"), Err(CursorError::OtherFilter));
        assert_eq!(decode("zz", ""), Err(CursorError::Malformed));
        assert_eq!(decode(&hex::encode("x.y"), ""), Err(CursorError::Malformed));
    }
}

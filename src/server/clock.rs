//! Server time: Unix milliseconds inside, ISO-8601 UTC on the wire.

use chrono::{DateTime, SecondsFormat, Utc};

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// `2026-01-02T03:04:05.678Z`.
pub fn iso8601(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_with_millis() {
        assert_eq!(iso8601(1_795_988_872_123), "2026-11-29T21:47:52.123Z");
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
    }
}

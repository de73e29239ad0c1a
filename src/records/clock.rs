//! Timestamps as the reference writes them (Python's `isoformat()` of a UTC datetime), for
//! event lines and session records alike.

/// UTC now as Python's `datetime.now(timezone.utc).isoformat()` prints it.
pub fn iso_now() -> String {
    iso_format(chrono::Utc::now())
}

/// Python's `isoformat()` of a UTC datetime: microseconds only when not zero.
fn iso_format(time: chrono::DateTime<chrono::Utc>) -> String {
    use chrono::{Datelike, Timelike};
    // A leap second shows as :59.999999 rather than a 7-digit fraction.
    let micros = time.timestamp_subsec_micros().min(999_999);
    let fraction = if micros == 0 {
        String::new()
    } else {
        format!(".{micros:06}")
    };
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{fraction}+00:00",
        time.year(),
        time.month(),
        time.day(),
        time.hour(),
        time.minute(),
        time.second(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_written_as_python_isoformat_writes_them() {
        use chrono::TimeZone;
        let at = |micros: i64| chrono::Utc.timestamp_micros(micros).unwrap();
        assert_eq!(
            iso_format(at(1_796_010_432_123_456)),
            "2026-11-30T03:47:12.123456+00:00"
        );
        assert_eq!(
            iso_format(at(1_796_010_432_000_000)),
            "2026-11-30T03:47:12+00:00"
        );
        assert_eq!(
            iso_format(at(1_000_001)),
            "1970-01-01T00:00:01.000001+00:00"
        );
    }
}

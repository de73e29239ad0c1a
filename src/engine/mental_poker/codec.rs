//! Strict text forms of the game's binary values: lowercase hex of an exact length for
//! blobs, keys and sealed entries, and the 512-digit zero-padded hex of a 2048-bit number.
//! The reference parses with Python's `int(x, 16)`, which also takes `0x`, `_`, spaces and
//! upper case; we send only the canonical form and accept nothing else, so one value has one
//! encoding and lengths cannot carry hidden information.

use crypto_bigint::U2048;

fn is_lower_hex(text: &str) -> bool {
    text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Exactly `N` bytes from exactly `2N` lowercase hex digits.
pub(crate) fn fixed<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N || !is_lower_hex(text) {
        return None;
    }
    let mut out = [0u8; N];
    hex::decode_to_slice(text, &mut out).ok()?;
    Some(out)
}

/// A 2048-bit number from exactly 512 lowercase hex digits.
pub(crate) fn big(text: &str) -> Option<U2048> {
    fixed::<256>(text).map(|bytes| U2048::from_be_slice(&bytes))
}

/// The wire form of a 2048-bit number: 512 lowercase hex digits, zero-padded.
pub(crate) fn big_hex(value: &U2048) -> String {
    hex::encode(value.to_be_bytes())
}

/// Decimal digits, the form the transcript writes big integers in.
pub(crate) fn big_decimal(value: &U2048) -> String {
    value.to_string_radix_vartime(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_canonical_form_parses() {
        assert_eq!(fixed::<2>("00ff"), Some([0, 255]));
        for bad in ["00FF", "0ff", "00ff0", "0x00", " 00f", "00g0", "0_ff"] {
            assert_eq!(fixed::<2>(bad), None, "{bad:?}");
        }
        let seven = format!("{}7", "0".repeat(511));
        assert_eq!(big(&seven), Some(U2048::from_u64(7)));
        assert_eq!(big_hex(&U2048::from_u64(7)), seven);
        assert_eq!(big(&seven[1..]), None);
        assert_eq!(big_decimal(&U2048::from_u64(1234567)), "1234567");
        assert_eq!(big_decimal(&U2048::ZERO), "0");
    }
}

//! Python's `float.__repr__` (and json's NaN/Infinity tokens) for f64.

/// Formats a float exactly as Python's `json.dumps` does: shortest round-trip digits, fixed
/// notation while the decimal exponent is in [-4, 16), scientific (`1e+16`, `1e-05`) outside,
/// integral values keep `.0`, and non-finite values become `NaN` / `Infinity` / `-Infinity`.
pub fn python_float_repr(value: f64) -> String {
    if value.is_nan() {
        return "NaN".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0.0"
        } else {
            "0.0"
        }
        .to_string();
    }
    // Rust's `{:e}` prints the shortest digits that round-trip: "d.ddde[-]x".
    let scientific = format!("{:e}", value.abs());
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("{:e} always prints an exponent");
    let exponent: i32 = exponent.parse().expect("{:e} prints a decimal exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if value < 0.0 { "-" } else { "" };

    // Python's decpt: value = 0.DIGITS × 10^decpt.
    let decpt = exponent + 1;
    let body = if (-3..=16).contains(&decpt) {
        fixed_notation(&digits, decpt)
    } else {
        scientific_notation(&digits, exponent)
    };
    format!("{sign}{body}")
}

fn fixed_notation(digits: &str, decpt: i32) -> String {
    let count = digits.len() as i32;
    if decpt <= 0 {
        format!("0.{}{}", "0".repeat((-decpt) as usize), digits)
    } else if decpt >= count {
        format!("{}{}.0", digits, "0".repeat((decpt - count) as usize))
    } else {
        let (whole, fraction) = digits.split_at(decpt as usize);
        format!("{whole}.{fraction}")
    }
}

fn scientific_notation(digits: &str, exponent: i32) -> String {
    let (first, rest) = digits.split_at(1);
    let mantissa = if rest.is_empty() {
        first.to_string()
    } else {
        format!("{first}.{rest}")
    };
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

#[cfg(test)]
mod tests {
    use super::python_float_repr;

    #[test]
    fn matches_python_repr() {
        let cases = [
            (1e16, "1e+16"),
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (1e-7, "1e-07"),
            (1.0, "1.0"),
            (100.0, "100.0"),
            (1.5e300, "1.5e+300"),
            (0.30000000000000004, "0.30000000000000004"),
            (123456789.123456789, "123456789.12345679"),
            (5e-324, "5e-324"),
            (1e15, "1000000000000000.0"),
            (1e-4, "0.0001"),
            (1e-5, "1e-05"),
            (9007199254740993.0, "9007199254740992.0"),
            (-1.25e-10, "-1.25e-10"),
            (1e22, "1e+22"),
            (1.23, "1.23"),
            (123456.5, "123456.5"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::NAN, "NaN"),
        ];
        for (value, expected) in cases {
            assert_eq!(python_float_repr(value), expected, "repr of {value:e}");
        }
    }
}

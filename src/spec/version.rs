//! The `spec_version` gate: absent (or empty) means "1.0", the only version we run.

use serde_json::Value;

use super::pyrepr::py_repr;

pub const SUPPORTED_SPEC_VERSION: &str = "1.0";

/// A spec written for a contract version this build does not implement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported spec_version: {shown} (supported: {SUPPORTED_SPEC_VERSION})")]
pub struct VersionError {
    pub shown: String,
}

/// Accepts a missing or falsy `spec_version` (as the reference does) and exactly "1.0".
pub fn check_spec_version(spec: &Value) -> Result<(), VersionError> {
    match spec.get("spec_version") {
        None => Ok(()),
        Some(Value::String(version)) if version == SUPPORTED_SPEC_VERSION => Ok(()),
        Some(value) if !crate::canonical::PyJson::from(value).is_truthy() => Ok(()),
        Some(value) => Err(VersionError {
            shown: py_repr(value),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_one_version_runs() {
        assert!(check_spec_version(&json!({})).is_ok());
        assert!(check_spec_version(&json!({"spec_version": "1.0"})).is_ok());
        assert!(check_spec_version(&json!({"spec_version": null})).is_ok());
        assert_eq!(
            check_spec_version(&json!({"spec_version": "2.0"}))
                .unwrap_err()
                .to_string(),
            "unsupported spec_version: '2.0' (supported: 1.0)"
        );
        assert_eq!(
            check_spec_version(&json!({"spec_version": 1.0}))
                .unwrap_err()
                .to_string(),
            "unsupported spec_version: 1.0 (supported: 1.0)"
        );
    }
}

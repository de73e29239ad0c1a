//! What changed between two versions of a spec, split the way review needs it: changes to
//! the contract (what `protocol_id` hashes: a new protocol) and changes to display fields
//! only (names, descriptions, defaults, ...: the same protocol). Values are compared as
//! Python reads them, so `1` and `1.0` differ (they hash differently) and `1.0` and `1.00`
//! do not.

use serde::Serialize;

use super::protocol_id::{HashError, contract};
use crate::canonical::{self, PyJson};

/// One difference at a JSON path (`messages[2].fields.x.max`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub path: String,
    pub change: ChangeKind,
    /// The old value as canonical JSON text (absent for an added path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<String>,
    /// The new value as canonical JSON text (absent for a removed path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Added,
    Removed,
    Changed,
}

/// The two specs' ids and their differences.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpecDiff {
    pub old_protocol_id: String,
    pub new_protocol_id: String,
    /// The same protocol_id: nothing hashed changed.
    pub same_protocol: bool,
    /// Changes inside the hashed contract subset.
    pub contract: Vec<Change>,
    /// Every other change (it leaves the protocol_id as it was).
    pub display: Vec<Change>,
}

/// Compares two parsed specs (each must be an object).
pub fn diff(old: &PyJson, new: &PyJson) -> Result<SpecDiff, HashError> {
    let (old_contract, new_contract) = (contract(old)?, contract(new)?);
    let id = |contract: &PyJson| canonical::sha256_hex(canonical::to_canonical_string(contract));
    let (old_protocol_id, new_protocol_id) = (id(&old_contract), id(&new_contract));
    let mut contract_changes = Vec::new();
    compare(
        "",
        Some(&old_contract),
        Some(&new_contract),
        &mut contract_changes,
    );
    let mut everything = Vec::new();
    compare("", Some(old), Some(new), &mut everything);
    let display = everything
        .into_iter()
        .filter(|change| {
            !contract_changes
                .iter()
                .any(|hashed| overlaps(&hashed.path, &change.path))
        })
        .collect();
    Ok(SpecDiff {
        same_protocol: old_protocol_id == new_protocol_id,
        old_protocol_id,
        new_protocol_id,
        contract: contract_changes,
        display,
    })
}

/// Whether one path is the other or lies inside it.
fn overlaps(a: &str, b: &str) -> bool {
    let inside = |inner: &str, outer: &str| {
        outer.is_empty()
            || inner == outer
            || inner
                .strip_prefix(outer)
                .is_some_and(|rest| rest.starts_with(['.', '[']))
    };
    inside(a, b) || inside(b, a)
}

fn compare(path: &str, old: Option<&PyJson>, new: Option<&PyJson>, out: &mut Vec<Change>) {
    match (old, new) {
        (Some(PyJson::Object(a)), Some(PyJson::Object(b))) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                compare(&member(path, key), a.get(key), b.get(key), out);
            }
        }
        (Some(PyJson::Array(a)), Some(PyJson::Array(b))) => {
            for index in 0..a.len().max(b.len()) {
                compare(&format!("{path}[{index}]"), a.get(index), b.get(index), out);
            }
        }
        (Some(a), Some(b)) if same(a, b) => {}
        (old, new) => out.push(Change {
            path: path.to_string(),
            change: match (old, new) {
                (None, _) => ChangeKind::Added,
                (_, None) => ChangeKind::Removed,
                _ => ChangeKind::Changed,
            },
            old: old.map(canonical::to_canonical_string),
            new: new.map(canonical::to_canonical_string),
        }),
    }
}

/// Equal as the hash sees them (NaN equals NaN here: the same text hashes the same).
fn same(a: &PyJson, b: &PyJson) -> bool {
    canonical::to_canonical_string(a) == canonical::to_canonical_string(b)
}

fn member(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff_of(old: &str, new: &str) -> SpecDiff {
        let parse = |text: &str| canonical::parse(text.as_bytes()).unwrap();
        diff(&parse(old), &parse(new)).unwrap()
    }

    fn paths(changes: &[Change]) -> Vec<String> {
        changes
            .iter()
            .map(|c| format!("{:?} {}", c.change, c.path))
            .collect()
    }

    #[test]
    fn display_edits_keep_the_protocol() {
        let found = diff_of(
            r#"{"name":"a","messages":[{"name":"m","description":"x"}],"parameters":{"n":{"type":"integer","default":1}},"flow":{"mode":""}}"#,
            r#"{"name":"b","messages":[{"name":"m","description":"x"}],"parameters":{"n":{"type":"integer","default":2}},"flow":{"mode":"session_loop"},"ui":{}}"#,
        );
        assert!(found.same_protocol);
        assert_eq!(found.old_protocol_id, found.new_protocol_id);
        assert!(found.contract.is_empty());
        assert_eq!(
            paths(&found.display),
            [
                "Changed flow.mode",
                "Changed name",
                "Changed parameters.n.default",
                "Added ui"
            ]
        );
    }

    #[test]
    fn contract_edits_make_a_new_protocol_and_are_not_repeated_as_display() {
        let found = diff_of(
            r#"{"name":"a","messages":[{"f":1}],"flow":{"mode":""}}"#,
            r#"{"name":"a","messages":[{"f":1.0},{"g":2}],"flow":{"mode":"free"}}"#,
        );
        assert!(!found.same_protocol);
        assert_eq!(
            paths(&found.contract),
            ["Added flow", "Changed messages[0].f", "Added messages[1]"]
        );
        assert_eq!(found.contract[1].old.as_deref(), Some("1"));
        assert_eq!(found.contract[1].new.as_deref(), Some("1.0"));
        assert!(found.display.is_empty(), "{:?}", found.display);
    }

    #[test]
    fn equal_floats_written_differently_are_no_change() {
        let found = diff_of(r#"{"rules":{"x":1.0}}"#, r#"{"rules":{"x":1.00}}"#);
        assert!(found.same_protocol && found.contract.is_empty() && found.display.is_empty());
    }
}

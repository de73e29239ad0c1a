//! The static linter: every problem in a spec at once, each with its JSON path and the
//! [`Check`] it comes from.
//!
//! Errors are things that break at run time (a message the engine could never validate, a
//! flow the engine cannot drive, a parameter schema that rejects everything); warnings are
//! things that work but are probably a mistake.

mod authoritative;
mod checks;
mod flow;
mod messages;
mod parameters;
mod report;
mod sections;

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use crate::canonical::{Position, Spans};
pub use checks::{Check, SchemaCoverage};
pub use report::{FileReport, lint_bytes};

/// How serious a finding is. Errors make `validate` exit 1 and block every run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One finding: which check, where (a JSON path like `messages[2].fields.action`, and once
/// [`locate`]d the line and column of that key or value in the file) and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub check: Check,
    pub path: String,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub position: Option<Position>,
    pub message: String,
}

impl Diagnostic {
    /// A finding of `check` (its severity is the check's), not located yet.
    pub fn new(check: Check, path: impl Into<String>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: check.severity(),
            check,
            path: path.into(),
            position: None,
            message: message.into(),
        }
    }
}

/// Gives every finding the position of its path in the file the spans were read from: the
/// key (or array item) the path names, else its nearest ancestor that exists.
pub fn locate(diagnostics: &mut [Diagnostic], spans: &Spans) {
    for diagnostic in diagnostics {
        diagnostic.position = Some(spans.locate(&diagnostic.path));
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Lints a whole spec (which should be a JSON object) and returns every finding in
/// document order, errors and warnings interleaved.
pub fn lint(spec: &Value) -> Vec<Diagnostic> {
    let mut findings = Findings::default();
    let Value::Object(map) = spec else {
        findings.add(
            Check::NotAnObject,
            "",
            format!(
                "the spec must be a JSON object, found {}",
                super::json_kind(spec)
            ),
        );
        return findings.0;
    };
    sections::lint_top_level(map, &mut findings);
    let declared = messages::lint_messages(map.get("messages"), &mut findings);
    flow::lint_flow(spec, &declared, &mut findings);
    parameters::lint_parameters(map.get("parameters"), &mut findings);
    sections::lint_sections(map, &mut findings);
    findings.0
}

/// The collector every lint pass writes into.
#[derive(Default)]
pub(crate) struct Findings(Vec<Diagnostic>);

impl Findings {
    pub(crate) fn add(
        &mut self,
        check: Check,
        path: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.0.push(Diagnostic::new(check, path, message));
    }
}

/// Joins a JSON path and an object key (`a.b`), or starts a path.
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// What a value is, for "expected X, found Y" texts.
pub(crate) fn kind(value: &Value) -> &'static str {
    super::json_kind(value)
}

/// Warns about keys a section does not define (typos are the usual cause).
pub(crate) fn unknown_keys(
    map: &serde_json::Map<String, Value>,
    known: &[&str],
    path: &str,
    findings: &mut Findings,
) {
    for key in map.keys().filter(|key| !known.contains(&key.as_str())) {
        findings.add(
            Check::UnknownKey,
            join(path, key),
            format!("unknown key (known: {})", known.join(", ")),
        );
    }
}

#[cfg(test)]
mod tests;

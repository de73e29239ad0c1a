//! Linting one spec file the way `validate` reports it: a file that cannot be read or parsed
//! is a finding too (`unreadable`, `invalid-json`, `spec-not-object`), and every finding
//! carries the line and column of what it is about. The positions cost a second, recording
//! parse, made only when there is something to point at.

use serde_json::{Map, Value};

use super::{Check, Diagnostic, Severity, lint, locate};
use crate::canonical::{self, JsonError, Position};
use crate::spec::{Spec, SpecError, validate_options};

/// Everything `validate` says about one file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileReport {
    /// In document order; every one located.
    pub diagnostics: Vec<Diagnostic>,
    /// `None` when the file could not be read as a spec at all.
    pub protocol_id: Option<String>,
}

impl FileReport {
    pub fn errors(&self) -> usize {
        self.count(Severity::Error)
    }

    pub fn warnings(&self) -> usize {
        self.count(Severity::Warning)
    }

    fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    }

    /// A file that could not be read ([`crate::spec::read_limited`]'s error).
    pub fn unreadable(error: &SpecError) -> FileReport {
        let check = match error {
            SpecError::Io(_) => Check::Unreadable,
            _ => Check::InvalidJson,
        };
        FileReport::failed(check, error.to_string(), Position::START)
    }

    fn failed(check: Check, message: String, position: Position) -> FileReport {
        let mut diagnostic = Diagnostic::new(check, "", message);
        diagnostic.position = Some(position);
        FileReport {
            diagnostics: vec![diagnostic],
            protocol_id: None,
        }
    }
}

/// Lints a spec file's bytes, and `options` against its parameters when given.
pub fn lint_bytes(bytes: &[u8], options: Option<&Map<String, Value>>) -> FileReport {
    let (spec, protocol_id) = match Spec::from_bytes_with_id(bytes) {
        Ok(parsed) => parsed,
        Err(error) => return not_a_spec(bytes, &error),
    };
    let mut diagnostics = lint(spec.value());
    if let Some(options) = options {
        diagnostics.extend(options_diagnostics(&spec, options));
    }
    if !diagnostics.is_empty() {
        let (_, spans) = canonical::parse_with_spans(bytes).expect("the document parsed once");
        locate(&mut diagnostics, &spans);
    }
    FileReport {
        diagnostics,
        protocol_id: Some(protocol_id),
    }
}

/// `--options` problems, as errors of the `options-invalid` check (at the top of the file).
fn options_diagnostics(spec: &Spec, options: &Map<String, Value>) -> Vec<Diagnostic> {
    let problems = validate_options(spec.value(), options)
        .err()
        .map(|error| error.0)
        .unwrap_or_default();
    problems
        .into_iter()
        .map(|problem| Diagnostic::new(Check::Options, "", format!("options.{problem}")))
        .collect()
}

/// The one finding for bytes that are no spec, at the place the parser stopped.
fn not_a_spec(bytes: &[u8], error: &SpecError) -> FileReport {
    let text = |upto: usize| std::str::from_utf8(&bytes[..upto]).unwrap_or("");
    let (check, position) = match error {
        SpecError::Json(JsonError::Syntax { line, column, .. })
        | SpecError::Json(JsonError::TooDeep { line, column, .. }) => (
            Check::InvalidJson,
            Position {
                line: *line,
                column: *column,
            },
        ),
        SpecError::Json(JsonError::InvalidUtf8 { offset }) => (
            Check::InvalidJson,
            Position::of_offset(text(*offset), *offset),
        ),
        SpecError::NotAnObject(_) => {
            let start = bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
            (Check::NotAnObject, Position::of_offset(text(start), start))
        }
        SpecError::Unsupported(_) => (Check::InvalidJson, standard_json_stop(bytes)),
        _ => (Check::InvalidJson, Position::START),
    };
    FileReport::failed(check, error.to_string(), position)
}

/// Where a strict JSON reader gives up on a document Python reads (NaN, deep nesting).
fn standard_json_stop(bytes: &[u8]) -> Position {
    let Err(error) = serde_json::from_slice::<serde::de::IgnoredAny>(bytes) else {
        return Position::START;
    };
    let text = std::str::from_utf8(bytes).unwrap_or("");
    // serde counts columns in bytes, from 1 at the offending byte.
    let line_start = match error.line() {
        0 | 1 => 0,
        line => text
            .match_indices('\n')
            .nth(line - 2)
            .map_or(0, |(at, _)| at + 1),
    };
    Position::of_offset(text, line_start + error.column().saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(bytes: &[u8]) -> (Check, String) {
        let report = lint_bytes(bytes, None);
        let diagnostic = &report.diagnostics[0];
        (diagnostic.check, diagnostic.position.unwrap().to_string())
    }

    #[test]
    fn unparsable_files_are_findings_at_the_place_they_break() {
        assert_eq!(
            first(b"{\n  \"a\": tru\n}"),
            (Check::InvalidJson, "2:8".into())
        );
        assert_eq!(first(b"\n\n  [1]"), (Check::NotAnObject, "3:3".into()));
        assert_eq!(
            first(b"{\"\xc3\xa9\":\n \"\xff\"}"),
            (Check::InvalidJson, "2:3".into())
        );
        assert_eq!(
            first(b"{\"name\": \"x\",\n \"rules\": [NaN]}"),
            (Check::InvalidJson, "2:12".into())
        );
        assert_eq!(first(b""), (Check::InvalidJson, "1:1".into()));
    }

    #[test]
    fn lint_findings_point_at_their_key() {
        let text = b"{\n  \"name\": \"x\",\n  \"messages\": [\n    {\"name\": \"a\", \"direction\": \"up\", \"fields\": {\"action\": {\"type\": \"enum\", \"values\": [\"a\"], \"required\": true}}}\n  ]\n}";
        let report = lint_bytes(text, None);
        let found: Vec<String> = report
            .diagnostics
            .iter()
            .map(|d| format!("{} {} {}", d.position.unwrap(), d.check, d.path))
            .collect();
        assert_eq!(
            found,
            [
                "4:19 message-direction-invalid messages[0].direction",
                "3:3 direction-uncovered messages",
                "3:3 direction-uncovered messages",
            ]
        );
        assert!(report.protocol_id.is_some());
    }
}

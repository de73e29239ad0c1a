//! How `validate` prints lint findings: text (`file:line:col`), JSON lines, GitHub
//! workflow-command annotations, and SARIF 2.1.0 for code-scanning dashboards. Everything
//! quoted from a spec reaches the terminal escaped.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::canonical::Position;
use crate::spec::{Check, Diagnostic, FileReport, Severity};
use crate::terminal::{escape_control, json_line, json_pretty};

/// What one `validate` call checked.
pub struct Checked<'a> {
    pub files: &'a [PathBuf],
    pub reports: &'a [FileReport],
    /// One file named on its own: the text output ends with that file's verdict (and its
    /// protocol_id), as `validate` has always printed it.
    pub single: bool,
    pub quiet: bool,
}

impl Checked<'_> {
    fn each(&self) -> impl Iterator<Item = (&PathBuf, &FileReport)> {
        self.files.iter().zip(self.reports)
    }

    fn errors(&self) -> usize {
        self.reports.iter().map(FileReport::errors).sum()
    }

    fn warnings(&self) -> usize {
        self.reports.iter().map(FileReport::warnings).sum()
    }

    /// `OK: 3 file(s) checked: 0 error(s), 2 warning(s)`, or `INVALID: ...`.
    fn summary(&self) -> Option<String> {
        let errors = self.errors();
        if self.quiet && errors == 0 {
            return None;
        }
        let verdict = if errors == 0 { "OK" } else { "INVALID" };
        Some(format!(
            "{verdict}: {} file(s) checked: {errors} error(s), {} warning(s)",
            self.files.len(),
            self.warnings()
        ))
    }
}

fn position(diagnostic: &Diagnostic) -> Position {
    diagnostic.position.unwrap_or(Position::START)
}

fn severity_word(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// `file:line:col: error: path: message [check]`, one line each, then the summary.
pub fn text(checked: &Checked) {
    for (file, report) in checked.each() {
        for diagnostic in &report.diagnostics {
            let line = format!(
                "{}:{}: {}: {diagnostic} [{}]",
                file.display(),
                position(diagnostic),
                severity_word(diagnostic.severity),
                diagnostic.check
            );
            // Paths and messages quote the spec, which may come from anyone.
            println!("{}", escape_control(&line));
        }
    }
    if !checked.single {
        if let Some(summary) = checked.summary() {
            println!("{}", escape_control(&summary));
        }
        return;
    }
    let report = &checked.reports[0];
    let (errors, warnings) = (report.errors(), report.warnings());
    if !checked.quiet || errors > 0 {
        let verdict = if errors == 0 { "OK" } else { "INVALID" };
        let line = format!(
            "{}: {verdict}: {errors} error(s), {warnings} warning(s); protocol_id {}",
            checked.files[0].display(),
            report.protocol_id.as_deref().unwrap_or("none")
        );
        println!("{}", escape_control(&line));
    }
}

/// One JSON object per file and line: `{"file", "valid", "protocol_id", "errors",
/// "warnings", "diagnostics"}`.
pub fn json_lines(checked: &Checked) {
    for (file, report) in checked.each() {
        let object = json!({
            "file": file.display().to_string(),
            "valid": report.errors() == 0,
            "protocol_id": report.protocol_id,
            "errors": report.errors(),
            "warnings": report.warnings(),
            "diagnostics": report.diagnostics,
        });
        println!("{}", json_line(&object));
    }
}

/// `::error file=…,line=…,col=…,title=…::…` per finding (GitHub shows them on the diff),
/// then the summary as a plain log line.
pub fn github(checked: &Checked) {
    for (file, report) in checked.each() {
        for diagnostic in &report.diagnostics {
            let at = position(diagnostic);
            let properties = format!(
                "file={},line={},col={},title={}",
                workflow_property(&file.display().to_string()),
                at.line,
                at.column,
                workflow_property(&format!("aigenora {}", diagnostic.check)),
            );
            println!(
                "::{} {properties}::{}",
                severity_word(diagnostic.severity),
                workflow_data(&escape_control(&diagnostic.to_string()))
            );
        }
    }
    if let Some(summary) = checked.summary() {
        println!("{}", workflow_data(&escape_control(&summary)));
    }
}

/// A workflow command's message: `%`, CR and LF escaped.
fn workflow_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: also `:` and `,`.
fn workflow_property(text: &str) -> String {
    workflow_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// One SARIF 2.1.0 log: one run, every check as a rule (so dashboards can show the rules
/// nothing broke too), one result per finding.
pub fn sarif(checked: &Checked) {
    println!("{}", json_pretty(&sarif_log(checked)));
}

/// The SARIF log of a `validate` call (columns counted in code points, like ours).
pub fn sarif_log(checked: &Checked) -> Value {
    let rules: Vec<Value> = Check::ALL.iter().map(|check| sarif_rule(*check)).collect();
    let mut results = Vec::new();
    for (file, report) in checked.each() {
        for diagnostic in &report.diagnostics {
            results.push(sarif_result(file, diagnostic));
        }
    }
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "aigenora",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

fn sarif_level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn sarif_rule(check: Check) -> Value {
    json!({
        "id": check.id(),
        "name": rule_name(check.id()),
        "shortDescription": {"text": check.help()},
        "help": {"text": format!("{} (aigenora lint check `{}`; the list of checks is in docs/spec.md.)", check.help(), check.id())},
        "defaultConfiguration": {"level": sarif_level(check.severity())},
    })
}

/// `field-type-unknown` → `FieldTypeUnknown` (SARIF's rule names are identifiers).
fn rule_name(id: &str) -> String {
    id.split('-')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or(String::new(), |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

fn sarif_result(file: &Path, diagnostic: &Diagnostic) -> Value {
    let at = position(diagnostic);
    let index = Check::ALL
        .iter()
        .position(|check| *check == diagnostic.check)
        .expect("every check is listed");
    let mut location = json!({
        "physicalLocation": {
            "artifactLocation": {"uri": file_uri(file)},
            "region": {"startLine": at.line, "startColumn": at.column},
        },
    });
    if !diagnostic.path.is_empty() {
        location["logicalLocations"] = json!([{
            "fullyQualifiedName": diagnostic.path,
            "kind": "member",
        }]);
    }
    json!({
        "ruleId": diagnostic.check.id(),
        "ruleIndex": index,
        "level": sarif_level(diagnostic.severity),
        "message": {"text": diagnostic.to_string()},
        "locations": [location],
    })
}

/// A relative path as a relative URI reference (what code scanning resolves against the
/// repository root); an absolute one as a `file://` URI. Percent-encoded either way.
fn file_uri(file: &Path) -> String {
    let text: Cow<str> = file.to_string_lossy();
    let text = text.replace('\\', "/");
    let mut uri = String::with_capacity(text.len() + 8);
    if file.is_absolute() {
        uri.push_str("file://");
    }
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                uri.push(byte as char)
            }
            _ => uri.push_str(&format!("%{byte:02X}")),
        }
    }
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_commands_escape_their_separators() {
        assert_eq!(workflow_data("50% done\nnext"), "50%25 done%0Anext");
        assert_eq!(workflow_property("a:b,c"), "a%3Ab%2Cc");
    }

    #[test]
    fn file_uris_are_percent_encoded() {
        assert_eq!(
            file_uri(Path::new("specs/my game/spec.json")),
            "specs/my%20game/spec.json"
        );
        assert_eq!(
            file_uri(Path::new("/tmp/é.json")),
            "file:///tmp/%C3%A9.json"
        );
        assert_eq!(rule_name("field-type-unknown"), "FieldTypeUnknown");
    }
}

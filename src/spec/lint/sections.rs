//! Lint of the smaller sections: top-level keys, `name`, `spec_version`, `decision`,
//! `commit_reveal`, `timing` and `shadow_judge`.

use serde_json::{Map, Value, json};

use super::{Check, Findings, join, kind, unknown_keys};
use crate::canonical::PyJson;
use crate::spec::number::{PyNumber, as_integer, is_integer};
use crate::spec::version::{SUPPORTED_SPEC_VERSION, check_spec_version};

/// `$schema` is where an editor finds the JSON Schema of spec.json; it is not hashed.
const TOP_LEVEL_KEYS: [&str; 18] = [
    "name",
    "spec_version",
    "description",
    "type",
    "family",
    "tags",
    "capabilities",
    "flow",
    "messages",
    "rules",
    "choices",
    "commit_reveal",
    "parameters",
    "decision",
    "timing",
    "shadow_judge",
    "ui",
    "$schema",
];

pub fn lint_top_level(spec: &Map<String, Value>, findings: &mut Findings) {
    unknown_keys(spec, &TOP_LEVEL_KEYS, "", findings);
    match spec.get("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => {}
        Some(Value::String(_)) => findings.add(Check::Name, "name", "must not be empty"),
        None => findings.add(Check::Name, "name", "required: the protocol's display name"),
        Some(other) => findings.add(
            Check::Name,
            "name",
            format!("expected a string, found {}", kind(other)),
        ),
    }
    if let Some(version) = spec.get("spec_version") {
        if let Err(error) = check_spec_version(&json!({ "spec_version": version })) {
            findings.add(Check::SpecVersion, "spec_version", error.to_string());
        } else if version.as_str() != Some(SUPPORTED_SPEC_VERSION) {
            findings.add(
                Check::SpecVersionImplicit,
                "spec_version",
                format!("{version} is read as \"{SUPPORTED_SPEC_VERSION}\"; write it out"),
            );
        }
    }
    for key in ["description", "type", "family"] {
        if let Some(value) = spec.get(key).filter(|v| !v.is_string()) {
            findings.add(
                Check::SectionType,
                key,
                format!("expected a string, found {}", kind(value)),
            );
        }
    }
    for key in ["tags", "capabilities", "choices"] {
        if let Some(value) = spec.get(key) {
            let strings = value
                .as_array()
                .is_some_and(|items| items.iter().all(Value::is_string));
            if !strings {
                findings.add(Check::SectionType, key, "expected an array of strings");
            }
        }
    }
}

pub fn lint_sections(spec: &Map<String, Value>, findings: &mut Findings) {
    if let Some(decision) = spec.get("decision") {
        lint_decision(decision, findings);
    }
    if let Some(commit_reveal) = spec.get("commit_reveal") {
        lint_commit_reveal(commit_reveal, findings);
    }
    if let Some(timing) = spec.get("timing").filter(|t| !t.is_null()) {
        lint_timing(timing, findings);
    }
    match spec.get("shadow_judge") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => {
            let mode = spec
                .get("flow")
                .and_then(|f| f.get("mode"))
                .and_then(Value::as_str);
            if mode != Some("simultaneous_round") {
                findings.add(
                    Check::ShadowJudgeUnused,
                    "shadow_judge",
                    "only simultaneous_round uses the shadow judge; it has no effect here",
                );
            }
        }
        Some(other) => findings.add(
            Check::ShadowJudge,
            "shadow_judge",
            format!("must be a boolean when present, found {}", kind(other)),
        ),
    }
}

fn lint_decision(decision: &Value, findings: &mut Findings) {
    let Value::Object(decision) = decision else {
        return findings.add(
            Check::Decision,
            "decision",
            format!("expected an object, found {}", kind(decision)),
        );
    };
    unknown_keys(
        decision,
        &[
            "mode",
            "timeout_seconds",
            "timeout_action",
            "control",
            "description",
        ],
        "decision",
        findings,
    );
    one_of(
        Check::Decision,
        decision,
        "decision",
        "mode",
        &["auto", "manual"],
        findings,
    );
    one_of(
        Check::Decision,
        decision,
        "decision",
        "timeout_action",
        &["fallback", "abort", "forfeit"],
        findings,
    );
    if let Some(timeout) = decision.get("timeout_seconds")
        && as_integer(timeout).is_none_or(|t| t <= 0)
    {
        findings.add(
            Check::Decision,
            "decision.timeout_seconds",
            format!("expected a positive integer, found {timeout}"),
        );
    }
}

fn lint_commit_reveal(commit_reveal: &Value, findings: &mut Findings) {
    let Value::Object(section) = commit_reveal else {
        return findings.add(
            Check::CommitReveal,
            "commit_reveal",
            format!("expected an object, found {}", kind(commit_reveal)),
        );
    };
    unknown_keys(
        section,
        &["algorithm", "nonce_length", "charset", "description"],
        "commit_reveal",
        findings,
    );
    match section.get("algorithm").and_then(Value::as_str) {
        Some("SHA256") => {}
        Some(other)
            if other.eq_ignore_ascii_case("sha256") || other.eq_ignore_ascii_case("sha-256") =>
        {
            findings.add(
                Check::CommitRevealSpelling,
                "commit_reveal.algorithm",
                format!("write \"SHA256\" (found {other:?})"),
            )
        }
        _ => findings.add(
            Check::CommitReveal,
            "commit_reveal.algorithm",
            "must be \"SHA256\" (the only commitment hash the engine uses)",
        ),
    }
    if let Some(length) = section.get("nonce_length")
        && !as_integer(length).is_some_and(|n| (16..=64).contains(&n))
    {
        findings.add(
            Check::CommitReveal,
            "commit_reveal.nonce_length",
            format!(
                "expected hex characters between 16 and 64 (the nonce field type), found {length}"
            ),
        );
    }
    one_of(
        Check::CommitReveal,
        section,
        "commit_reveal",
        "charset",
        &["hex"],
        findings,
    );
}

/// The reference's own timing rules (a spec that breaks them does not load there).
fn lint_timing(timing: &Value, findings: &mut Findings) {
    let Value::Object(timing) = timing else {
        return findings.add(
            Check::Timing,
            "timing",
            format!("must be an object, found {}", kind(timing)),
        );
    };
    unknown_keys(
        timing,
        &[
            "mode",
            "min_think_seconds",
            "max_think_seconds",
            "description",
        ],
        "timing",
        findings,
    );
    match timing.get("mode").and_then(Value::as_str) {
        Some("simultaneous" | "sequential" | "none") => {}
        _ => findings.add(
            Check::Timing,
            "timing.mode",
            "required: simultaneous, sequential or none",
        ),
    }
    let seconds = |key: &str, findings: &mut Findings| -> Option<PyNumber> {
        let value = timing.get(key).filter(|v| !v.is_null())?;
        let number = PyNumber::of(value).filter(|_| is_integer(value));
        let non_negative = number.as_ref().and_then(|n| n.compare(&PyNumber::Int(0)))
            != Some(std::cmp::Ordering::Less);
        if number.is_none() || !non_negative {
            findings.add(
                Check::Timing,
                join("timing", key),
                format!("must be a non-negative integer, found {value}"),
            );
            return None;
        }
        number
    };
    let min = seconds("min_think_seconds", findings);
    let max = seconds("max_think_seconds", findings);
    if let (Some(min), Some(max)) = (min, max)
        && max.compare(&min) == Some(std::cmp::Ordering::Less)
    {
        findings.add(
            Check::TimingInverted,
            "timing.max_think_seconds",
            "must be >= timing.min_think_seconds",
        );
    }
}

fn one_of(
    check: Check,
    section: &Map<String, Value>,
    path: &str,
    key: &str,
    allowed: &[&str],
    findings: &mut Findings,
) {
    if let Some(value) = section.get(key)
        && !value.as_str().is_some_and(|v| allowed.contains(&v))
    {
        let shown = crate::canonical::to_canonical_string(&PyJson::from(value));
        findings.add(
            check,
            join(path, key),
            format!("must be one of {}, found {shown}", allowed.join(", ")),
        );
    }
}

//! `aigenora protocol diff OLD NEW`: what changed between two specs, contract (hashed: a
//! new protocol) apart from display (not hashed), with both protocol_ids.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::{Value, json};

use crate::canonical::{self, PyJson};
use crate::spec::diff::{Change, ChangeKind, SpecDiff, diff};
use crate::spec::{self, SpecError};
use crate::terminal::{escape_control, json_line};

/// Longest value shown in the text output (longer ones are cut with `…`).
const SHOWN_CHARS: usize = 80;

pub fn run(old: &Path, new: &Path, as_json: bool) -> anyhow::Result<ExitCode> {
    let (old_spec, new_spec) = (read(old)?, read(new)?);
    let found = diff(&old_spec, &new_spec).context("comparing the specs")?;
    if as_json {
        println!("{}", json_line(&json_report(old, new, &found)));
    } else {
        print_text(old, new, &found);
    }
    Ok(ExitCode::SUCCESS)
}

/// A spec as `protocol hash` reads it (no lint: a diff is for any spec that hashes).
fn read(path: &Path) -> anyhow::Result<PyJson> {
    let bytes = spec::read_limited(path).with_context(|| path.display().to_string())?;
    let document = canonical::parse(&bytes)
        .map_err(SpecError::from)
        .with_context(|| path.display().to_string())?;
    if document.as_object().is_none() {
        anyhow::bail!("the spec must be a JSON object ({})", path.display());
    }
    Ok(document)
}

fn json_report(old: &Path, new: &Path, found: &SpecDiff) -> Value {
    let changes = |list: &[Change]| -> Vec<Value> {
        list.iter()
            .map(|change| {
                let mut entry = json!({"path": change.path, "change": change.change});
                for (key, text) in [("old", &change.old), ("new", &change.new)] {
                    if let Some(text) = text {
                        // Canonical text is JSON, except NaN and Infinity: those stay text.
                        entry[key] = serde_json::from_str(text)
                            .unwrap_or_else(|_| Value::String(text.clone()));
                    }
                }
                entry
            })
            .collect()
    };
    json!({
        "old": {"file": old.display().to_string(), "protocol_id": found.old_protocol_id},
        "new": {"file": new.display().to_string(), "protocol_id": found.new_protocol_id},
        "same_protocol": found.same_protocol,
        "contract": changes(&found.contract),
        "display": changes(&found.display),
    })
}

fn print_text(old: &Path, new: &Path, found: &SpecDiff) {
    let line = |text: String| println!("{}", escape_control(&text));
    line(format!("old: {}  {}", found.old_protocol_id, old.display()));
    line(format!("new: {}  {}", found.new_protocol_id, new.display()));
    println!(
        "{}",
        if found.same_protocol {
            "same protocol: only display fields changed"
        } else {
            "a new protocol: the contract changed"
        }
    );
    for (title, list) in [
        ("contract (hashed)", &found.contract),
        ("display (not hashed)", &found.display),
    ] {
        if list.is_empty() {
            println!("{title}: no change");
        } else {
            println!("{title}:");
        }
        for change in list {
            line(format!("  {}", describe(change)));
        }
    }
}

/// `~ path: old → new`, `+ path: new`, `- path: old`.
fn describe(change: &Change) -> String {
    let shown = |text: &Option<String>| shorten(text.as_deref().unwrap_or(""));
    match change.change {
        ChangeKind::Added => format!("+ {}: {}", change.path, shown(&change.new)),
        ChangeKind::Removed => format!("- {}: {}", change.path, shown(&change.old)),
        ChangeKind::Changed => format!(
            "~ {}: {} → {}",
            change.path,
            shown(&change.old),
            shown(&change.new)
        ),
    }
}

fn shorten(text: &str) -> String {
    if text.chars().count() <= SHOWN_CHARS {
        return text.to_string();
    }
    let cut: String = text.chars().take(SHOWN_CHARS - 1).collect();
    format!("{cut}…")
}

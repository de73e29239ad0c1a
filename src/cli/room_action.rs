//! `aigenora session action`: one action for a room, checked (a JSON object, at most 64 KiB
//! in canonical form, from a file of at most 1 MiB) and appended to the session directory's
//! queue, which the member sends on.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::control::target::Target;
use crate::session::room::join::ACTIONS_FILE;

/// The largest action, in canonical bytes.
const MAX_ACTION_BYTES: usize = 64 * 1024;
/// The largest action file.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

pub fn submit(
    target: &Target,
    action: Option<String>,
    file: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let text = match (action, file) {
        (Some(text), _) => text,
        (None, Some(path)) => {
            let mut text = String::new();
            std::fs::File::open(&path)
                .and_then(|f| f.take(MAX_FILE_BYTES + 1).read_to_string(&mut text))
                .with_context(|| format!("--action-file {}", path.display()))?;
            if text.len() as u64 > MAX_FILE_BYTES {
                bail!("--action-file {}: larger than 1 MiB", path.display());
            }
            text
        }
        (None, None) => bail!("give --action JSON or --action-file FILE"),
    };
    let action: Value = serde_json::from_str(&text).context("the action is not JSON")?;
    let line = queue(target, action)?;
    if json {
        println!(
            "{}",
            crate::terminal::json_line(&json!({"status": "ok", "action": line["action"]}))
        );
    } else {
        println!(
            "[OK] action queued for the room in {}",
            target.root.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Checks `action` and appends it to `target`'s queue; returns the queued line.
pub fn queue(target: &Target, action: Value) -> anyhow::Result<Value> {
    if !action.is_object() {
        bail!(
            "the action must be a JSON object, not {}",
            crate::spec::json_kind(&action)
        );
    }
    let size = crate::room::json::canonical(&action)
        .map_err(|e| anyhow::anyhow!("the action cannot travel in a room: {e}"))?
        .len();
    if size > MAX_ACTION_BYTES {
        bail!("the action is {size} bytes; at most {MAX_ACTION_BYTES}");
    }
    if target.record.protocol_id.is_none() {
        bail!("{} is not a session directory", target.root.display());
    }
    let line = json!({"action": action, "ts": crate::records::iso_now()});
    crate::layout::append_json_line(&target.root.join(ACTIONS_FILE), &line)
        .with_context(|| format!("queueing the action in {}", target.root.display()))?;
    Ok(line)
}

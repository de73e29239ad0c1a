//! `aigenora session action`: one action for a room, read from the flag or a file of at most
//! 1 MiB, and queued through [`crate::control::room::queue`] (the same checks as the terminal
//! and the browser controller).

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::control::target::Target;

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
    let line = crate::control::room::queue(target, action)?;
    if json {
        println!(
            "{}",
            crate::terminal::json_line(&json!({"status": "ok", "action": line["action"]}))
        );
    } else {
        println!(
            "[OK] action queued for the room in {}",
            target.dir.root().display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

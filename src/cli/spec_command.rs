//! The commands a CI script runs once per spec file (`validate`, `protocol hash`, `protocol
//! diff`, `protocol schema`) as a type of their own. The `aigenora` binary runs only these
//! and hands every other command to `aigenora-full` (see `crate::binaries`), so it links
//! nothing else (no interpreter, iroh, server or HTTP client) and starts in about a
//! millisecond.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use serde_json::{Value, json};

use super::protocol::ProtocolCommand;
use super::{Command, protocol_diff, validate};
use crate::canonical::{self, PyJson};
use crate::spec::{self, check_spec_version};

/// One spec command with its parsed flags.
#[derive(Debug)]
pub enum SpecCommand {
    Validate(validate::ValidateArgs),
    Protocol(SpecProtocolCommand),
}

/// The spec commands under `aigenora protocol`.
#[derive(Debug, Subcommand)]
pub enum SpecProtocolCommand {
    /// Print a spec's protocol_id (SHA-256 of its canonical contract), as the reference does.
    Hash {
        /// Path to spec.json.
        spec: PathBuf,
        /// Print {"protocol_id", "warnings"} as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the JSON Schema (2020-12) of spec.json (the repository's schemas/spec.schema.json),
    /// for editors and other tools.
    Schema,
    /// Show what changed between two specs: contract fields (hashed: a new protocol_id)
    /// apart from display fields (not hashed), and both protocol_ids.
    Diff {
        /// The old spec.json.
        old: PathBuf,
        /// The new spec.json.
        new: PathBuf,
        /// Print {"old", "new", "same_protocol", "contract", "display"} as JSON.
        #[arg(long)]
        json: bool,
    },
}

impl TryFrom<Command> for SpecCommand {
    /// The command back, when it is not a spec command.
    type Error = Box<Command>;

    fn try_from(command: Command) -> Result<SpecCommand, Box<Command>> {
        match command {
            Command::Validate(args) => Ok(SpecCommand::Validate(args)),
            Command::Protocol(ProtocolCommand::Spec(command)) => Ok(SpecCommand::Protocol(command)),
            other => Err(Box::new(other)),
        }
    }
}

impl SpecCommand {
    /// Runs the command in this process and turns its outcome into the exit code.
    pub fn run(self) -> ExitCode {
        super::exit_code(match self {
            SpecCommand::Validate(args) => validate::run(args),
            SpecCommand::Protocol(command) => command.run(),
        })
    }
}

impl SpecProtocolCommand {
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self {
            SpecProtocolCommand::Hash { spec, json } => hash(&spec, json),
            SpecProtocolCommand::Schema => {
                print!("{}", spec::schema::SPEC_JSON_SCHEMA);
                Ok(ExitCode::SUCCESS)
            }
            SpecProtocolCommand::Diff { old, new, json } => protocol_diff::run(&old, &new, json),
        }
    }
}

/// Hashes without validating (like the reference); an unknown spec_version only warns.
fn hash(path: &Path, as_json: bool) -> anyhow::Result<ExitCode> {
    let bytes = spec::read_limited(path).with_context(|| path.display().to_string())?;
    let document = canonical::parse(&bytes)
        .map_err(spec::SpecError::from)
        .with_context(|| path.display().to_string())?;
    let protocol_id = spec::protocol_id::protocol_id_of_pyjson(&document)
        .map_err(|e| anyhow::anyhow!("{e} ({})", path.display()))?;
    let warnings: Vec<String> = spec_version_warning(&document).into_iter().collect();
    if as_json {
        println!(
            "{}",
            json!({"protocol_id": protocol_id, "warnings": warnings})
        );
    } else {
        for warning in &warnings {
            eprintln!("[warning] {warning}");
        }
        println!("{protocol_id}");
    }
    Ok(ExitCode::SUCCESS)
}

fn spec_version_warning(document: &PyJson) -> Option<String> {
    let version = document.as_object()?.get("spec_version")?;
    let value: Value =
        serde_json::from_str(&canonical::to_canonical_string(version)).unwrap_or(Value::Null);
    check_spec_version(&json!({ "spec_version": value }))
        .err()
        .map(|e| e.to_string())
}

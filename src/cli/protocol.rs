//! `aigenora protocol ...`: work with protocol contracts, locally (hash, schema, diff) and
//! on the community server (register, fetch, discover).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use serde_json::{Value, json};

use super::{GlobalArgs, protocol_remote};

use crate::protocols::Located;
use crate::protocols::well_known::WELL_KNOWN;
use crate::spec::Spec;

#[derive(Debug, Subcommand)]
pub enum ProtocolCommand {
    /// Play a protocol against itself (host and guest in one process) and report.
    Test(super::protocol_test::TestArgs),
    /// Write a hooks.py skeleton (and its sidecar) for a spec into a directory.
    Scaffold {
        /// A spec.json, a protocol directory, a built-in alias, or a contract of the library
        /// by protocol_id or well-known alias (`rps-v1`).
        spec: String,
        /// The protocol directory to create (spec.json is copied there).
        dir: PathBuf,
    },
    /// List the built-in protocols and the well-known contracts this build has hooks for.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Print a protocol's directory (writing a built-in into the data dir's library).
    Path {
        /// A protocol directory, a built-in alias, or a contract of the library by
        /// protocol_id or well-known alias (`rps-v1`).
        protocol: String,
    },
    #[command(flatten)]
    Spec(super::SpecProtocolCommand),
    /// Publish a spec on the community server (after the run gate: spec_version and lint).
    Register {
        /// Path to spec.json.
        spec: PathBuf,
        /// Print {"protocol_id", "created"} as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Download a spec by protocol_id, verify its hash, and add it to the local library.
    Fetch {
        /// The 64-hex protocol_id, or a well-known contract's alias (`rps-v1`).
        protocol_id: String,
        /// Print {"protocol_id", "path", "name"} as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List protocols registered on the community server, newest first.
    Discover {
        /// How many (at most 100).
        #[arg(long, default_value_t = crate::api::DEFAULT_LIST_LIMIT)]
        limit: u32,
        /// Continue from a previous page's next_cursor.
        #[arg(long)]
        cursor: Option<String>,
        /// Only protocols whose name or description contains this text.
        #[arg(short = 'q', long = "query")]
        query: Option<String>,
        /// Print {"results", "next_cursor"} as JSON.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(command: ProtocolCommand, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    match command {
        ProtocolCommand::Spec(command) => command.run(),
        ProtocolCommand::Test(args) => super::protocol_test::run(args, global),
        ProtocolCommand::Scaffold { spec, dir } => scaffold(&spec, &dir, global),
        ProtocolCommand::List { json } => list(json),
        ProtocolCommand::Path { protocol } => {
            let dir = crate::protocols::resolve(&protocol, &global.data_dir())
                .map_err(anyhow::Error::msg)?;
            println!("{}", dir.display());
            Ok(ExitCode::SUCCESS)
        }
        ProtocolCommand::Register { spec, json } => protocol_remote::register(&spec, json, global),
        ProtocolCommand::Fetch { protocol_id, json } => {
            let protocol_id = crate::protocols::well_known::find(&protocol_id)
                .map_or(protocol_id.as_str(), |contract| contract.protocol_id);
            protocol_remote::fetch(protocol_id, json, global)
        }
        ProtocolCommand::Discover {
            limit,
            cursor,
            query,
            json,
        } => protocol_remote::discover(limit, cursor.as_deref(), query.as_deref(), json, global),
    }
}

/// Where `protocol scaffold` reads its contract: a file named on the command line, or one a
/// protocol name stands for (a built-in's embedded spec, a library directory's spec.json).
fn scaffold_source(argument: &str, global: &GlobalArgs) -> anyhow::Result<(Spec, Vec<u8>)> {
    let path = std::path::Path::new(argument);
    let spec_path = if path.is_file() {
        path.to_path_buf()
    } else {
        match crate::protocols::locate(argument, &global.data_dir()).map_err(anyhow::Error::msg)? {
            Located::Builtin(builtin) => {
                return Ok((builtin.spec(), builtin.spec_json.as_bytes().to_vec()));
            }
            Located::Dir(dir) => dir.join("spec.json"),
        }
    };
    let spec = Spec::load_checked(&spec_path)?;
    let bytes = std::fs::read(&spec_path).with_context(|| spec_path.display().to_string())?;
    Ok((spec, bytes))
}

fn scaffold(argument: &str, dir: &Path, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    println!("{}", scaffold_into(argument, dir, global)?.display());
    Ok(ExitCode::SUCCESS)
}

/// Writes the spec `argument` names and a hooks.py skeleton into `dir`; the hooks' path.
pub fn scaffold_into(argument: &str, dir: &Path, global: &GlobalArgs) -> anyhow::Result<PathBuf> {
    let (spec, bytes) = scaffold_source(argument, global)?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let target = dir.join("spec.json");
    if !target.exists() {
        std::fs::write(&target, bytes)
            .with_context(|| format!("copying the spec into {}", dir.display()))?;
    }
    if !crate::hooks::skeleton::write_scaffold(&spec, dir)
        .with_context(|| format!("writing {}", dir.display()))?
    {
        anyhow::bail!(
            "{} already exists; not overwriting it",
            dir.join("hooks.py").display()
        );
    }
    Ok(dir.join("hooks.py"))
}

fn list(as_json: bool) -> anyhow::Result<ExitCode> {
    let rows = list_rows();
    if as_json {
        println!("{}", Value::Array(rows));
        return Ok(ExitCode::SUCCESS);
    }
    for row in rows {
        println!(
            "{:<11} {:<22} {:<20} {}  {}",
            row["kind"].as_str().unwrap_or(""),
            row["alias"].as_str().unwrap_or(""),
            row["flow_mode"].as_str().unwrap_or("(server spec)"),
            row["protocol_id"].as_str().unwrap_or(""),
            row["name"].as_str().unwrap_or("")
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `protocol list --json`: the built-ins, then the well-known contracts we have hooks for.
pub fn list_rows() -> Vec<Value> {
    let builtins = crate::protocols::BUILTINS.iter().map(|builtin| {
        let spec = builtin.spec();
        json!({
            "kind": "builtin",
            "alias": builtin.alias,
            "name": spec.name(),
            "flow_mode": spec.flow_mode().map(|m| m.as_str()).ok(),
            "protocol_id": spec.protocol_id(),
        })
    });
    // Only the hooks are shipped: the flow mode is in the spec the server holds.
    let well_known = WELL_KNOWN.iter().map(|entry| {
        json!({
            "kind": "well-known",
            "alias": entry.alias,
            "name": entry.name,
            "flow_mode": null,
            "protocol_id": entry.protocol_id,
        })
    });
    builtins.chain(well_known).collect()
}

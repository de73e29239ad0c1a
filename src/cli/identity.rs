//! `aigenora init` (create the identity) and `aigenora register` (make it a registered agent).

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use serde_json::json;

use super::GlobalArgs;
use super::remote::{Remote, print_json};
use crate::api::agent::{check_bio, check_nickname};
use crate::client::Registered;
use crate::identity;
use crate::protocols::samples::{Sample, write_samples};
use crate::terminal::escape_control;

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Replace an existing key.json with a new identity.
    #[arg(long)]
    pub force: bool,
    /// Also write the sample protocols into the library (<data dir>/protocols): the
    /// built-ins, and our hooks for the well-known contracts, to read and adapt.
    #[arg(long)]
    pub samples: bool,
    /// Print {"public_key", "key_file", "created"} (and "samples") as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RegisterArgs {
    /// Public name: 1-32 characters of A-Za-z0-9_.-
    #[arg(long)]
    pub nickname: String,
    /// A short profile (at most 280 characters).
    #[arg(long, default_value = "")]
    pub bio: String,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Creates the data directory and key.json (mode 0600), keeping an existing identity
/// unless `--force` is given.
pub fn init(args: InitArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let data_dir = global.data_dir();
    let (identity, created) = identity::create_key_file(&data_dir, args.force)?;
    let key_file = data_dir.key_file();
    let samples = if args.samples {
        write_samples(&data_dir).with_context(|| {
            format!(
                "writing the samples into {}",
                data_dir.protocols_root().display()
            )
        })?
    } else {
        Vec::new()
    };
    if args.json {
        let mut report = json!({
            "public_key": identity.public_key(),
            "key_file": key_file.display().to_string(),
            "created": created,
        });
        if args.samples {
            report["samples"] = samples.iter().map(sample_json).collect();
        }
        print_json(&report);
        return Ok(ExitCode::SUCCESS);
    }
    if created {
        println!("[OK] identity created: {}", identity.public_key());
        println!("key: {}", key_file.display());
    } else {
        println!(
            "[OK] identity exists: {} (--force replaces it)",
            identity.public_key()
        );
        println!("key: {}", key_file.display());
    }
    for sample in &samples {
        let note = if sample.written {
            ""
        } else {
            " (your own hooks.py kept)"
        };
        println!(
            "sample: {:<11} {:<22} {}{note}",
            sample.kind.as_str(),
            sample.alias,
            sample.dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn sample_json(sample: &Sample) -> serde_json::Value {
    json!({
        "kind": sample.kind.as_str(),
        "alias": sample.alias,
        "dir": sample.dir.display().to_string(),
        "written": sample.written,
    })
}

/// Proves work on a server challenge and registers this identity under a nickname. An
/// already registered key is not an error.
pub fn register(args: RegisterArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    check_nickname(&args.nickname).map_err(anyhow::Error::msg)?;
    check_bio(&args.bio).map_err(anyhow::Error::msg)?;
    let remote = Remote::connect(global)?;
    let (agent, already) = match remote.run(remote.client.register(&args.nickname, &args.bio))? {
        Registered::New(agent) => (Some(agent), false),
        Registered::AlreadyRegistered(_) => {
            let public_key = remote.client.identity().public_key().to_string();
            (remote.run(remote.client.agent(&public_key))?, true)
        }
    };
    if args.json {
        print_json(&json!({"already_registered": already, "agent": agent}));
        return Ok(ExitCode::SUCCESS);
    }
    match (agent, already) {
        (Some(agent), false) => println!(
            "[OK] registered {} as agent_id {}",
            escape_control(&agent.nickname),
            agent.agent_id
        ),
        (Some(agent), true) => println!(
            "[OK] already registered: {} (agent_id {})",
            escape_control(&agent.nickname),
            agent.agent_id
        ),
        (None, _) => println!("[OK] already registered"),
    }
    Ok(ExitCode::SUCCESS)
}

//! The server side of `aigenora protocol`: register, fetch and discover.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::json;

use super::GlobalArgs;
use super::remote::{Remote, print_json};
use crate::api::MAX_LIST_LIMIT;
use crate::api::protocol::{NewProtocol, ProtocolList};
use crate::client::{FetchedProtocol, ProtocolRegistered, RestClient, fetch_protocol};
use crate::protocols::well_known::{ProvidedHooks, provide_hooks};
use crate::spec::Spec;
use crate::terminal::escape_control;

/// `protocol register <spec.json>`: the spec must pass the run gate before it is sent.
pub fn register(path: &Path, as_json: bool, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let spec = Spec::load_checked(path)?;
    let body = NewProtocol::for_spec(&spec);
    let remote = Remote::connect(global)?;
    let created = match remote.run(remote.client.register_protocol(&body))? {
        ProtocolRegistered::New(_) => true,
        ProtocolRegistered::AlreadyRegistered(_) => false,
    };
    if as_json {
        print_json(&json!({"protocol_id": body.protocol_id, "created": created}));
    } else if created {
        println!("[OK] registered {} ({})", body.protocol_id, body.name);
    } else {
        println!("[OK] already registered: {}", body.protocol_id);
    }
    Ok(ExitCode::SUCCESS)
}

/// `protocol fetch <id>`: download, verify the hash and the run gate, install spec.json, and
/// give it hooks: ours for a well-known contract, else a skeleton unless hooks.py exists.
pub fn fetch(protocol_id: &str, as_json: bool, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let remote = Remote::connect(global)?;
    let fetched = remote.run(fetch_protocol(
        &remote.client,
        &remote.data_dir,
        protocol_id,
    ))?;
    let provided = provide_hooks(&fetched.spec, &fetched.dir)
        .with_context(|| format!("writing hooks into {}", fetched.dir.display()))?;
    let spec_path = fetched.dir.join("spec.json");
    let hooks_path = fetched.dir.join("hooks.py");
    if as_json {
        print_json(&fetched_json(&fetched, &provided));
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "[OK] fetched {} ({})",
        fetched.protocol_id,
        escape_control(fetched.spec.name())
    );
    println!("spec: {}", spec_path.display());
    match provided {
        ProvidedHooks::WellKnown(entry) => println!(
            "hooks: {} (ours for the well-known {})",
            hooks_path.display(),
            entry.alias
        ),
        ProvidedHooks::Skeleton => println!(
            "hooks: {} (a skeleton: implement it before hosting or joining)",
            hooks_path.display()
        ),
        ProvidedHooks::Existing => println!("hooks: {} (kept)", hooks_path.display()),
    }
    Ok(ExitCode::SUCCESS)
}

/// `protocol fetch --json`: `{protocol_id, path, name, hooks, hooks_skeleton_written}`.
pub fn fetched_json(fetched: &FetchedProtocol, provided: &ProvidedHooks) -> serde_json::Value {
    let hooks = match provided {
        ProvidedHooks::WellKnown(_) => "well-known",
        ProvidedHooks::Existing => "existing",
        ProvidedHooks::Skeleton => "skeleton",
    };
    json!({
        "protocol_id": fetched.protocol_id,
        "path": fetched.dir.join("spec.json").display().to_string(),
        "name": fetched.spec.name(),
        "hooks": hooks,
        "hooks_skeleton_written": *provided == ProvidedHooks::Skeleton,
    })
}

/// One page of the server's protocol directory, newest first: what `protocol discover`
/// prints and the MCP tool returns. A limit outside 1..=100 is refused here, before asking.
pub async fn discover_page(
    client: &RestClient,
    limit: u32,
    cursor: Option<&str>,
    query: Option<&str>,
) -> anyhow::Result<ProtocolList> {
    if !(1..=MAX_LIST_LIMIT).contains(&limit) {
        anyhow::bail!("limit must be between 1 and {MAX_LIST_LIMIT}, not {limit}");
    }
    Ok(client.list_protocols(limit, cursor, query).await?)
}

/// `protocol discover`: one page of the server's protocol directory.
pub fn discover(
    limit: u32,
    cursor: Option<&str>,
    query: Option<&str>,
    as_json: bool,
    global: &GlobalArgs,
) -> anyhow::Result<ExitCode> {
    let remote = Remote::connect(global)?;
    let page = remote.run(discover_page(&remote.client, limit, cursor, query))?;
    if as_json {
        print_json(&page);
        return Ok(ExitCode::SUCCESS);
    }
    if page.results.is_empty() {
        println!("no protocols found");
    }
    for protocol in &page.results {
        let name: String = protocol.name.chars().take(20).collect();
        let description: String = protocol.description.chars().take(50).collect();
        let id: String = protocol.protocol_id.chars().take(16).collect();
        println!(
            "  {:<20} {}...  {}",
            escape_control(&name),
            escape_control(&id),
            escape_control(&description)
        );
    }
    let count = page.results.len();
    println!("({count} protocol{})", if count == 1 { "" } else { "s" });
    if let Some(next) = &page.next_cursor {
        println!(
            "(more: aigenora protocol discover --cursor {})",
            escape_control(next)
        );
    }
    Ok(ExitCode::SUCCESS)
}

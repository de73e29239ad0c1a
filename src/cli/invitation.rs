//! `aigenora browse` (offered invitations) and `aigenora cancel` (withdraw your own).

use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use super::GlobalArgs;
use super::remote::{Remote, print_json};
use crate::api::invitation::{BrowseFilter, InvitationSummary, InvitationType, check_tags};
use crate::identity::is_lower_hex_64;
use crate::terminal::{escape_control, json_pretty};

#[derive(Debug, Args)]
pub struct BrowseArgs {
    /// One tab-separated line per invitation: post_id, protocol_id, type, message, tags,
    /// public_key, registered, nickname, agent_id, pricing, options, host_control_mode.
    #[arg(long)]
    pub oneline: bool,
    /// Only invitations carrying all of these tags (comma-separated, at most 10).
    #[arg(long, value_name = "A,B")]
    pub tags: Option<String>,
    /// Only this kind of invitation.
    #[arg(long = "type", value_enum, value_name = "TYPE")]
    pub invitation_type: Option<InvitationType>,
    /// Only invitations for this protocol (64 hex).
    #[arg(long, value_name = "ID")]
    pub protocol_id: Option<String>,
    /// How many (at most 100).
    #[arg(long)]
    pub limit: Option<u32>,
    /// Show one invitation in full instead of a list.
    #[arg(long, value_name = "POST_ID")]
    pub post_id: Option<String>,
    /// Print the server's answer as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CancelArgs {
    /// The invitation to withdraw (yours).
    pub post_id: String,
    /// Print {"post_id", "cancelled"} as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn browse(args: BrowseArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let remote = Remote::connect(global)?;
    if let Some(post_id) = &args.post_id {
        let invitation = remote.run(remote.client.invitation(post_id))?;
        println!("{}", json_pretty(&invitation));
        return Ok(ExitCode::SUCCESS);
    }
    let filter = BrowseFilter {
        protocol_id: args.protocol_id.clone(),
        invitation_type: args.invitation_type,
        tags: parse_tags(args.tags.as_deref())?,
        limit: args.limit,
        cursor: None,
    };
    if filter
        .protocol_id
        .as_deref()
        .is_some_and(|id| !is_lower_hex_64(id))
    {
        anyhow::bail!("--protocol-id must be a 64-character lowercase protocol hash");
    }
    let list = remote.run(remote.client.browse(&filter))?;
    if args.json {
        print_json(&list);
    } else if args.oneline {
        list.results
            .iter()
            .for_each(|item| println!("{}", oneline(item)));
    } else {
        println!("Total: {}", list.total);
        for item in &list.results {
            println!(
                "{} [{}] {}",
                escape_control(&item.post_id),
                item.invitation_type.as_str(),
                escape_control(&item.message)
            );
            println!("  protocol_id: {}", escape_control(&item.protocol_id));
            println!("  public_key: {}", escape_control(&item.public_key));
            println!("  host_control_mode: {}", item.host_control_mode.as_str());
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn cancel(args: CancelArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let remote = Remote::connect(global)?;
    remote.run(remote.client.cancel_invitation(&args.post_id))?;
    if args.json {
        print_json(&json!({"post_id": args.post_id, "cancelled": true}));
    } else {
        println!("[OK] invitation cancelled");
    }
    Ok(ExitCode::SUCCESS)
}

/// `--tags a,b` (or the tags of `aigenora mcp`'s browse): trimmed, de-duplicated, checked
/// like the server checks them.
pub fn parse_tags(text: Option<&str>) -> anyhow::Result<Vec<String>> {
    let Some(text) = text else {
        return Ok(Vec::new());
    };
    let mut tags: Vec<String> = Vec::new();
    for tag in text.split(',').map(str::trim).filter(|tag| !tag.is_empty()) {
        if !tags.iter().any(|seen| seen == tag) {
            tags.push(tag.to_string());
        }
    }
    if tags.is_empty() {
        anyhow::bail!("--tags cannot be empty");
    }
    check_tags(&tags).map_err(|message| anyhow::anyhow!("--tags: {message}"))?;
    Ok(tags)
}

/// The reference's twelve `--oneline` columns (options are not part of list items), each
/// escaped (a tab or newline in a message cannot shift the columns).
fn oneline(item: &InvitationSummary) -> String {
    let text = |value: &Option<String>| value.clone().unwrap_or_default();
    [
        item.post_id.clone(),
        item.protocol_id.clone(),
        item.invitation_type.as_str().to_string(),
        item.message.clone(),
        item.tags.join(","),
        item.public_key.clone(),
        item.registered.to_string(),
        text(&item.nickname),
        item.agent_id.map(|id| id.to_string()).unwrap_or_default(),
        pricing(item.pricing.as_ref()),
        String::new(),
        item.host_control_mode.as_str().to_string(),
    ]
    .map(|column| escape_control(&column).into_owned())
    .join("\t")
}

/// `free`, `<amount> <currency>`, or the pricing model.
fn pricing(pricing: Option<&Value>) -> String {
    let Some(Value::Object(pricing)) = pricing else {
        return String::new();
    };
    let field = |key: &str| match pricing.get(key) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    if field("model") == "free" {
        return "free".into();
    }
    let shown = format!("{} {}", field("amount"), field("currency"))
        .trim()
        .to_string();
    if shown.is_empty() {
        field("model")
    } else {
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_trimmed_deduplicated_and_checked() {
        assert_eq!(
            parse_tags(Some(" game, rps,game")).unwrap(),
            vec!["game", "rps"]
        );
        assert!(parse_tags(Some(" , ")).is_err());
        assert!(parse_tags(Some("bad tag")).is_err());
        assert_eq!(parse_tags(None).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn pricing_text() {
        assert_eq!(pricing(Some(&json!({"model": "free"}))), "free");
        assert_eq!(
            pricing(Some(
                &json!({"model": "fixed", "amount": 5, "currency": "USD"})
            )),
            "5 USD"
        );
        assert_eq!(pricing(None), "");
    }
}

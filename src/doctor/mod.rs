//! Is this install ready to play, and if not, what fixes it? `doctor` checks the identity,
//! the embedded interpreter, the relay setting and (unless offline) the community server —
//! reachable, its version, whether this key is registered there, the relay it recommends —
//! each problem with the command that fixes it; [`bootstrap`] is the offline picture an
//! agent takes first (version, entry point, guide, data dir).

pub mod bootstrap;

use serde::Serialize;

use crate::client::RestClient;
use crate::identity::{Identity, load_key_file};
use crate::layout::DataDir;
use crate::terminal::escape_control;
use crate::transport::{RELAY_ENV_VAR, RelayChoice};

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Verdict {
    Ok,
    Problem,
    /// Not checked (offline, or an earlier check failed).
    Skipped,
}

/// One check: what it found and, for a problem, the command (or step) that fixes it.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub check: &'static str,
    pub verdict: Verdict,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Finding {
    fn ok(check: &'static str, detail: impl Into<String>) -> Finding {
        Finding {
            check,
            verdict: Verdict::Ok,
            detail: detail.into(),
            fix: None,
        }
    }

    fn problem(check: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding {
            check,
            verdict: Verdict::Problem,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    fn skipped(check: &'static str, detail: impl Into<String>) -> Finding {
        Finding {
            check,
            verdict: Verdict::Skipped,
            detail: detail.into(),
            fix: None,
        }
    }
}

/// What `doctor` looks at: the data dir and the `--server` flag, as the commands resolve them.
#[derive(Debug, Clone)]
pub struct Setup {
    pub data_dir: DataDir,
    pub server_flag: Option<String>,
}

/// Every check, in order; the server's only when not `offline`.
pub async fn doctor(setup: &Setup, offline: bool) -> Vec<Finding> {
    let (key, identity) = key(&setup.data_dir);
    let (relay, relay_choice) = relay_setting();
    let mut findings = vec![key, interpreter(), relay];
    let server = crate::config::resolve_server(setup.server_flag.as_deref(), &setup.data_dir);
    let url = match server {
        Ok(url) => url,
        Err(error) => {
            findings.push(Finding::problem(
                "server",
                error.to_string(),
                format!("fix or delete {} (or pass --server URL)", error.path),
            ));
            return findings;
        }
    };
    if offline {
        findings.push(Finding::skipped("server", format!("{url} (offline)")));
        return findings;
    }
    findings.extend(server_checks(&url, identity, relay_choice).await);
    findings
}

/// The identity in `key.json`.
pub fn key(data_dir: &DataDir) -> (Finding, Option<Identity>) {
    let path = data_dir.key_file();
    if !path.exists() {
        let detail = format!("no identity: {} does not exist", path.display());
        return (Finding::problem("key", detail, "aigenora init"), None);
    }
    match load_key_file(data_dir) {
        Ok(identity) => {
            let detail = format!("{} ({})", identity.public_key(), path.display());
            (Finding::ok("key", detail), Some(identity))
        }
        Err(error) => {
            let fix = "restore key.json from a backup, or `aigenora init --force` for a new \
                       identity (the old one is lost)";
            (Finding::problem("key", error.to_string(), fix), None)
        }
    }
}

/// The embedded interpreter that runs hooks.
pub fn interpreter() -> Finding {
    match crate::hooks::interpreter::describe() {
        Ok(info) => Finding::ok("python", format!("Python {} ({})", info.version, info.home)),
        Err(error) => Finding::problem(
            "python",
            error,
            "set PYTHONHOME to the home of the Python this binary was built with, or rebuild \
             aigenora against the Python installed here",
        ),
    }
}

/// `$AIGENORA_RELAY`, when set: it must parse, and it overrides the server's recommendation.
pub fn relay_setting() -> (Finding, Option<RelayChoice>) {
    let Ok(text) = std::env::var(RELAY_ENV_VAR) else {
        let detail = format!("{RELAY_ENV_VAR} unset: the relay the server recommends, else n0's");
        return (Finding::ok("relay", detail), None);
    };
    match text.parse::<RelayChoice>() {
        Ok(choice) => {
            let detail = format!("{RELAY_ENV_VAR}={}", escape_control(&text));
            (Finding::ok("relay", detail), Some(choice))
        }
        Err(error) => {
            let fix = format!("unset {RELAY_ENV_VAR}, or set it to default, disabled or a URL");
            (Finding::problem("relay", error.to_string(), fix), None)
        }
    }
}

/// The server answers `/version`; this key is registered there; a custom relay (ours, or the
/// one the server recommends) answers its ping.
async fn server_checks(
    url: &str,
    identity: Option<Identity>,
    relay: Option<RelayChoice>,
) -> Vec<Finding> {
    let registered_identity = identity.is_some();
    let client = match RestClient::new(url, identity.unwrap_or_else(Identity::generate)) {
        Ok(client) => client,
        Err(error) => {
            let fix = "pass --server http(s)://HOST[:PORT] or set AIGENORA_SERVER";
            return vec![Finding::problem("server", error.to_string(), fix)];
        }
    };
    let info = match client.version().await {
        Ok(info) => info,
        Err(error) => {
            let fix = format!(
                "start a server (`aigenora server`), or name a running one with --server URL \
                 or AIGENORA_SERVER (now {url})"
            );
            return vec![Finding::problem("server", error.to_string(), fix)];
        }
    };
    let recommended = info.as_ref().and_then(|info| info.relay_url.clone());
    let detail = match &info {
        Some(info) => format!(
            "{url}: {} {}",
            escape_control(&info.server),
            escape_control(&info.server_version)
        ),
        None => format!("{url}: reachable (no /version: an older server)"),
    };
    let mut findings = vec![Finding::ok("server", detail)];
    findings.push(if registered_identity {
        registration(&client).await
    } else {
        Finding::skipped("registered", "no identity yet")
    });
    findings.push(relay_reachable(relay, recommended.as_deref()).await);
    findings
}

async fn registration(client: &RestClient) -> Finding {
    match client.agent(client.identity().public_key()).await {
        Ok(Some(agent)) => Finding::ok(
            "registered",
            format!("as {}", escape_control(&agent.nickname)),
        ),
        Ok(None) => Finding::problem(
            "registered",
            "this key is not registered on the server",
            "aigenora register --nickname NAME",
        ),
        Err(error) => Finding::problem(
            "registered",
            error.to_string(),
            "run `aigenora doctor` again; if it persists, the server is refusing this key",
        ),
    }
}

/// Probes the relay sessions would use when it is a custom one.
async fn relay_reachable(setting: Option<RelayChoice>, recommended: Option<&str>) -> Finding {
    let choice = match setting {
        Some(choice) => choice,
        None => match RelayChoice::recommended(recommended) {
            Ok(choice) => choice,
            Err(error) => {
                let fix = format!("set {RELAY_ENV_VAR}=default (or a relay URL you trust)");
                return Finding::problem("relay_reachable", error.to_string(), fix);
            }
        },
    };
    let RelayChoice::Custom(url) = &choice else {
        let detail = match choice {
            RelayChoice::Disabled => "relays disabled: direct addresses only",
            _ => "n0's public relays",
        };
        return Finding::ok("relay_reachable", detail);
    };
    match crate::transport::probe_relay(url).await {
        Ok(()) => Finding::ok("relay_reachable", format!("{url} answers")),
        Err(error) => Finding::problem(
            "relay_reachable",
            error,
            format!("check that relay is running, or set {RELAY_ENV_VAR}=default"),
        ),
    }
}

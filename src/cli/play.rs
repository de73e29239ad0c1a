//! `aigenora host`, `aigenora join` and `aigenora guest`: play a session over iroh.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Map, Value};

use super::GlobalArgs;
use super::daemon::{self, Waiting};
use crate::client::RestClient;
use crate::config::{resolve_data_dir, resolve_server};
use crate::data_dir::DataDir;
use crate::engine::ControlMode;
use crate::hooks::skeleton;
use crate::identity::load_key_file;
use crate::records::SessionStatus;
use crate::session::{self, PlaySettings, Protocol, SessionDir, SessionEnd, SessionError};
use crate::spec::{self, Role, Spec};
use crate::transport::{HeartbeatConfig, RELAY_ENV_VAR, RelayChoice, Ticket};

/// How this side plays (shared by host, join and guest).
#[derive(Debug, Clone, Args)]
pub struct PlayArgs {
    /// Who decides this side's moves.
    #[arg(long, value_enum, default_value_t = ControlMode::Hybrid)]
    pub control_mode: ControlMode,
    /// Seconds to sleep between steps.
    #[arg(long, default_value_t = 0.0, value_name = "SECONDS")]
    pub pace: f64,
    /// Seconds between `_sys` pings (0 disables them), as the reference: default 10.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub heartbeat_interval: f64,
    /// Seconds of silence before `peer_unresponsive` (0: three intervals).
    #[arg(long, default_value_t = 30.0, value_name = "SECONDS")]
    pub heartbeat_timeout: f64,
    /// iroh relays: default (n0's), disabled (direct addresses only), or a relay URL.
    #[arg(long, env = RELAY_ENV_VAR, default_value = "default", value_name = "default|disabled|URL")]
    pub relay: RelayChoice,
    /// Run hooks even if hooks.py is an unfilled skeleton (testing only).
    #[arg(long)]
    pub allow_skeleton_hooks: bool,
}

impl PlayArgs {
    fn settings(&self) -> anyhow::Result<PlaySettings> {
        if !(0.0..=3600.0).contains(&self.pace) {
            bail!("--pace must be between 0 and 3600 seconds");
        }
        if !self.heartbeat_interval.is_finite()
            || !self.heartbeat_timeout.is_finite()
            || self.heartbeat_interval < 0.0
        {
            bail!("--heartbeat-interval and --heartbeat-timeout must be non-negative numbers");
        }
        Ok(PlaySettings {
            control_mode: self.control_mode,
            pace: Duration::from_secs_f64(self.pace),
            heartbeat: HeartbeatConfig::from_seconds(
                self.heartbeat_interval,
                self.heartbeat_timeout,
            ),
            relay: self.relay.clone(),
            display: Arc::new(|_, text| println!("{text}")),
            chat_from_stdin: true,
        })
    }
}

/// How to run in the background.
#[derive(Debug, Clone, Args)]
pub struct DaemonArgs {
    /// Start in the background and print one JSON line once the session is under way.
    #[arg(long)]
    pub daemon: bool,
    /// (internal) the session dir a daemon child writes to.
    #[arg(long, hide = true, value_name = "DIR")]
    pub internal_session_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct HostArgs {
    /// The protocol: a directory with spec.json and hooks.py, or a built-in alias.
    #[arg(long, value_name = "DIR|ALIAS")]
    pub protocol_dir: String,
    /// Options (a JSON object); default: the hooks' own default options.
    #[arg(long, value_name = "JSON")]
    pub options: Option<String>,
    #[command(flatten)]
    pub play: PlayArgs,
    #[command(flatten)]
    pub daemon: DaemonArgs,
    /// Stop renewing the invitation after this many minutes in total.
    #[arg(long, default_value_t = 30, value_name = "N")]
    pub invitation_ttl_minutes: u64,
    /// Never renew the invitation (it expires after 300 s).
    #[arg(long)]
    pub no_invitation_renew: bool,
    /// (testing) seconds between renewals instead of 120.
    #[arg(long, hide = true, value_name = "SECONDS")]
    pub renew_interval_seconds: Option<u64>,
}

#[derive(Debug, Args)]
pub struct JoinArgs {
    /// The invitation to join (see `aigenora browse`).
    pub post_id: String,
    #[command(flatten)]
    pub play: PlayArgs,
    #[command(flatten)]
    pub daemon: DaemonArgs,
}

#[derive(Debug, Args)]
pub struct GuestArgs {
    /// The protocol directory (spec.json + hooks.py) or a built-in alias.
    #[arg(long, value_name = "DIR|ALIAS")]
    pub protocol_dir: String,
    /// The host's iroh ticket (`node…`).
    #[arg(long, value_name = "TICKET")]
    pub iroh_ticket: String,
    /// Options (a JSON object).
    #[arg(long, value_name = "JSON")]
    pub options: Option<String>,
    #[command(flatten)]
    pub play: PlayArgs,
}

/// The data dir, a protocol argument made ready to run (resolved, gated, not a skeleton),
/// and options checked against it: what `host` and `guest` need before anything else.
fn local_play(
    global: &GlobalArgs,
    argument: &str,
    options: Option<&str>,
    play: &PlayArgs,
) -> anyhow::Result<(DataDir, Protocol, Map<String, Value>)> {
    let data_dir = DataDir::new(resolve_data_dir(global.data_dir.as_deref()));
    let dir = crate::protocols::resolve(argument, data_dir.root()).map_err(anyhow::Error::msg)?;
    let spec = Spec::load_checked(&dir.join("spec.json"))?;
    skeleton::ensure_implemented(&dir, play.allow_skeleton_hooks).map_err(anyhow::Error::msg)?;
    let options = spec::parse_options(options)?;
    spec::validate_options(spec.value(), &options).context("options")?;
    Ok((data_dir, Protocol { dir, spec }, options))
}

fn client_for(global: &GlobalArgs, data_dir: &DataDir) -> anyhow::Result<RestClient> {
    let identity = load_key_file(data_dir.root())?;
    let server = resolve_server(global.server.as_deref(), data_dir.root())?;
    Ok(RestClient::new(&server, identity)?)
}

fn session_dir(daemon: &DaemonArgs, data_dir: &DataDir, role: Role) -> anyhow::Result<SessionDir> {
    match &daemon.internal_session_dir {
        Some(dir) => Ok(SessionDir::open(dir)),
        None => SessionDir::create(data_dir.root(), role).context("creating the session dir"),
    }
}

pub fn host(args: HostArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let (data_dir, protocol, options) = local_play(
        global,
        &args.protocol_dir,
        args.options.as_deref(),
        &args.play,
    )?;
    let client = client_for(global, &data_dir)?;
    let settings = args.play.settings()?;
    let dir = session_dir(&args.daemon, &data_dir, Role::Host)?;
    if args.daemon.daemon {
        return daemon::start(&dir, Waiting::Invitation);
    }
    let request = session::host::HostRequest {
        client: client.clone(),
        protocol,
        options,
        settings,
        session_dir: dir.clone(),
        renew_for: (!args.no_invitation_renew)
            .then(|| Duration::from_secs(args.invitation_ttl_minutes * 60)),
        renew_every: args
            .renew_interval_seconds
            .map_or(session::host::RENEW_EVERY, Duration::from_secs),
        on_invited: None,
    };
    let ended = daemon::run_until_signal(&dir, session::host::host(request));
    if ended.is_err() {
        withdraw_if_unmatched(&client, &dir);
    }
    finish(ended)
}

/// A host stopped (`session abort`, Ctrl-C) before any guest joined withdraws its
/// invitation, so nobody tries to dial a host that is gone.
fn withdraw_if_unmatched(client: &RestClient, dir: &SessionDir) {
    let record = dir.read();
    let (Some(post_id), None, Some(SessionStatus::Aborted)) =
        (&record.post_id, &record.session_id, record.status)
    else {
        return;
    };
    if let Ok(runtime) = tokio::runtime::Runtime::new()
        && let Err(error) = runtime.block_on(client.cancel_invitation(post_id))
    {
        let warning = format!("warning: could not withdraw invitation {post_id}: {error}");
        eprintln!("{}", crate::terminal::escape_control(&warning));
    }
}

pub fn join(args: JoinArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let data_dir = DataDir::new(resolve_data_dir(global.data_dir.as_deref()));
    let client = client_for(global, &data_dir)?;
    let settings = args.play.settings()?;
    let dir = session_dir(&args.daemon, &data_dir, Role::Guest)?;
    if args.daemon.daemon {
        return daemon::start(&dir, Waiting::Peer);
    }
    let request = session::join::JoinRequest {
        client,
        data_dir,
        post_id: args.post_id,
        settings,
        session_dir: dir.clone(),
        allow_skeleton: args.play.allow_skeleton_hooks,
    };
    finish(daemon::run_until_signal(&dir, session::join::join(request)))
}

pub fn guest(args: GuestArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let (data_dir, protocol, options) = local_play(
        global,
        &args.protocol_dir,
        args.options.as_deref(),
        &args.play,
    )?;
    let ticket: Ticket = args.iroh_ticket.parse()?;
    let mut settings = args.play.settings()?;
    settings.heartbeat = None;
    let dir =
        SessionDir::create(data_dir.root(), Role::Guest).context("creating the session dir")?;
    finish(daemon::run_until_signal(
        &dir,
        session::direct::guest(protocol, ticket, options, settings, dir.clone()),
    ))
}

/// Exit 0 for a completed session, 1 otherwise (the reason goes to stderr).
fn finish(ended: Result<SessionEnd, SessionError>) -> anyhow::Result<ExitCode> {
    let end = ended?;
    match &end.result {
        Ok(outcome) if outcome.completed => Ok(ExitCode::SUCCESS),
        Ok(outcome) => bail!(
            "session ended without completing ({}); see {}",
            outcome.reason.as_deref().unwrap_or("the hooks ended it"),
            end.session_dir.display()
        ),
        Err(error) => bail!("{error} (session dir {})", end.session_dir.display()),
    }
}

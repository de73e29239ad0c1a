//! `aigenora host`, `aigenora join` and `aigenora guest`: play a session over iroh.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;

use super::GlobalArgs;
use super::daemon::{self, Waiting};
use super::remote::Remote;
use crate::client::RestClient;
use crate::config::resolve_server;
use crate::control::room::console::Console;
use crate::hooks::skeleton;
use crate::identity::{is_lower_hex_64, load_key_file};
use crate::layout::{DataDir, SessionDir};
use crate::protocols::well_known;
use crate::records::SessionStatus;
use crate::session::{
    self, PlaySettings, Protocol, ProtocolSource, SessionEnd, SessionError, SessionRecorder,
};
use crate::spec::ControlMode;
use crate::spec::{self, CheckedOptions, Role, Spec};
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
    /// Default for host and join: the relay the server recommends, else n0's.
    #[arg(long, env = RELAY_ENV_VAR, value_name = "default|disabled|URL")]
    pub relay: Option<RelayChoice>,
    /// Run hooks even if hooks.py is an unfilled skeleton (testing only).
    #[arg(long)]
    pub allow_skeleton_hooks: bool,
    /// Seconds each decision window of this side waits for a person. Default: for human
    /// control the options' max_think_seconds, else the spec's decision.timeout_seconds,
    /// else 60; for hybrid control 10 when a person watches (terminal or --web), else 0.
    #[arg(long, value_name = "SECONDS")]
    pub think_seconds: Option<f64>,
    /// Never ask at this terminal, even when stdin is one (decide with `session decide`
    /// or the browser instead).
    #[arg(long)]
    pub no_prompt: bool,
    /// Serve the browser controller for this session on 127.0.0.1 (its address, with a
    /// token, is printed as `controller: URL` and kept in the session dir).
    #[arg(long)]
    pub web: bool,
    /// The longest this side waits for the peer's next frame: the spec's think time plus a
    /// margin, never more than this (a silent peer then ends the session, `peer_timeout`).
    #[arg(long, default_value_t = crate::engine::DEFAULT_PEER_TIMEOUT.as_secs_f64(), value_name = "SECONDS")]
    pub peer_timeout: f64,
}

/// This process's side as its front end sees it: the desk, once the engine has made one (a
/// terminal prompt runs on it; an abort closes its windows), and a room's terminal, once
/// the side is in a room.
#[derive(Clone, Default)]
pub(super) struct SideDesk(
    Arc<std::sync::OnceLock<Arc<crate::decision::Desk>>>,
    Arc<std::sync::OnceLock<Arc<Console>>>,
);

impl SideDesk {
    /// Closes the side's open window, if any, and lets no other open (the process is
    /// ending).
    pub(super) fn cancel(&self, why: &str) {
        if let Some(desk) = self.0.get() {
            desk.cancel(why);
        }
    }

    /// Shows a room's last steps on its terminal before the process exits.
    fn room_caught_up(&self) {
        if let Some(console) = self.1.get() {
            console.catch_up();
        }
    }
}

impl PlayArgs {
    /// The play settings, and the side's desk as the front end will hold it.
    fn settings(&self) -> anyhow::Result<(PlaySettings, SideDesk)> {
        if !(0.0..=3600.0).contains(&self.pace) {
            bail!("--pace must be between 0 and 3600 seconds");
        }
        if !self.heartbeat_interval.is_finite()
            || !self.heartbeat_timeout.is_finite()
            || self.heartbeat_interval < 0.0
        {
            bail!("--heartbeat-interval and --heartbeat-timeout must be non-negative numbers");
        }
        let think = match self.think_seconds {
            Some(seconds) if !(0.0..=86_400.0).contains(&seconds) => {
                bail!("--think-seconds must be between 0 and 86400")
            }
            Some(seconds) => Some(Duration::from_secs_f64(seconds)),
            None => None,
        };
        if !(1.0..=86_400.0).contains(&self.peer_timeout) {
            bail!("--peer-timeout must be between 1 and 86400 seconds");
        }
        use std::io::IsTerminal;
        let terminal_prompt = self.control_mode != ControlMode::Autonomous
            && !self.no_prompt
            && std::io::stdin().is_terminal();
        let desk = SideDesk::default();
        let on_desk: crate::session::OnDesk = {
            let desk = desk.clone();
            Arc::new(move |made| {
                let _ = desk.0.set(made.clone());
                if terminal_prompt {
                    crate::control::terminal::start(made);
                }
            })
        };
        let settings = PlaySettings {
            think,
            attended: terminal_prompt || self.web,
            on_desk: Some(on_desk),
            control_mode: self.control_mode,
            pace: Duration::from_secs_f64(self.pace),
            heartbeat: HeartbeatConfig::from_seconds(
                self.heartbeat_interval,
                self.heartbeat_timeout,
            ),
            relay: self.relay.clone().unwrap_or_default(),
            display: Arc::new(|_, text| println!("{}", crate::terminal::escape_display(text))),
            chat_from_stdin: true,
            on_room: (self.control_mode != ControlMode::Autonomous).then(|| {
                let consoles = desk.1.clone();
                let on_room: crate::session::OnRoom = Arc::new(move |root| {
                    let _ = consoles.set(Console::start(root.clone()));
                });
                on_room
            }),
            peer_timeout: Duration::from_secs_f64(self.peer_timeout),
        };
        Ok((settings, desk))
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
    /// The protocol: a directory with spec.json and hooks.py, a built-in alias, or a
    /// contract of the library by protocol_id or well-known alias.
    #[arg(long, value_name = "DIR|ALIAS", required_unless_present = "protocol")]
    pub protocol_dir: Option<String>,
    /// The protocol by its protocol_id, or a well-known contract by its alias (e.g.
    /// connect4-v1): the spec comes from the library or the server (hash checked), the hooks
    /// are ours for a well-known contract, else the library's.
    #[arg(long, value_name = "ID|ALIAS", conflicts_with_all = ["protocol_dir", "direct"])]
    pub protocol: Option<String>,
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
    /// Publish nothing: print the ticket and play the first guest that dials it with
    /// `aigenora guest --iroh-ticket`, with no server and no session handshake.
    #[arg(long, conflicts_with = "daemon")]
    pub direct: bool,
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
    /// The protocol directory (spec.json + hooks.py), a built-in alias, or a contract of
    /// the library by protocol_id or well-known alias.
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

/// What `host` and `guest` need before anything else: the data dir, a protocol made ready
/// to run (resolved, gated, not a skeleton) and options checked against it.
struct Ready {
    data_dir: DataDir,
    protocol: Protocol,
    options: CheckedOptions,
    /// Where the protocol came from, when it was prepared by id (`host --protocol`).
    source: Option<ProtocolSource>,
}

/// A protocol directory or built-in alias made ready.
fn local_play(
    global: &GlobalArgs,
    argument: &str,
    options: Option<&str>,
    play: &PlayArgs,
    leads_rooms: bool,
) -> anyhow::Result<Ready> {
    let data_dir = global.data_dir();
    let dir = crate::protocols::resolve(argument, &data_dir).map_err(anyhow::Error::msg)?;
    let spec = Spec::load_checked(&dir.join("spec.json"))?;
    if !(leads_rooms && spec.capabilities().room) {
        spec.ensure_runnable()
            .map_err(|error| anyhow::anyhow!("{error} ({})", dir.join("spec.json").display()))?;
    }
    skeleton::ensure_implemented(&dir, play.allow_skeleton_hooks).map_err(anyhow::Error::msg)?;
    let options =
        CheckedOptions::check(spec.value(), spec::parse_options(options)?).context("options")?;
    Ok(Ready {
        data_dir,
        protocol: Protocol { dir, spec },
        options,
        source: None,
    })
}

/// `--relay` (or `$AIGENORA_RELAY`) when given, else the relay the server recommends, else
/// n0's.
fn choose_relay(play: &PlayArgs, client: &RestClient) -> anyhow::Result<RelayChoice> {
    if let Some(choice) = &play.relay {
        return Ok(choice.clone());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let info = runtime
        .block_on(client.version())
        .context("asking the server which relay to use")?;
    let recommended = info.and_then(|info| info.relay_url);
    Ok(RelayChoice::recommended(recommended.as_deref())?)
}

fn client_for(global: &GlobalArgs, data_dir: &DataDir) -> anyhow::Result<RestClient> {
    let identity = load_key_file(data_dir)?;
    let server = resolve_server(global.server.as_deref(), data_dir)?;
    Ok(RestClient::new(&server, identity)?)
}

fn session_dir(
    daemon: &DaemonArgs,
    data_dir: &DataDir,
    role: Role,
) -> anyhow::Result<SessionRecorder> {
    match &daemon.internal_session_dir {
        Some(dir) => Ok(SessionRecorder::open(SessionDir::open(dir))),
        None => SessionRecorder::create(data_dir, role).context("creating the session dir"),
    }
}

/// `host --protocol`: a protocol known by id (or well-known alias), made ready the way `join`
/// makes it ready.
fn remote_play(
    global: &GlobalArgs,
    id_or_alias: &str,
    options: Option<&str>,
    play: &PlayArgs,
    room: session::RoomPart,
) -> anyhow::Result<Ready> {
    let protocol_id = match well_known::find(id_or_alias) {
        Some(entry) => entry.protocol_id,
        None if is_lower_hex_64(id_or_alias) => id_or_alias,
        None => bail!(
            "--protocol takes a protocol_id (64 hex characters) or a well-known alias ({})",
            well_known::WELL_KNOWN
                .iter()
                .map(|entry| entry.alias)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let remote = Remote::connect(global)?;
    let prepared = remote.run(session::prepare_protocol(
        &remote.client,
        &remote.data_dir,
        protocol_id,
        play.allow_skeleton_hooks,
        room,
    ))?;
    let options = CheckedOptions::check(prepared.spec.value(), spec::parse_options(options)?)
        .context("options")?;
    Ok(Ready {
        data_dir: remote.data_dir,
        protocol: Protocol {
            dir: prepared.dir,
            spec: prepared.spec,
        },
        options,
        source: Some(prepared.source),
    })
}

pub fn host(args: HostArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let options = args.options.as_deref();
    let Ready {
        data_dir,
        protocol,
        options,
        source,
    } = match (&args.protocol, &args.protocol_dir) {
        (Some(id_or_alias), _) => {
            let room = match args.direct {
                true => session::RoomPart::None,
                false => session::RoomPart::Leader,
            };
            remote_play(global, id_or_alias, options, &args.play, room)?
        }
        (None, Some(dir)) => local_play(global, dir, options, &args.play, !args.direct)?,
        (None, None) => bail!("give --protocol-dir or --protocol"),
    };
    let (mut settings, desk) = args.play.settings()?;
    let dir = session_dir(&args.daemon, &data_dir, Role::Host)?;
    if args.direct {
        start_web(&args.play, &dir)?;
        let hosting = session::direct::host(protocol, options, settings, dir.clone());
        let ended = daemon::run_until_signal(&dir, &desk, hosting);
        let_pages_see_the_end(&args.play);
        return finish(ended);
    }
    let client = client_for(global, &data_dir)?;
    if args.daemon.daemon {
        return daemon::start(&dir, Waiting::Invitation);
    }
    settings.relay = choose_relay(&args.play, &client)?;
    start_web(&args.play, &dir)?;
    if protocol.spec.capabilities().room {
        let window_times = settings.window_times(&protocol.spec, options.as_map());
        let leading = session::room::host::RoomHost {
            client: client.clone(),
            protocol,
            source,
            options,
            relay: settings.relay.clone(),
            display: settings.display.clone(),
            control_mode: settings.control_mode,
            window_times,
            on_room: settings.on_room.clone(),
            session_dir: dir.clone(),
        };
        let ended = daemon::run_until_signal(&dir, &desk, leading.run());
        desk.room_caught_up();
        if ended.is_err() {
            withdraw_if_unmatched(&client, &dir);
        }
        let_pages_see_the_end(&args.play);
        return finish(ended);
    }
    let request = session::host::HostRequest {
        client: client.clone(),
        protocol,
        source,
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
    let ended = daemon::run_until_signal(&dir, &desk, session::host::host(request));
    if ended.is_err() {
        withdraw_if_unmatched(&client, &dir);
    }
    let_pages_see_the_end(&args.play);
    finish(ended)
}

/// With `--web`, serves the browser controller for this session from a thread of its own;
/// its address goes to stdout and to `controller.url` (mode 0600: it carries the token).
fn start_web(play: &PlayArgs, dir: &SessionRecorder) -> anyhow::Result<()> {
    if !play.web {
        return Ok(());
    }
    let url = crate::control::web::serve_in_background(dir.dir().clone())
        .context("starting the browser controller")?;
    let url_file = dir.root().join(crate::control::web::URL_FILE);
    crate::layout::write_atomic(&url_file, url.as_bytes()).context("writing controller.url")?;
    // The token is a secret: only a person's terminal sees it, never a log (a daemon's
    // stdout is daemon.out.log).
    if std::io::stdout().is_terminal() {
        println!("controller: {url}");
    } else {
        let address = url.split('#').next().unwrap_or_default();
        println!(
            "controller: {address} (its token is in {}, readable by you only)",
            url_file.display()
        );
    }
    Ok(())
}

/// With `--web`, gives a page still following the session up to 5 s to receive its end
/// (and close its stream) before the process (and its controller) exits.
fn let_pages_see_the_end(play: &PlayArgs) {
    if play.web {
        crate::control::web::linger(Duration::from_secs(5));
    }
}

/// A host stopped (`session abort`, Ctrl-C) before any guest joined withdraws its
/// invitation, so nobody tries to dial a host that is gone.
fn withdraw_if_unmatched(client: &RestClient, dir: &SessionRecorder) {
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
    let data_dir = global.data_dir();
    let client = client_for(global, &data_dir)?;
    let (mut settings, desk) = args.play.settings()?;
    let dir = session_dir(&args.daemon, &data_dir, Role::Guest)?;
    if args.daemon.daemon {
        return daemon::start(&dir, Waiting::Peer);
    }
    settings.relay = choose_relay(&args.play, &client)?;
    start_web(&args.play, &dir)?;
    let request = session::join::JoinRequest {
        client,
        data_dir,
        post_id: args.post_id,
        settings,
        session_dir: dir.clone(),
        allow_skeleton: args.play.allow_skeleton_hooks,
    };
    let ended = daemon::run_until_signal(&dir, &desk, session::join::join(request));
    desk.room_caught_up();
    let_pages_see_the_end(&args.play);
    finish(ended)
}

pub fn guest(args: GuestArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let Ready {
        data_dir,
        protocol,
        options,
        ..
    } = local_play(
        global,
        &args.protocol_dir,
        args.options.as_deref(),
        &args.play,
        false,
    )?;
    let ticket: Ticket = args.iroh_ticket.parse()?;
    let (mut settings, desk) = args.play.settings()?;
    settings.heartbeat = None;
    let dir =
        SessionRecorder::create(&data_dir, Role::Guest).context("creating the session dir")?;
    start_web(&args.play, &dir)?;
    let ended = daemon::run_until_signal(
        &dir,
        &desk,
        session::direct::guest(protocol, ticket, options, settings, dir.clone()),
    );
    let_pages_see_the_end(&args.play);
    finish(ended)
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

//! `aigenora demo`: the whole product in one command, offline. An embedded community server
//! on a free loopback port with a fresh SQLite database, two new identities (alice hosts,
//! bob joins), a built-in protocol (or a contract of the library) played over real iroh on
//! loopback, then the result and where everything was written.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use clap::Args;

use super::GlobalArgs;
use crate::api::protocol::NewProtocol;
use crate::client::RestClient;
use crate::hooks::skeleton;
use crate::identity::create_key_file;
use crate::layout::DataDir;
use crate::protocols::Located;
use crate::server::{ServerConfig, serve, sqlite_url};
use crate::session::{self, PlaySettings, Protocol, SessionEnd, SessionRecorder};
use crate::spec::ControlMode;
use crate::spec::{self, Role};
use crate::transport::RelayChoice;

/// The demo's server lives for one game on loopback with two agents of its own: a proof of
/// work would protect nothing there and only delay the game.
const DEMO_POW_DIFFICULTY: u8 = 1;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// The protocol to play: a built-in alias, a protocol directory, or a contract of the
    /// library by protocol_id or well-known alias (`rps-v1`).
    #[arg(long, default_value = "rock-paper-scissors", value_name = "NAME")]
    pub protocol: String,
    /// Options for the host (a JSON object).
    #[arg(
        long,
        value_name = "JSON",
        default_value = r#"{"best_of": 5, "termination": "first_to_win"}"#
    )]
    pub options: String,
    /// Where to put the demo's data dirs and database (default: a new dir under $TMPDIR).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

/// The protocol the demo plays, with its files (the spec and the hooks both agents run).
struct DemoProtocol {
    spec: spec::Spec,
    files: [(&'static str, Vec<u8>); 2],
    source: session::ProtocolSource,
}

impl DemoProtocol {
    fn locate(argument: &str, global: &GlobalArgs) -> anyhow::Result<DemoProtocol> {
        let dir = match crate::protocols::locate(argument, &global.data_dir())
            .map_err(anyhow::Error::msg)?
        {
            Located::Builtin(builtin) if builtin.spec().capabilities().room => {
                bail!(
                    "{} is a room; the demo plays two-sided sessions only (play the room by \
                     itself with `aigenora protocol test {}`)",
                    builtin.alias,
                    builtin.alias
                )
            }
            Located::Builtin(builtin) => {
                return Ok(DemoProtocol {
                    spec: builtin.spec(),
                    files: [
                        ("spec.json", builtin.spec_json.as_bytes().to_vec()),
                        ("hooks.py", builtin.hooks_py.as_bytes().to_vec()),
                    ],
                    source: session::ProtocolSource::Builtin,
                });
            }
            Located::Dir(dir) => dir,
        };
        let spec = spec::Spec::load_runnable(&dir.join("spec.json"))?;
        skeleton::ensure_implemented(&dir, false).map_err(anyhow::Error::msg)?;
        let read = |name: &'static str| {
            let path = dir.join(name);
            std::fs::read(&path)
                .with_context(|| format!("reading {}", path.display()))
                .map(|bytes| (name, bytes))
        };
        Ok(DemoProtocol {
            spec,
            files: [read("spec.json")?, read("hooks.py")?],
            source: session::ProtocolSource::Library,
        })
    }

    /// Writes the protocol into an agent's library (both play from their own copy).
    fn install(&self, data_dir: &DataDir) -> anyhow::Result<PathBuf> {
        let dir = data_dir.protocol_dir(&self.spec.protocol_id());
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        for (name, bytes) in &self.files {
            let path = dir.join(name);
            std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(dir)
    }
}

pub fn run(args: DemoArgs, global: &GlobalArgs) -> anyhow::Result<ExitCode> {
    let protocol = DemoProtocol::locate(&args.protocol, global)?;
    let options = spec::CheckedOptions::check(
        protocol.spec.value(),
        spec::parse_options(Some(&args.options))?,
    )
    .context("options")?;
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    let root = args
        .root
        .unwrap_or_else(|| std::env::temp_dir().join(format!("aigenora-demo-{stamp}")));
    std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
    let runtime = tokio::runtime::Runtime::new()?;
    let started = Instant::now();
    let (host_end, guest_end, server_url) = runtime.block_on(play(&root, &protocol, options))?;
    println!();
    println!(
        "=== demo summary ({:.2} s) ===",
        started.elapsed().as_secs_f64()
    );
    println!(
        "community server: {server_url} (database {})",
        root.join("server.sqlite3").display()
    );
    for (who, end) in [("alice (host)", &host_end), ("bob (guest)", &guest_end)] {
        let verdict = match &end.result {
            Ok(outcome) => format!(
                "completed: {}, winner: {}",
                outcome.completed,
                outcome.winner.map_or("none", |w| w.as_str())
            ),
            Err(error) => format!("failed: {error}"),
        };
        println!(
            "{who}: {verdict}; session dir {}",
            end.session_dir.display()
        );
    }
    println!("session id: {}", host_end.session_id);
    if !(host_end.completed() && guest_end.completed()) {
        bail!("the demo session did not complete on both sides");
    }
    Ok(ExitCode::SUCCESS)
}

async fn play(
    root: &std::path::Path,
    demo: &DemoProtocol,
    options: spec::CheckedOptions,
) -> anyhow::Result<(SessionEnd, SessionEnd, String)> {
    let listen: SocketAddr = "127.0.0.1:0".parse().expect("a socket address");
    let mut config = ServerConfig::new(listen, sqlite_url(&root.join("server.sqlite3")));
    config.pow_difficulty = DEMO_POW_DIFFICULTY;
    let server = serve(config).await?;
    let url = server.url();
    println!("community server listening on {url}");
    let [alice, bob] = [
        agent(root, "alice", &url).await?,
        agent(root, "bob", &url).await?,
    ];
    if demo.source != session::ProtocolSource::Builtin {
        // The server seeds only our built-ins; bob plays the library's hooks from his copy.
        alice
            .0
            .register_protocol(&NewProtocol::for_spec(&demo.spec))
            .await?;
        demo.install(&bob.1)?;
    }
    let protocol = Protocol {
        dir: demo.install(&alice.1)?,
        spec: demo.spec.clone(),
    };
    let (invited_tx, invited_rx) = tokio::sync::oneshot::channel();
    let host = session::host::host(session::host::HostRequest {
        client: alice.0,
        protocol,
        source: Some(demo.source),
        options,
        settings: settings("alice"),
        session_dir: SessionRecorder::create(&alice.1, Role::Host)?,
        renew_for: Some(Duration::from_secs(1800)),
        renew_every: session::host::RENEW_EVERY,
        on_invited: Some(invited_tx),
    });
    let guest = async {
        let Ok(post_id) = invited_rx.await else {
            bail!("the host stopped before publishing its invitation");
        };
        let session_dir = SessionRecorder::create(&bob.1, Role::Guest)?;
        let joined = session::join::join(session::join::JoinRequest {
            client: bob.0,
            data_dir: bob.1,
            post_id,
            settings: settings("bob"),
            session_dir,
            allow_skeleton: false,
        })
        .await;
        anyhow::Ok(joined?)
    };
    let (host_end, guest_end) = tokio::join!(host, guest);
    server.shutdown().await?;
    Ok((host_end?, guest_end?, url))
}

/// A fresh identity with its own data dir, registered on the server.
async fn agent(
    root: &std::path::Path,
    name: &str,
    server: &str,
) -> anyhow::Result<(RestClient, DataDir)> {
    let data_dir = DataDir::new(root.join(name));
    let (identity, _) = create_key_file(&data_dir, false)?;
    let client = RestClient::new(server, identity)?;
    client
        .register(name, &format!("{name} from aigenora demo"))
        .await?;
    println!("{name}: registered {}", client.identity().public_key());
    Ok((client, data_dir))
}

/// Offline play: relays disabled, loopback only; every line prefixed with who printed it.
fn settings(name: &'static str) -> PlaySettings {
    PlaySettings {
        control_mode: ControlMode::Autonomous,
        pace: Duration::ZERO,
        heartbeat: crate::transport::HeartbeatConfig::from_seconds(10.0, 30.0),
        relay: RelayChoice::Disabled,
        display: Arc::new(move |role, text| {
            for line in text.lines() {
                println!("[{name}/{role}] {}", crate::terminal::escape_display(line));
            }
        }),
        chat_from_stdin: false,
        on_room: None,
        think: None,
        attended: false,
        on_desk: None,
        peer_timeout: crate::engine::DEFAULT_PEER_TIMEOUT,
    }
}

//! `aigenora demo`: the whole product in one command, offline. An embedded community server
//! on a free loopback port with a fresh SQLite database, two new identities (alice hosts,
//! bob joins), a built-in protocol played over real iroh on loopback, then the result and
//! where everything was written.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Map, Value};

use crate::client::RestClient;
use crate::data_dir::DataDir;
use crate::identity::create_key_file;
use crate::server::{ServerConfig, serve, sqlite_url};
use crate::session::{self, PlaySettings, Protocol, SessionDir, SessionEnd};
use crate::spec::ControlMode;
use crate::spec::{self, Role};
use crate::transport::RelayChoice;

/// The demo's server lives for one game on loopback with two agents of its own: a proof of
/// work would protect nothing there and only delay the game.
const DEMO_POW_DIFFICULTY: u8 = 1;

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// The built-in protocol to play.
    #[arg(long, default_value = "rock-paper-scissors", value_name = "ALIAS")]
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

pub fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let builtin = crate::protocols::find(&args.protocol).with_context(|| {
        format!(
            "{} is not a built-in protocol (see `aigenora protocol list`)",
            args.protocol
        )
    })?;
    let options = spec::parse_options(Some(&args.options))?;
    spec::validate_options(builtin.spec().value(), &options).context("options")?;
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
    let (host_end, guest_end, server_url) = runtime.block_on(play(&root, builtin, options))?;
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
    builtin: &crate::protocols::Builtin,
    options: Map<String, Value>,
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
    let protocol_dir = crate::protocols::materialize(builtin, alice.1.root())?;
    let protocol = Protocol {
        dir: protocol_dir,
        spec: builtin.spec(),
    };
    let (invited_tx, invited_rx) = tokio::sync::oneshot::channel();
    let host = session::host::host(session::host::HostRequest {
        client: alice.0,
        protocol,
        source: Some(session::ProtocolSource::Builtin),
        options,
        settings: settings("alice"),
        session_dir: SessionDir::create(alice.1.root(), Role::Host)?,
        renew_for: Some(Duration::from_secs(1800)),
        renew_every: session::host::RENEW_EVERY,
        on_invited: Some(invited_tx),
    });
    let guest = async {
        let Ok(post_id) = invited_rx.await else {
            bail!("the host stopped before publishing its invitation");
        };
        let session_dir = SessionDir::create(bob.1.root(), Role::Guest)?;
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
    let (identity, _) = create_key_file(data_dir.root(), false)?;
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
        think: None,
        attended: false,
        on_desk: None,
        peer_timeout: crate::engine::DEFAULT_PEER_TIMEOUT,
    }
}

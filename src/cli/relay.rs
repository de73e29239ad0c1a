//! `aigenora relay`: run an iroh relay server until SIGINT/SIGTERM (docs/deploy.md#the-relay),
//! and the flags `aigenora server` takes to run one beside the community server.

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;

use crate::relay::{self, ClientRate, RelayHandle, RelayOptions, TlsFiles};

#[derive(Debug, Args)]
pub struct RelayArgs {
    /// Where clients connect: plain HTTP, or HTTPS with --tls-cert and --tls-key (port 0
    /// picks a free port; the real address is printed).
    #[arg(long, default_value = "0.0.0.0:3340", value_name = "ADDR")]
    pub listen: SocketAddr,
    #[command(flatten)]
    pub tls: TlsArgs,
    /// With TLS: where the plain-HTTP captive-portal probe is served (clients ask port 80).
    /// Default: port 80 on the --listen address.
    #[arg(long, value_name = "ADDR", requires = "tls_cert")]
    pub captive_portal_listen: Option<SocketAddr>,
    /// The STUN server (UDP), or `off`. Clients ask port 3478 of the relay's host; without
    /// it, clients behind NATs learn no public address from this relay. Default: port 3478
    /// on the --listen address.
    #[arg(long, value_name = "ADDR|off", value_parser = optional_addr)]
    pub stun_listen: Option<Listen>,
    /// With TLS: the QUIC address-discovery server (UDP), or `off`. Default: port 7842 on
    /// the --listen address.
    #[arg(long, value_name = "ADDR|off", value_parser = optional_addr, requires = "tls_cert")]
    pub quic_listen: Option<Listen>,
    /// Serve Prometheus metrics at http://ADDR/metrics (keep it private).
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<SocketAddr>,
    #[command(flatten)]
    pub limits: RelayLimitArgs,
}

/// The certificate and key of a relay served over TLS.
#[derive(Debug, Clone, Args)]
pub struct TlsArgs {
    /// PEM file with the relay's certificate chain, leaf first (e.g. certbot's
    /// fullchain.pem). Clients accept only certificates of the public web PKI.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// PEM file with the certificate's private key.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

impl TlsArgs {
    fn files(&self) -> Option<TlsFiles> {
        Some(TlsFiles {
            cert: self.tls_cert.clone()?,
            key: self.tls_key.clone()?,
        })
    }
}

/// What one client of the relay may use.
#[derive(Debug, Clone, Args)]
pub struct RelayLimitArgs {
    /// Bytes per second one client may send through the relay (0: no limit).
    #[arg(long, default_value_t = 0, value_name = "BYTES")]
    pub client_rate: u32,
    /// Bytes one client may send at once above its rate (0: one second's worth).
    #[arg(
        long,
        default_value_t = 0,
        value_name = "BYTES",
        requires = "client_rate"
    )]
    pub client_burst: u32,
    /// Client keys whose signature checks are cached (about 100 bytes each).
    #[arg(long, default_value_t = relay::DEFAULT_KEY_CACHE, value_name = "N",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=16_777_216))]
    pub key_cache: usize,
}

impl RelayLimitArgs {
    fn apply(&self, options: &mut RelayOptions) {
        options.client_rate = NonZeroU32::new(self.client_rate).map(|rate| ClientRate {
            bytes_per_second: rate,
            burst_bytes: NonZeroU32::new(self.client_burst),
        });
        options.key_cache = self.key_cache;
    }
}

/// A listen address, or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listen {
    At(SocketAddr),
    Off,
}

fn optional_addr(text: &str) -> Result<Listen, String> {
    if text.eq_ignore_ascii_case("off") {
        return Ok(Listen::Off);
    }
    text.parse()
        .map(Listen::At)
        .map_err(|_| "expected IP:PORT or `off`".to_string())
}

fn resolve(listen: Option<Listen>, default: Option<SocketAddr>) -> Option<SocketAddr> {
    match listen {
        Some(Listen::At(addr)) => Some(addr),
        Some(Listen::Off) => None,
        None => default,
    }
}

impl RelayArgs {
    fn options(&self) -> RelayOptions {
        let mut options = RelayOptions::at(self.listen, self.tls.files());
        if let Some(addr) = self.captive_portal_listen {
            options.captive_portal_listen = addr;
        }
        options.stun_listen = resolve(self.stun_listen, options.stun_listen);
        options.quic_listen = resolve(self.quic_listen, options.quic_listen);
        options.metrics_listen = self.metrics_listen;
        self.limits.apply(&mut options);
        options
    }
}

/// One line for each service a relay runs.
pub fn describe(handle: &RelayHandle) -> String {
    let mut line = format!("aigenora relay listening on {}", handle.local_url());
    let mut service = |name: &str, addr: Option<SocketAddr>| {
        if let Some(addr) = addr {
            line.push_str(&format!(" ({name} {addr})"));
        }
    };
    service("stun", handle.stun_addr());
    service("quic", handle.quic_addr());
    service("captive portal", handle.captive_portal_addr());
    service("metrics", handle.metrics_addr());
    line
}

pub fn run(args: RelayArgs) -> anyhow::Result<ExitCode> {
    super::server::init_logging();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let mut handle = relay::start(args.options()).await?;
        println!("{}", describe(&handle));
        let signal = crate::server::shutdown_signal();
        let failed = tokio::select! {
            () = signal => None,
            failed = handle.failed() => Some(failed),
        };
        if let Some(failed) = failed {
            return Err(failed.into());
        }
        tracing::info!("shutting down the relay");
        handle.shutdown().await?;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

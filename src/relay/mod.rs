//! `aigenora relay`: an iroh relay server of our own, so a community does not depend on
//! someone else's relays to connect its members behind NATs (docs/deploy.md#the-relay).
//!
//! The server itself is the relay crate of the iroh release we pin (`iroh-relay`, its
//! `server` feature): the same code n0 runs. This module only configures it — plain HTTP
//! for private networks and tests, or TLS from a certificate and key given as PEM files —
//! starts it next to a STUN server (clients look for one on port 3478 of the relay's host to
//! learn their public address, which hole punching needs), and serves its metrics.
//!
//! What it bounds (docs/deploy.md#relay-limits): every relayed packet is at most 64 KiB
//! and every frame 1 MiB (the relay protocol's own limits); each client has a queue of 512
//! packets, and a client that does not take its packets within 2 s is dropped; a TLS
//! handshake must finish within 30 s; optionally each client's incoming bytes are
//! rate-limited ([`ClientRate`]). It does not cap the number of connections: the process's
//! open-file limit does.

mod metrics;
mod nodelay;
mod tls;

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;

use iroh::RelayUrl;
use iroh_relay::server::{
    AccessConfig, ClientRateLimit, Limits, QuicConfig, RelayConfig, Server, ServerConfig,
    StunConfig, TlsConfig,
};

pub use tls::TlsFiles;

/// The port iroh clients send STUN requests to on a relay's host (they derive it from the
/// relay URL; it cannot be announced).
pub const STUN_PORT: u16 = iroh_relay::defaults::DEFAULT_STUN_PORT;
/// The UDP port iroh clients try for QUIC address discovery on a TLS relay's host.
pub const QUIC_PORT: u16 = iroh_relay::defaults::DEFAULT_RELAY_QUIC_PORT;
/// Where the plain-HTTP captive-portal probe is served beside a TLS relay (clients ask
/// `http://HOST/generate_204`).
pub const CAPTIVE_PORTAL_PORT: u16 = iroh_relay::defaults::DEFAULT_HTTP_PORT;
/// Client keys whose signature checks are cached: a bound on the cache's memory (about 100
/// bytes each) rather than on clients, who are served either way.
pub const DEFAULT_KEY_CACHE: usize = 16 * 1024;

/// A rate limit on what one client may send through the relay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientRate {
    pub bytes_per_second: NonZeroU32,
    /// Bytes a client may send at once above the rate (default: one second's worth).
    pub burst_bytes: Option<NonZeroU32>,
}

/// How to run a relay.
#[derive(Debug, Clone)]
pub struct RelayOptions {
    /// Where clients connect: plain HTTP, or HTTPS when [`tls`](Self::tls) is set.
    pub listen: SocketAddr,
    /// Serve the relay over TLS with this certificate chain and key.
    pub tls: Option<TlsFiles>,
    /// With TLS: where the plain-HTTP captive-portal probe is served.
    pub captive_portal_listen: SocketAddr,
    /// The STUN server (UDP); `None` turns it off, and clients behind NATs then learn no
    /// public address from this relay.
    pub stun_listen: Option<SocketAddr>,
    /// With TLS: the QUIC address-discovery server (UDP); `None` turns it off.
    pub quic_listen: Option<SocketAddr>,
    /// Serve Prometheus metrics at `GET /metrics` here.
    pub metrics_listen: Option<SocketAddr>,
    pub client_rate: Option<ClientRate>,
    pub key_cache: usize,
}

impl RelayOptions {
    /// A relay at `listen` with the UDP services clients expect on the same IP address
    /// (STUN on 3478; with TLS, QUIC on 7842 and the captive-portal probe on port 80), no
    /// metrics, no rate limit.
    pub fn at(listen: SocketAddr, tls: Option<TlsFiles>) -> RelayOptions {
        let ip = listen.ip();
        let on = |port| SocketAddr::new(ip, port);
        RelayOptions {
            listen,
            quic_listen: tls.as_ref().map(|_| on(QUIC_PORT)),
            tls,
            captive_portal_listen: on(CAPTIVE_PORTAL_PORT),
            stun_listen: Some(on(STUN_PORT)),
            metrics_listen: None,
            client_rate: None,
            key_cache: DEFAULT_KEY_CACHE,
        }
    }
}

/// Why a relay could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error("cannot read the TLS {what} {path}: {reason}")]
    Tls {
        what: &'static str,
        path: PathBuf,
        reason: String,
    },
    #[error("cannot listen for {what} on {addr}: {reason}")]
    Bind {
        what: &'static str,
        addr: SocketAddr,
        reason: String,
    },
    #[error("the relay failed: {0}")]
    Failed(String),
}

/// A running relay. Dropping it stops the relay (without waiting).
pub struct RelayHandle {
    server: Server,
    relay_addr: SocketAddr,
    tls: bool,
    metrics: Option<metrics::MetricsServer>,
}

impl std::fmt::Debug for RelayHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelayHandle")
            .field("relay_addr", &self.relay_addr)
            .field("tls", &self.tls)
            .finish_non_exhaustive()
    }
}

impl RelayHandle {
    /// Where clients connect (HTTP, or HTTPS with TLS).
    pub fn relay_addr(&self) -> SocketAddr {
        self.relay_addr
    }

    /// Where the STUN server listens, when it runs.
    pub fn stun_addr(&self) -> Option<SocketAddr> {
        self.server.stun_addr()
    }

    /// Where the QUIC address-discovery server listens, when it runs.
    pub fn quic_addr(&self) -> Option<SocketAddr> {
        self.server.quic_addr()
    }

    /// With TLS: where the plain-HTTP captive-portal probe is served.
    pub fn captive_portal_addr(&self) -> Option<SocketAddr> {
        self.tls.then(|| self.server.http_addr()).flatten()
    }

    /// Where the metrics are served, when they are.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics.as_ref().map(|metrics| metrics.addr)
    }

    /// The URL of this relay at its bound address (`http://IP:PORT/`, or `https://` with
    /// TLS). Clients on the internet need the public name instead when TLS is on: its
    /// certificate names a host, not an address.
    pub fn local_url(&self) -> RelayUrl {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.relay_addr)
            .parse()
            .expect("an address makes a valid URL")
    }

    /// Waits until the relay stops by itself (one of its services failed).
    pub async fn failed(&mut self) -> RelayError {
        match self.server.task_handle().await {
            Ok(Ok(())) => RelayError::Failed("it stopped".into()),
            Ok(Err(error)) => RelayError::Failed(format!("{error:#}")),
            Err(error) => RelayError::Failed(error.to_string()),
        }
    }

    /// Stops accepting, closes every client connection and waits until all is stopped.
    pub async fn shutdown(self) -> Result<(), RelayError> {
        drop(self.metrics);
        self.server
            .shutdown()
            .await
            .map_err(|error| RelayError::Failed(format!("{error:#}")))
    }
}

/// Starts a relay: the TLS files are read and every listener bound before this returns,
/// so a bad file or a taken port is an error here, not later.
pub async fn start(options: RelayOptions) -> Result<RelayHandle, RelayError> {
    let tls = match &options.tls {
        Some(files) => Some(files.load().await?),
        None => None,
    };
    let metrics = match options.metrics_listen {
        Some(addr) => Some(metrics::MetricsListener::bind(addr).await?),
        None => None,
    };
    let quic = match (&tls, options.quic_listen) {
        (Some(loaded), Some(bind_addr)) => Some(QuicConfig {
            bind_addr,
            server_config: loaded.server_config.clone(),
        }),
        _ => None,
    };
    let has_tls = tls.is_some();
    let relay = RelayConfig::<std::io::Error> {
        http_bind_addr: if has_tls {
            options.captive_portal_listen
        } else {
            options.listen
        },
        tls: tls.map(|loaded| TlsConfig {
            https_bind_addr: options.listen,
            quic_bind_addr: options.quic_listen.unwrap_or(options.listen),
            cert: iroh_relay::server::CertConfig::Manual {
                certs: loaded.chain,
            },
            server_config: loaded.server_config,
        }),
        limits: Limits {
            accept_conn_limit: None,
            accept_conn_burst: None,
            client_rx: options.client_rate.map(|rate| ClientRateLimit {
                bytes_per_second: rate.bytes_per_second,
                max_burst_bytes: rate.burst_bytes,
            }),
        },
        key_cache_capacity: Some(options.key_cache.max(1)),
        access: AccessConfig::Everyone,
    };
    let config = ServerConfig {
        relay: Some(relay),
        stun: options
            .stun_listen
            .map(|bind_addr| StunConfig { bind_addr }),
        quic,
        metrics_addr: None,
    };
    let server = Server::spawn(config)
        .await
        .map_err(|error| bind_error(&options, &error))?;
    let relay_addr = if has_tls {
        server.https_addr()
    } else {
        server.http_addr()
    }
    .ok_or_else(|| RelayError::Failed("the relay's HTTP service did not start".into()))?;
    nodelay::on_listener(relay_addr)
        .map_err(|reason| RelayError::Failed(format!("cannot set TCP_NODELAY: {reason}")))?;
    let metrics = metrics.map(|metrics| metrics.serve(server.metrics()));
    tracing::info!(%relay_addr, tls = has_tls, stun = ?server.stun_addr(), "relay listening");
    Ok(RelayHandle {
        server,
        relay_addr,
        tls: has_tls,
        metrics,
    })
}

/// The relay crate reports a taken port as text; name the service and address it was.
fn bind_error(options: &RelayOptions, error: &anyhow::Error) -> RelayError {
    let text = format!("{error:#}");
    let (what, addr) = if text.contains("STUN") {
        ("STUN", options.stun_listen.unwrap_or(options.listen))
    } else if text.contains("quic") || text.contains("QUIC") {
        ("QUIC", options.quic_listen.unwrap_or(options.listen))
    } else if text.contains("http") && options.tls.is_some() && !text.contains("server socket") {
        ("the captive-portal probe", options.captive_portal_listen)
    } else {
        ("the relay", options.listen)
    };
    RelayError::Bind {
        what,
        addr,
        reason: plain_reason(&text),
    }
}

/// The OS's message out of the relay crate's error text (which may be a multi-line debug
/// dump of the `io::Error`), on one line.
fn plain_reason(text: &str) -> String {
    const MESSAGE: &str = "message: \"";
    if let Some(start) = text.find(MESSAGE) {
        let rest = &text[start + MESSAGE.len()..];
        if let Some(end) = rest.find('"') {
            return rest[..end].to_string();
        }
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use std::os::fd::BorrowedFd;

    use super::*;

    /// The socket in this process accepted from `peer` on `local`.
    fn accepted(local: SocketAddr, peer: SocketAddr) -> Option<bool> {
        std::fs::read_dir("/proc/self/fd")
            .ok()?
            .flatten()
            .find_map(|entry| {
                let fd: i32 = entry.file_name().to_str()?.parse().ok()?;
                // SAFETY: an open descriptor of this process, only read during this call.
                let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
                let socket = socket2::SockRef::from(&borrowed);
                let ours = socket.local_addr().ok()?.as_socket() == Some(local)
                    && socket.peer_addr().ok()?.as_socket() == Some(peer);
                ours.then(|| socket.tcp_nodelay().ok()).flatten()
            })
    }

    #[test]
    fn bind_errors_are_told_plainly() {
        let dump = "failed to bind STUN listener: Os {\n    code: 98,\n    kind: AddrInUse,\n    message: \"Address already in use\",\n}";
        assert_eq!(plain_reason(dump), "Address already in use");
        assert_eq!(plain_reason("failed to bind\n  x"), "failed to bind x");
    }

    #[tokio::test]
    async fn the_relay_turns_nagle_off_for_its_clients() {
        let mut options = RelayOptions::at("127.0.0.1:0".parse().unwrap(), None);
        options.stun_listen = None;
        let relay = start(options).await.unwrap();
        let client = tokio::net::TcpStream::connect(relay.relay_addr())
            .await
            .unwrap();
        let peer = client.local_addr().unwrap();
        let mut nodelay = None;
        for _ in 0..100 {
            nodelay = accepted(relay.relay_addr(), peer);
            if nodelay.is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(nodelay, Some(true));
        relay.shutdown().await.unwrap();
    }
}

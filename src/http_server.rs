//! The one accept loop behind every HTTP server of this binary (the community server, the
//! browser controller): HTTP/1.1 on a bound listener with the limits an open network needs,
//! from hyper and tokio: a cap on open connections (the server stops accepting while at it) and on
//! those of one address (more are closed at once), a deadline for each request's headers
//! (which also closes idle keep-alive connections), a read/write timeout on every
//! connection (a client that stops reading its answer, or stalls mid-body, is dropped),
//! bounded header sizes, and a graceful shutdown with a deadline after which connections
//! still open are dropped.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_io_timeout::TimeoutStream;
use tower::ServiceExt;

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

/// Connection-level limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// A request's headers must arrive within this time; it also bounds how long an idle
    /// keep-alive connection stays open.
    pub header_timeout: Duration,
    /// A request's whole body must arrive within this time.
    pub body_timeout: Duration,
    /// A read or write that makes no progress for this long closes the connection (a
    /// client that stops reading its response, a stalled body).
    pub io_timeout: Duration,
    /// Open connections at most; the server stops accepting while at the cap.
    pub max_connections: usize,
    /// Open connections one address (IPv6: one /64) may hold; more are closed as soon as
    /// they are accepted (0: no cap).
    pub connections_per_address: usize,
    /// On SIGTERM/SIGINT, in-flight requests get this long before their connections are
    /// dropped and the database is closed.
    pub shutdown_grace: Duration,
}

/// The peer address of the connection a request came in on (set by the accept loop).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub SocketAddr);

/// Who an address-based limit counts: an IPv4 address, or an IPv6 address's /64 (one
/// host usually owns a whole /64, so counting single IPv6 addresses would limit nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AddressKey(IpAddr);

impl AddressKey {
    pub fn of(addr: IpAddr) -> AddressKey {
        match addr {
            IpAddr::V4(v4) => AddressKey(IpAddr::V4(v4)),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => AddressKey(IpAddr::V4(v4)),
                None => {
                    let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                    AddressKey(IpAddr::V6(Ipv6Addr::from(prefix)))
                }
            },
        }
    }
}

impl std::fmt::Display for AddressKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            IpAddr::V4(v4) => write!(f, "{v4}"),
            IpAddr::V6(v6) => write!(f, "{v6}/64"),
        }
    }
}

/// Largest request head (request line and headers) accepted.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most headers one request may carry.
const MAX_HEADERS: usize = 64;
/// Pause after a failed accept (e.g. out of file descriptors) before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Serves `app` until `stop` resolves, then lets in-flight requests finish for up to
/// `limits.shutdown_grace` and drops every connection still open.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: HttpLimits,
    stop: impl Future<Output = ()>,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let per_address = OpenPerAddress::new(limits.connections_per_address);
    let graceful = GracefulShutdown::new();
    let mut connections = JoinSet::new();
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADERS);
    tokio::pin!(stop);
    loop {
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            () = &mut stop => break,
        };
        let (stream, addr) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        while connections.try_join_next().is_some() {}
        let Some(held) = per_address.open(AddressKey::of(addr.ip())) else {
            tracing::debug!(%addr, "connection closed: its address is at its connection cap");
            continue;
        };
        let _ = stream.set_nodelay(true);
        let mut stream = TimeoutStream::new(stream);
        stream.set_read_timeout(Some(limits.io_timeout));
        stream.set_write_timeout(Some(limits.io_timeout));
        let app = app.clone();
        let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            request.extensions_mut().insert(ClientAddr(addr));
            app.clone().oneshot(request)
        });
        let connection =
            graceful.watch(http1.serve_connection(TokioIo::new(Box::pin(stream)), service));
        connections.spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%addr, %error, "connection closed with an error");
            }
            drop((permit, held));
        });
    }
    drop(listener);
    let open = connections.len();
    if tokio::time::timeout(limits.shutdown_grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            open,
            grace_ms = limits.shutdown_grace.as_millis() as u64,
            "dropping connections still open after the shutdown grace period"
        );
    }
    connections.shutdown().await;
}

/// How many connections each address holds open, against a cap.
#[derive(Clone)]
struct OpenPerAddress {
    cap: usize,
    open: Arc<Mutex<HashMap<AddressKey, usize>>>,
}

/// One open connection of an address; dropping it closes the count.
struct HeldConnection {
    address: AddressKey,
    counts: OpenPerAddress,
}

impl OpenPerAddress {
    /// `cap` connections per address (0: no cap).
    fn new(cap: usize) -> OpenPerAddress {
        OpenPerAddress {
            cap,
            open: Arc::default(),
        }
    }

    /// Counts a new connection of `address`, unless it is at the cap.
    fn open(&self, address: AddressKey) -> Option<HeldConnection> {
        let mut open = self.open.lock().expect("the count is never poisoned");
        let count = open.entry(address).or_default();
        if self.cap > 0 && *count >= self.cap {
            return None;
        }
        *count += 1;
        Some(HeldConnection {
            address,
            counts: self.clone(),
        })
    }
}

impl Drop for HeldConnection {
    fn drop(&mut self) {
        let mut open = self
            .counts
            .open
            .lock()
            .expect("the count is never poisoned");
        if let Some(count) = open.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.address);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_addresses_count_by_their_64_prefix() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(AddressKey::of(a), AddressKey::of(b));
        assert_ne!(AddressKey::of(a), AddressKey::of(c));
        assert_eq!(AddressKey::of(a).to_string(), "2001:db8:1:2::/64");
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(AddressKey::of(mapped).to_string(), "192.0.2.7");
    }
}

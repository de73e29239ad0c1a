//! Serving HTTP/1.1 on a bound listener with the limits an open network needs, from hyper
//! and tokio: a cap on open connections (the server stops accepting while at it) and on
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

use super::config::HttpLimits;
use super::rate_limit::{AddressKey, ClientAddr};

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

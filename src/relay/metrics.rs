//! The relay's counters in the Prometheus text format at `GET /metrics`, on an address of
//! its own (keep it private: it tells how busy the relay is). The names are the relay
//! crate's (`relayserver_*`, `stun_*`; docs/deploy.md#relay-metrics).

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use iroh_metrics::{MetricsSource, Registry};
use iroh_relay::server::RelayMetrics;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::RelayError;

/// A bound metrics listener, not serving yet.
pub(super) struct MetricsListener {
    listener: TcpListener,
    addr: SocketAddr,
}

/// The metrics being served; dropping it stops them.
pub(super) struct MetricsServer {
    pub addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MetricsListener {
    pub(super) async fn bind(addr: SocketAddr) -> Result<MetricsListener, RelayError> {
        let bind_error = |e: std::io::Error| RelayError::Bind {
            what: "metrics",
            addr,
            reason: e.to_string(),
        };
        let listener = TcpListener::bind(addr).await.map_err(bind_error)?;
        let addr = listener.local_addr().map_err(bind_error)?;
        Ok(MetricsListener { listener, addr })
    }

    /// Serves `metrics` until the returned server is dropped.
    pub(super) fn serve(self, metrics: &RelayMetrics) -> MetricsServer {
        let mut registry = Registry::default();
        registry.register_all(metrics);
        let registry = Arc::new(registry);
        let app = Router::new().route(
            "/metrics",
            get(move || {
                let registry = registry.clone();
                async move { encode(&registry) }
            }),
        );
        let task = tokio::spawn(async move {
            if let Err(error) = axum::serve(self.listener, app).await {
                tracing::warn!(%error, "the relay's metrics server stopped");
            }
        });
        MetricsServer {
            addr: self.addr,
            task,
        }
    }
}

fn encode(registry: &Registry) -> axum::response::Response {
    match registry.encode_openmetrics_to_string() {
        Ok(text) => (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(error) => (StatusCode::INTERNAL_SERVER_ERROR, error.to_string()).into_response(),
    }
}

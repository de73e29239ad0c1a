//! Which way a session's packets travel, recorded as it changes: a connection usually opens
//! through a relay and moves to a direct path once iroh has punched holes through both NATs
//! (or stays relayed where a NAT does not allow it). Each change is a `path_changed` event.

use futures_util::StreamExt;
use iroh::Endpoint;
use iroh::NodeId;
use iroh::endpoint::ConnectionType;
use tokio::task::JoinHandle;

use super::heartbeat::EventSink;
use crate::records::{Event, PathKind};

/// Records the path to one peer until dropped.
pub(crate) struct PathWatch(JoinHandle<()>);

impl Drop for PathWatch {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl PathWatch {
    /// Records the path to `peer` once there is one, then every change. Call from the
    /// runtime.
    pub(crate) fn start(endpoint: &Endpoint, peer: NodeId, sink: EventSink) -> Option<PathWatch> {
        let watcher = endpoint.conn_type(peer).ok()?;
        Some(PathWatch(tokio::spawn(async move {
            let mut changes = watcher.stream();
            let mut last = None;
            while let Some(kind) = changes.next().await {
                // Nothing to say until there is a first path; losing one is news.
                let unchanged = last.as_ref().unwrap_or(&ConnectionType::None) == &kind;
                if unchanged {
                    continue;
                }
                sink(path_event(&kind));
                last = Some(kind);
            }
        })))
    }
}

/// The event for one of iroh's connection types.
fn path_event(kind: &ConnectionType) -> Event {
    let (path, addr, relay_url) = match kind {
        ConnectionType::Direct(addr) => (PathKind::Direct, Some(addr.to_string()), None),
        ConnectionType::Relay(url) => (PathKind::Relay, None, Some(url.to_string())),
        ConnectionType::Mixed(addr, url) => (
            PathKind::Mixed,
            Some(addr.to_string()),
            Some(url.to_string()),
        ),
        ConnectionType::None => (PathKind::None, None, None),
    };
    Event::PathChanged {
        path,
        addr,
        relay_url,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_connection_type_names_its_path() {
        let addr: std::net::SocketAddr = "203.0.113.2:4000".parse().unwrap();
        let url: iroh::RelayUrl = "http://198.51.100.2:3340".parse().unwrap();
        let line = |kind| {
            let (name, data) = path_event(&kind).into_parts();
            assert_eq!(name, "path_changed");
            serde_json::Value::Object(data)
        };
        assert_eq!(
            line(ConnectionType::Direct(addr)),
            serde_json::json!({"path": "direct", "addr": "203.0.113.2:4000"})
        );
        assert_eq!(
            line(ConnectionType::Relay(url.clone())),
            serde_json::json!({"path": "relay", "relay_url": "http://198.51.100.2:3340/"})
        );
        assert_eq!(
            line(ConnectionType::Mixed(addr, url)),
            serde_json::json!({"path": "mixed", "addr": "203.0.113.2:4000", "relay_url": "http://198.51.100.2:3340/"})
        );
        assert_eq!(
            line(ConnectionType::None),
            serde_json::json!({"path": "none"})
        );
    }
}

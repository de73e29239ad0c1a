//! Helpers shared by the iroh transport tests: a runtime, offline endpoints, connected pairs,
//! raw iroh peers (guest or host) that write exact bytes, and an event recorder.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use aigenora::records::Event;
use aigenora::transport::{
    EventSink, IrohChannel, PeerLink, RelayChoice, SessionDriver, SessionEndpoint, Ticket,
};
use iroh::endpoint::{Connection, RecvStream, SendStream};
use serde_json::Value;
use tokio::runtime::Runtime;

/// A multi-thread runtime like the CLI's, for the I/O; test bodies block outside of it.
pub fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("build a tokio runtime")
}

/// An endpoint without relays or discovery: loopback only, works offline.
pub async fn offline_endpoint() -> SessionEndpoint {
    SessionEndpoint::bind(&RelayChoice::Disabled)
        .await
        .expect("bind an offline endpoint")
}

/// An offline guest that dialled `ticket` (10 s at most): its endpoint and link.
pub async fn offline_guest(ticket: &Ticket) -> (SessionEndpoint, PeerLink) {
    let endpoint = offline_endpoint().await;
    let link = endpoint
        .dial(ticket, Duration::from_secs(10))
        .await
        .expect("dial the host");
    (endpoint, link)
}

/// A host with its ticket, already accepting its first guest in the background.
pub struct HostSide {
    pub ticket: Ticket,
    pub link: tokio::task::JoinHandle<(SessionEndpoint, PeerLink)>,
}

/// Binds a host, publishes its ticket (through its string form, as a guest would get it) and
/// starts accepting.
pub async fn start_host() -> HostSide {
    let mut host = offline_endpoint().await;
    let ticket: Ticket = host
        .ticket()
        .await
        .expect("host ticket")
        .to_string()
        .parse()
        .expect("parse ticket");
    let link = tokio::spawn(async move {
        let link = host.accept_first().await.expect("accept the first guest");
        (host, link)
    });
    HostSide { ticket, link }
}

/// A connected host/guest pair of channels plus their endpoints (keep them alive), and how
/// long the guest took to connect.
pub struct Pair {
    pub host: IrohChannel,
    pub guest: IrohChannel,
    pub host_endpoint: SessionEndpoint,
    pub guest_endpoint: SessionEndpoint,
    pub connect_time: Duration,
}

pub fn connected_pair(runtime: &Runtime) -> Pair {
    runtime.block_on(async {
        let host = start_host().await;
        let guest_endpoint = offline_endpoint().await;
        let started = Instant::now();
        let guest_link = guest_endpoint
            .dial(&host.ticket, Duration::from_secs(10))
            .await
            .expect("dial the host");
        let (host_endpoint, host_link) = host.link.await.expect("host accept task");
        let connect_time = started.elapsed();
        let handle = tokio::runtime::Handle::current();
        Pair {
            host: IrohChannel::new(host_link, &handle),
            guest: IrohChannel::new(guest_link, &handle),
            host_endpoint,
            guest_endpoint,
            connect_time,
        }
    })
}

/// One side of a session run the way `host` and `join` run it: on this thread, under its own
/// [`SessionDriver`], `connect` gives the endpoint and link, then `engine` plays on a blocking
/// thread through a driven channel; the endpoint is shut down after it.
pub fn driven_side<T: Send + 'static>(
    connect: impl std::future::Future<Output = (SessionEndpoint, PeerLink)>,
    engine: impl FnOnce(IrohChannel) -> T + Send + 'static,
) -> T {
    let driver = SessionDriver::new().expect("start a session driver");
    let played = driver.run(async move {
        let (endpoint, link) = connect.await;
        let driver = SessionDriver::current().expect("inside the driver's run");
        let played =
            tokio::task::spawn_blocking(move || engine(IrohChannel::driven(link, &driver)))
                .await
                .expect("the engine thread");
        endpoint.shutdown().await;
        played
    });
    driver.finish();
    played
}

/// A bare iroh endpoint speaking our ALPN, for tests that need exact bytes on the wire.
pub struct RawPeer {
    pub endpoint: iroh::Endpoint,
    pub connection: Connection,
    pub send: SendStream,
    pub recv: RecvStream,
}

/// Dials `ticket` with a bare iroh endpoint and opens the session stream (writing nothing).
pub async fn raw_guest(ticket: &Ticket) -> RawPeer {
    let endpoint = iroh::Endpoint::builder()
        .relay_mode(iroh::RelayMode::Disabled)
        .bind()
        .await
        .expect("bind a raw endpoint");
    let connection = endpoint
        .connect(ticket.node_addr().clone(), aigenora::transport::ALPN)
        .await
        .expect("raw connect");
    let (send, recv) = connection.open_bi().await.expect("raw open_bi");
    RawPeer {
        endpoint,
        connection,
        send,
        recv,
    }
}

/// A bare iroh host speaking our ALPN without relays, for tests that play a misbehaving host.
pub struct RawHost {
    pub endpoint: iroh::Endpoint,
    /// The host's node id and loopback address.
    pub ticket: Ticket,
}

pub async fn raw_host() -> RawHost {
    let endpoint = iroh::Endpoint::builder()
        .alpns(vec![aigenora::transport::ALPN.to_vec()])
        .relay_mode(iroh::RelayMode::Disabled)
        .bind()
        .await
        .expect("bind a raw host endpoint");
    let port = endpoint.bound_sockets().0.port();
    let loopback = std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port));
    let addr = iroh::NodeAddr::from_parts(endpoint.node_id(), None, [loopback]);
    RawHost {
        endpoint,
        ticket: Ticket::new(addr),
    }
}

impl RawHost {
    /// Accepts the next connection and its first bidirectional stream.
    pub async fn accept(&self) -> RawPeer {
        let incoming = self.endpoint.accept().await.expect("endpoint open");
        let connection = incoming.await.expect("raw accept");
        let (send, recv) = connection.accept_bi().await.expect("raw accept_bi");
        RawPeer {
            endpoint: self.endpoint.clone(),
            connection,
            send,
            recv,
        }
    }
}

impl RawPeer {
    /// Reads until `count` newline-terminated lines arrived (or the stream ends).
    pub async fn read_lines(&mut self, count: usize) -> Vec<String> {
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 4096];
        while bytes.iter().filter(|&&b| b == b'\n').count() < count {
            match self.recv.read(&mut chunk).await {
                Ok(Some(n)) => bytes.extend_from_slice(&chunk[..n]),
                _ => break,
            }
        }
        String::from_utf8(bytes)
            .expect("utf-8 lines")
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// Collects transport events in order.
#[derive(Clone, Default)]
pub struct EventLog(Arc<Mutex<Vec<(String, Value)>>>);

impl EventLog {
    pub fn sink(&self) -> EventSink {
        let log = self.0.clone();
        Arc::new(move |event: Event| {
            let data = serde_json::to_value(&event).unwrap()["data"].take();
            log.lock().unwrap().push((event.name(), data))
        })
    }

    pub fn names(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(|(name, _)| name.clone())
            .collect()
    }

    pub fn first(&self, name: &str) -> Option<Value> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, data)| data.clone())
    }
}

/// Polls `condition` every 20 ms until it holds or `limit` passes; returns whether it held.
pub fn eventually(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    condition()
}

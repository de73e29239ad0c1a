//! The iroh endpoint of one session: bind, publish a ticket, accept the first guest (host) or
//! dial a ticket (guest), and hand over the single bidirectional stream as a [`PeerLink`].
//!
//! Like the reference, every run uses a fresh, throw-away iroh identity and ALPN
//! `/agent-chat/1`. Unlike the reference, a host turns away every connection after the first
//! one instead of leaving it hanging, and a guest makes its stream visible at once by writing
//! an empty line (which every reader skips) right after opening it.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use iroh::endpoint::{
    AckFrequencyConfig, Connection, Incoming, RecvStream, SendStream, TransportConfig, VarInt,
};
use iroh::{Endpoint, NodeAddr, NodeId, RelayMap, RelayMode};
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio::task::JoinHandle;

use super::ChannelError;
use super::heartbeat::EventSink;
use super::lines::{Line, LineReader, encode_line, parse_text};
use super::path::PathWatch;
use super::relay::{RelayChoice, probe};
use super::ticket::Ticket;

/// The ALPN every Aigenora session speaks.
pub const ALPN: &[u8] = b"/agent-chat/1";

/// How long a guest waits for the host by default (the reference has no bound).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// A connection with no packets for this long is dead (keep-alives go out every second, so
/// only a vanished peer gets there). Shorter than quinn's 30 s so a killed peer is noticed soon.
const IDLE_TIMEOUT_MS: u32 = 10_000;
const KEEP_ALIVE: Duration = Duration::from_secs(1);
/// How long we ask the peer to hold back an acknowledgement (QUIC's ACK frequency extension;
/// a peer without it keeps its own 25 ms). A session's last frames and its end of stream get
/// no reply to carry their acknowledgement, and closing with a peer that does not announce
/// its own close (the reference) waits for it: 25 ms at the end of such a session otherwise.
const PEER_ACK_DELAY: Duration = Duration::from_millis(1);
/// Bound on waiting for the endpoint to learn its own addresses.
const ADDRESS_WAIT: Duration = Duration::from_secs(15);
/// Bound on waiting for a home relay before writing a ticket without one.
const HOME_RELAY_WAIT: Duration = Duration::from_secs(5);
/// How long an incoming connection may take to complete and open its stream.
pub const STREAM_OPEN_LIMIT: Duration = Duration::from_secs(10);
/// Incoming connections that may be setting up at once; more are refused outright.
pub const MAX_CONNECTING: usize = 32;
/// Application close code for a dialer refused by the handshake.
const REFUSED_CODE: u32 = 3;
/// How long a refused dialer's connection stays open for the refusal to reach it.
pub const REFUSAL_LINGER: Duration = Duration::from_secs(2);
/// How often a hosting endpoint asks its custom relay whether it is still up.
const RELAY_CHECK_EVERY: Duration = Duration::from_secs(2);
/// How long a custom relay may stay unreachable before a host waiting for guests gives up
/// (a restart of the relay takes less).
pub const RELAY_LOSS_GRACE: Duration = Duration::from_secs(10);
/// Application close code and reason for connections a busy host turns away.
const BUSY_CODE: u32 = 1;
const BUSY_REASON: &[u8] = b"host is already serving a session";

/// This process's endpoints until they shut down, for [`close_live_endpoints`].
static LIVE_ENDPOINTS: Mutex<Vec<Endpoint>> = Mutex::new(Vec::new());

/// Closes every endpoint of this process that is still open (waiting at most `limit`), so
/// the peers of a process that is told to stop learn it at once rather than after the idle
/// timeout. Sessions running on them see their connection end.
pub async fn close_live_endpoints(limit: Duration) {
    let live = std::mem::take(
        &mut *LIVE_ENDPOINTS
            .lock()
            .unwrap_or_else(PoisonError::into_inner),
    );
    let _ = tokio::time::timeout(limit, async {
        for endpoint in &live {
            endpoint.close().await;
        }
    })
    .await;
}

fn forget_live(node_id: NodeId) {
    LIVE_ENDPOINTS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .retain(|live| live.node_id() != node_id);
}

/// What went wrong while setting up a session connection.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The local endpoint could not start.
    #[error("cannot start the iroh endpoint: {0}")]
    Bind(String),
    /// The endpoint could not tell its own addresses in time.
    #[error("cannot determine this node's addresses: {0}")]
    Address(String),
    /// The host did not answer within the connect timeout.
    #[error("no answer from the host within {} s (is the ticket current and reachable?)", .0.as_secs_f64())]
    ConnectTimeout(Duration),
    /// The host could not be reached or refused the session.
    #[error("cannot connect to the host: {0}")]
    Connect(String),
    /// The endpoint was closed before a guest arrived.
    #[error("the endpoint closed before a guest connected")]
    EndpointClosed,
    /// `accept_first` was called on an endpoint that already hosts a session.
    #[error("this endpoint already hosts a session")]
    AlreadyHosting,
    /// The chosen relay does not answer, so no guest behind a NAT could reach this host.
    #[error("the relay {url} does not answer ({reason}); is it running? (--relay chooses another)")]
    RelayUnreachable { url: String, reason: String },
    /// The relay went away while the host waited for guests.
    #[error(
        "lost the relay {url} while waiting for a guest ({reason} for {} s): no guest could reach this host through it",
        RELAY_LOSS_GRACE.as_secs()
    )]
    RelayLost { url: String, reason: String },
}

/// A connection and its single bidirectional stream, ready to carry JSON lines. Before an
/// [`IrohChannel`](super::IrohChannel) takes it over, the session's handshake talks over it
/// directly with [`send_frame`](Self::send_frame) and [`recv_frame`](Self::recv_frame).
pub struct PeerLink {
    pub(crate) connection: Connection,
    pub(crate) send: SendStream,
    pub(crate) lines: LineReader,
    /// Records how packets to the peer travel, while the link (or its channel) lives.
    pub(crate) path: Option<PathWatch>,
}

impl PeerLink {
    fn new(
        connection: Connection,
        send: SendStream,
        recv: RecvStream,
        path: Option<PathWatch>,
    ) -> PeerLink {
        PeerLink {
            connection,
            send,
            lines: LineReader::new(recv),
            path,
        }
    }

    /// The peer's (throw-away) iroh node id.
    pub fn remote_node_id(&self) -> Option<NodeId> {
        self.connection.remote_node_id().ok()
    }

    /// The peer is who it claims (or this side chose to trust it): lines up to
    /// [`MAX_FRAME_BYTES`](super::MAX_FRAME_BYTES) are accepted from now on.
    pub fn authenticated(&mut self) {
        self.lines.set_limit(super::MAX_FRAME_BYTES);
    }

    /// Turns this peer away with a last frame saying why: the frame is written and the
    /// stream finished in the background, then the connection is closed (after at most
    /// [`REFUSAL_LINGER`], whether or not the peer read it).
    pub fn refuse(self, frame: &Value) {
        tokio::spawn(self.refuse_and_wait(frame));
    }

    /// [`refuse`](Self::refuse), done before it returns: for a process about to close its
    /// endpoint, which would cut the frame off.
    pub fn refuse_and_wait(mut self, frame: &Value) -> impl Future<Output = ()> + use<> {
        let line = encode_line(frame).unwrap_or_default();
        async move {
            let deliver = async {
                let _ = self.send.write_all(&line).await;
                let _ = self.send.finish();
                self.connection.closed().await;
            };
            let _ = tokio::time::timeout(REFUSAL_LINGER, deliver).await;
            self.connection
                .close(VarInt::from_u32(REFUSED_CODE), b"session refused");
        }
    }

    /// Writes one frame.
    pub async fn send_frame(&mut self, frame: &Value) -> Result<(), ChannelError> {
        let line = encode_line(frame)?;
        self.send
            .write_all(&line)
            .await
            .map_err(|e| ChannelError::Closed(format!("cannot write to the peer: {e}")))
    }

    /// The next frame, waiting at most `timeout`. `_sys` frames (heartbeat traffic, which
    /// belongs to the channel) are skipped. Lines are held to the handshake limit until
    /// [`authenticated`](Self::authenticated).
    pub async fn recv_frame(&mut self, timeout: Duration) -> Result<Value, ChannelError> {
        let next = async {
            loop {
                let line = match self.lines.next().await {
                    Line::Text(text) => parse_text(&text),
                    line => line,
                };
                match line {
                    Line::Frame(frame) if frame.get("_sys").is_some() => continue,
                    Line::Frame(frame) => return Ok(frame),
                    Line::Text(_) => unreachable!("parsed above"),
                    Line::Malformed(reason) => return Err(ChannelError::Malformed(reason)),
                    Line::End(reason) => return Err(ChannelError::Closed(reason)),
                }
            }
        };
        tokio::time::timeout(timeout, next)
            .await
            .map_err(|_| ChannelError::Timeout)?
    }
}

/// Our side of a session: one iroh endpoint, either hosting or dialing.
pub struct SessionEndpoint {
    endpoint: Endpoint,
    relay: RelayChoice,
    accept_loop: Option<JoinHandle<()>>,
    paths: Option<EventSink>,
}

impl SessionEndpoint {
    /// Starts an endpoint with a fresh identity. With relays disabled it uses no discovery and
    /// only direct (LAN/loopback) addresses, which works offline.
    pub async fn bind(relay: &RelayChoice) -> Result<SessionEndpoint, TransportError> {
        let mut transport = TransportConfig::default();
        transport.keep_alive_interval(Some(KEEP_ALIVE));
        transport.max_idle_timeout(Some(VarInt::from_u32(IDLE_TIMEOUT_MS).into()));
        let mut acks = AckFrequencyConfig::default();
        acks.max_ack_delay(Some(PEER_ACK_DELAY));
        transport.ack_frequency_config(Some(acks));
        let builder = Endpoint::builder()
            .alpns(vec![ALPN.to_vec()])
            .transport_config(transport);
        let builder = match relay {
            RelayChoice::Default => builder.relay_mode(RelayMode::Default).discovery_n0(),
            RelayChoice::Disabled => builder.relay_mode(RelayMode::Disabled).clear_discovery(),
            RelayChoice::Custom(url) => builder
                .relay_mode(RelayMode::Custom(RelayMap::from(url.clone())))
                .clear_discovery(),
        };
        let endpoint = builder
            .bind()
            .await
            .map_err(|e| TransportError::Bind(format!("{e:#}")))?;
        LIVE_ENDPOINTS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(endpoint.clone());
        Ok(SessionEndpoint {
            endpoint,
            relay: relay.clone(),
            accept_loop: None,
            paths: None,
        })
    }

    /// From now on, every connection records its path ([`Event::PathChanged`]) to `sink`
    /// from the moment it opens until its link or channel is dropped.
    ///
    /// [`Event::PathChanged`]: crate::records::Event::PathChanged
    pub fn record_paths(&mut self, sink: EventSink) {
        self.paths = Some(sink);
    }

    /// Our (throw-away) iroh node id.
    pub fn node_id(&self) -> NodeId {
        self.endpoint.node_id()
    }

    /// How packets to `peer` travel right now: `direct(ADDR)`, `relay(URL)`, `mixed(...)`
    /// or `none`.
    pub fn connection_type(&self, peer: NodeId) -> String {
        self.endpoint
            .conn_type(peer)
            .ok()
            .and_then(|watcher| watcher.get().ok())
            .map_or_else(|| "none".to_string(), |kind| kind.to_string())
    }

    /// The ticket a guest dials: node id, home relay (when relays are on) and direct
    /// addresses. Without relays, loopback addresses are added so same-machine sessions work
    /// whatever the network interfaces are.
    /// A custom relay must answer first: a ticket naming a relay that is down would reach
    /// no guest behind a NAT.
    pub async fn ticket(&self) -> Result<Ticket, TransportError> {
        if let RelayChoice::Custom(url) = &self.relay {
            probe(url)
                .await
                .map_err(|reason| TransportError::RelayUnreachable {
                    url: url.to_string(),
                    reason,
                })?;
        }
        if self.relay.uses_relays() {
            let _ = tokio::time::timeout(HOME_RELAY_WAIT, self.endpoint.home_relay().initialized())
                .await;
        }
        let addr = tokio::time::timeout(ADDRESS_WAIT, self.endpoint.node_addr())
            .await
            .map_err(|_| {
                TransportError::Address(format!("still unknown after {} s", ADDRESS_WAIT.as_secs()))
            })?
            .map_err(|e| TransportError::Address(format!("{e:#}")))?;
        if self.relay.uses_relays() {
            return Ok(Ticket::new(addr));
        }
        let (v4, v6) = self.endpoint.bound_sockets();
        let loopback = [Some(v4), v6]
            .into_iter()
            .flatten()
            .map(|bound| match bound {
                SocketAddr::V4(_) if bound.ip().is_unspecified() => {
                    SocketAddr::new(Ipv4Addr::LOCALHOST.into(), bound.port())
                }
                SocketAddr::V6(_) if bound.ip().is_unspecified() => {
                    SocketAddr::new(Ipv6Addr::LOCALHOST.into(), bound.port())
                }
                other => other,
            });
        let direct = addr.direct_addresses().copied().chain(loopback);
        Ok(Ticket::new(NodeAddr::from_parts(
            addr.node_id,
            None,
            direct,
        )))
    }

    /// Starts accepting guests: every connection that opens its stream within
    /// [`STREAM_OPEN_LIMIT`] is handed out by [`Knocks::next`], at most `waiting` of them
    /// queued (more are turned away as busy, as is everything once [`Knocks::close`] is
    /// called). At most [`MAX_CONNECTING`] connections may be setting up at once. With a
    /// custom relay, [`Knocks::next`] fails once the relay has been unreachable for
    /// [`RELAY_LOSS_GRACE`].
    pub fn knocks(&mut self, waiting: usize) -> Result<Knocks, TransportError> {
        if self.accept_loop.is_some() {
            return Err(TransportError::AlreadyHosting);
        }
        let (arrive, arrivals) = mpsc::channel(waiting.max(1));
        let gate = Arc::new(Gate {
            arrive,
            served: watch::channel(false).0,
            connecting: Arc::new(Semaphore::new(MAX_CONNECTING)),
            endpoint: self.endpoint.clone(),
            paths: self.paths.clone(),
        });
        self.accept_loop = Some(tokio::spawn(accept_loop(
            self.endpoint.clone(),
            gate.clone(),
        )));
        let relay_watch = match &self.relay {
            RelayChoice::Custom(url) => Some(RelayWatch::start(url.clone())),
            _ => None,
        };
        Ok(Knocks {
            arrivals,
            gate,
            relay_watch,
        })
    }

    /// The first guest that opens a bidirectional stream, with no handshake (tests and
    /// benchmarks); every later connection is turned away.
    pub async fn accept_first(&mut self) -> Result<PeerLink, TransportError> {
        let mut knocks = self.knocks(1)?;
        let link = knocks.next().await?;
        knocks.close();
        Ok(link)
    }

    /// Connects to the host named by `ticket` and opens the session stream, giving up after
    /// `timeout`.
    pub async fn dial(
        &self,
        ticket: &Ticket,
        timeout: Duration,
    ) -> Result<PeerLink, TransportError> {
        let connect = async {
            // Known to the endpoint before the dial, the host's path is recorded from the
            // first packet on (through the relay, typically, until holes are punched).
            let path = match &self.paths {
                Some(sink)
                    if self
                        .endpoint
                        .add_node_addr(ticket.node_addr().clone())
                        .is_ok() =>
                {
                    PathWatch::start(&self.endpoint, ticket.node_addr().node_id, sink.clone())
                }
                _ => None,
            };
            let connection = self
                .endpoint
                .connect(ticket.node_addr().clone(), ALPN)
                .await
                .map_err(|e| TransportError::Connect(format!("{e:#}")))?;
            let (mut send, recv) = connection
                .open_bi()
                .await
                .map_err(|e| TransportError::Connect(e.to_string()))?;
            send.write_all(b"\n")
                .await
                .map_err(|e| TransportError::Connect(e.to_string()))?;
            Ok(PeerLink::new(connection, send, recv, path))
        };
        tokio::time::timeout(timeout, connect)
            .await
            .map_err(|_| TransportError::ConnectTimeout(timeout))?
    }

    /// Stops accepting and closes the endpoint (and any connection still open). The
    /// session's channel has already closed its connection cleanly, so QUIC's draining period
    /// (three probe timeouts, ~180 ms on loopback) runs in the background instead of delaying
    /// the end of every session.
    pub async fn shutdown(mut self) {
        self.stop_accepting();
        forget_live(self.endpoint.node_id());
        let endpoint = self.endpoint.clone();
        tokio::spawn(async move { endpoint.close().await });
    }

    fn stop_accepting(&mut self) {
        if let Some(task) = self.accept_loop.take() {
            task.abort();
        }
    }
}

impl Drop for SessionEndpoint {
    fn drop(&mut self) {
        self.stop_accepting();
        forget_live(self.endpoint.node_id());
    }
}

/// Guests knocking at a hosting endpoint, in the order their streams opened.
pub struct Knocks {
    arrivals: mpsc::Receiver<PeerLink>,
    gate: Arc<Gate>,
    relay_watch: Option<RelayWatch>,
}

impl Knocks {
    /// The next connection with an open stream; an error once the endpoint is closed or
    /// its custom relay is lost.
    pub async fn next(&mut self) -> Result<PeerLink, TransportError> {
        let lost = async {
            match self.relay_watch.as_mut() {
                Some(watch) => watch.lost().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            link = self.arrivals.recv() => link.ok_or(TransportError::EndpointClosed),
            lost = lost => Err(lost),
        }
    }

    /// A session started: connections still queued and every later one are turned away.
    pub fn close(&mut self) {
        self.relay_watch = None;
        self.gate.served.send_replace(true);
        self.arrivals.close();
        while let Ok(link) = self.arrivals.try_recv() {
            turn_away(&link.connection);
        }
    }
}

/// What every incoming connection shares: the queue to the host, whether a session has
/// started, and the budget of connections still setting up.
struct Gate {
    arrive: mpsc::Sender<PeerLink>,
    served: watch::Sender<bool>,
    connecting: Arc<Semaphore>,
    endpoint: Endpoint,
    paths: Option<EventSink>,
}

/// Asks a custom relay every [`RELAY_CHECK_EVERY`] whether it is up, and tells once it
/// has not been for [`RELAY_LOSS_GRACE`]. Stops when dropped.
struct RelayWatch {
    lost: tokio::sync::oneshot::Receiver<TransportError>,
    task: JoinHandle<()>,
}

impl Drop for RelayWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl RelayWatch {
    fn start(url: iroh::RelayUrl) -> RelayWatch {
        let (tell, lost) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let mut last_up = tokio::time::Instant::now();
            loop {
                tokio::time::sleep(RELAY_CHECK_EVERY).await;
                match probe(&url).await {
                    Ok(()) => last_up = tokio::time::Instant::now(),
                    Err(reason) if last_up.elapsed() >= RELAY_LOSS_GRACE => {
                        let _ = tell.send(TransportError::RelayLost {
                            url: url.to_string(),
                            reason,
                        });
                        return;
                    }
                    Err(_) => {}
                }
            }
        });
        RelayWatch { lost, task }
    }

    /// Resolves once the relay is lost (never, if the watch stopped otherwise).
    async fn lost(&mut self) -> TransportError {
        match (&mut self.lost).await {
            Ok(lost) => lost,
            Err(_) => std::future::pending().await,
        }
    }
}

fn turn_away(connection: &Connection) {
    connection.close(VarInt::from_u32(BUSY_CODE), BUSY_REASON);
}

async fn accept_loop(endpoint: Endpoint, gate: Arc<Gate>) {
    while let Some(incoming) = endpoint.accept().await {
        match gate.connecting.clone().try_acquire_owned() {
            Ok(permit) => {
                tokio::spawn(serve_incoming(incoming, gate.clone(), permit));
            }
            Err(_) => incoming.refuse(),
        }
    }
}

/// Completes one incoming connection (bounded in time) and queues it for the host.
async fn serve_incoming(incoming: Incoming, gate: Arc<Gate>, _connecting: OwnedSemaphorePermit) {
    let mut served = gate.served.subscribe();
    if *served.borrow() {
        incoming.refuse();
        return;
    }
    let Ok(connecting) = incoming.accept() else {
        return;
    };
    let open = async {
        let connection = connecting.await.ok()?;
        let path = match (&gate.paths, connection.remote_node_id()) {
            (Some(sink), Ok(peer)) => PathWatch::start(&gate.endpoint, peer, sink.clone()),
            _ => None,
        };
        match connection.accept_bi().await {
            Ok((send, recv)) => Some(PeerLink::new(connection, send, recv, path)),
            Err(_) => None,
        }
    };
    let link = tokio::select! {
        opened = tokio::time::timeout(STREAM_OPEN_LIMIT, open) => match opened {
            Ok(Some(link)) => link,
            _ => return,
        },
        _ = served.wait_for(|served| *served) => return,
    };
    if *served.borrow() {
        turn_away(&link.connection);
        return;
    }
    if let Err(error) = gate.arrive.try_send(link) {
        let (mpsc::error::TrySendError::Full(link) | mpsc::error::TrySendError::Closed(link)) =
            error;
        turn_away(&link.connection);
    }
}

//! A send that would block while the socket's poller says writable must not freeze the
//! runtime the connection runs on. iroh's socket polls all of its paths at once (IPv4, IPv6,
//! the relay): with its IPv4 socket full once, it says writable (the IPv6 socket is) while
//! every send to an IPv4 peer would block. QUIC as published looped on that inside one poll,
//! so nothing else on the runtime ever ran again, not even the I/O driver that would see the
//! socket drain: a session's heartbeat, idle timeout and engine all stopped for good. Our
//! copy of it (vendor/iroh-quinn) tries such a send again a moment later instead.

use std::io::{self, IoSliceMut};
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::task::{Context, Poll};
use std::time::Duration;

use quinn::rustls::RootCertStore;
use quinn::rustls::pki_types::PrivatePkcs8KeyDer;
use quinn::udp::{RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, Runtime, TokioRuntime, UdpPoller};

/// A real UDP socket whose sends would block until told otherwise, behind a poller that
/// always says writable (as iroh's does while another of its paths is).
#[derive(Debug)]
struct BlockedSends {
    socket: Arc<dyn AsyncUdpSocket>,
    blocked: AtomicBool,
    refused: AtomicUsize,
}

#[derive(Debug)]
struct AlwaysWritable;

impl UdpPoller for AlwaysWritable {
    fn poll_writable(self: Pin<&mut Self>, _: &mut Context) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl AsyncUdpSocket for BlockedSends {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        Box::pin(AlwaysWritable)
    }

    fn try_send(&self, transmit: &Transmit) -> io::Result<()> {
        if self.blocked.load(SeqCst) {
            self.refused.fetch_add(1, SeqCst);
            return Err(io::ErrorKind::WouldBlock.into());
        }
        self.socket.try_send(transmit)
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        self.socket.poll_recv(cx, bufs, meta)
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    fn max_transmit_segments(&self) -> usize {
        self.socket.max_transmit_segments()
    }

    fn max_receive_segments(&self) -> usize {
        self.socket.max_receive_segments()
    }

    fn may_fragment(&self) -> bool {
        self.socket.may_fragment()
    }
}

/// A client whose first sends would block connects to an echo server on the same
/// single-threaded runtime and gets its bytes back. The block lifts from a task of that
/// runtime once a send was refused, so it never lifts if the connection spins.
async fn echo_through_a_blocked_socket() -> (Vec<u8>, usize) {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let cert = certified.cert.der().clone();
    let key = PrivatePkcs8KeyDer::from(certified.key_pair.serialize_der());
    let server_config = quinn::ServerConfig::with_single_cert(vec![cert.clone()], key.into())
        .expect("server config");
    let server = quinn::Endpoint::server(server_config, (Ipv4Addr::LOCALHOST, 0).into()).unwrap();
    let server_addr = server.local_addr().unwrap();
    tokio::spawn(async move {
        let connection = server.accept().await.unwrap().await.unwrap();
        let (mut send, mut recv) = connection.accept_bi().await.unwrap();
        let bytes = recv.read_to_end(1024).await.unwrap();
        send.write_all(&bytes).await.unwrap();
        send.finish().unwrap();
        connection.closed().await;
    });

    let runtime: Arc<dyn Runtime> = Arc::new(TokioRuntime);
    let socket = Arc::new(BlockedSends {
        socket: runtime
            .wrap_udp_socket(UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).unwrap())
            .unwrap(),
        blocked: AtomicBool::new(true),
        refused: AtomicUsize::new(0),
    });
    let mut client = quinn::Endpoint::new_with_abstract_socket(
        quinn::EndpointConfig::default(),
        None,
        socket.clone(),
        runtime,
    )
    .unwrap();
    let mut roots = RootCertStore::empty();
    roots.add(cert).unwrap();
    client.set_default_client_config(
        quinn::ClientConfig::with_root_certificates(Arc::new(roots)).unwrap(),
    );
    let unblocker = socket.clone();
    tokio::spawn(async move {
        while unblocker.refused.load(SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        unblocker.blocked.store(false, SeqCst);
    });

    let connection = client
        .connect(server_addr, "localhost")
        .unwrap()
        .await
        .unwrap();
    let (mut send, mut recv) = connection.open_bi().await.unwrap();
    send.write_all(b"ping").await.unwrap();
    send.finish().unwrap();
    let echo = recv.read_to_end(1024).await.unwrap();
    connection.close(0u32.into(), b"done");
    (echo, socket.refused.load(SeqCst))
}

#[test]
fn a_send_that_would_block_behind_a_writable_poller_leaves_the_runtime_running() {
    let (done, outcome) = std::sync::mpsc::channel();
    // Its own thread: a runtime stuck inside one poll cannot be stopped, only abandoned.
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _ = done.send(runtime.block_on(echo_through_a_blocked_socket()));
    });
    let (echo, refused) = outcome.recv_timeout(Duration::from_secs(30)).expect(
        "no echo within 30 s: the connection spun on its blocked send and its runtime never \
         ran the task that lifts the block",
    );
    assert!(refused > 0, "the test's socket never refused a send");
    assert_eq!(echo, b"ping");
}

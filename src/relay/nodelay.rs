//! TCP_NODELAY for every client of the relay. The relay crate leaves Nagle's algorithm on
//! for the connections it accepts, so a small write (one relayed QUIC packet) waits until
//! the client has acknowledged the previous one: up to a round trip per packet, which a
//! game of small frames pays many times a round. Linux gives an accepted socket the
//! listening socket's TCP_NODELAY, so setting it once on the relay's listener (found among
//! this process's descriptors by its address) covers every connection.

use std::net::SocketAddr;
use std::os::fd::BorrowedFd;

use socket2::SockRef;

/// Sets TCP_NODELAY on this process's listening socket bound to `addr`.
pub(super) fn on_listener(addr: SocketAddr) -> Result<(), String> {
    for fd in open_descriptors()? {
        // SAFETY: the descriptor is open in this process for the duration of this call
        // (listeners are only closed when the relay stops, which it has not).
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let socket = SockRef::from(&borrowed);
        let is_it = socket.local_addr().ok().and_then(|bound| bound.as_socket()) == Some(addr)
            && socket.is_listener().unwrap_or(false);
        if is_it {
            return socket.set_tcp_nodelay(true).map_err(|e| e.to_string());
        }
    }
    Err(format!(
        "no listening socket bound to {addr} in this process"
    ))
}

/// The numbers of this process's open file descriptors.
fn open_descriptors() -> Result<Vec<i32>, String> {
    let entries = std::fs::read_dir("/proc/self/fd").map_err(|e| e.to_string())?;
    Ok(entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_connections_inherit_the_listeners_nodelay() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        on_listener(addr).unwrap();
        let _client = std::net::TcpStream::connect(addr).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        assert!(accepted.nodelay().unwrap());
        let plain = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let _other = std::net::TcpStream::connect(plain.local_addr().unwrap()).unwrap();
        assert!(
            !plain.accept().unwrap().0.nodelay().unwrap(),
            "off unless set"
        );
    }

    #[test]
    fn a_missing_listener_is_an_error() {
        let error = on_listener("127.0.0.1:9".parse().unwrap()).unwrap_err();
        assert!(error.contains("127.0.0.1:9"), "{error}");
    }
}

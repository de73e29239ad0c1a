//! Raw HTTP/1.1 requests to a local server, written byte for byte (for requests a
//! well-behaved client library would never send: a foreign Host, two of them, a body that
//! never comes).

use std::io::{Read, Write};
use std::net::TcpStream;

/// One raw HTTP/1.1 request; returns the status code.
pub fn status_of(port: u16, request: &str) -> u16 {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {answer:?}"))
}

pub fn post(port: u16, host: &str, path: &str, headers: &str, body: &str) -> u16 {
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    status_of(port, &request)
}

pub fn get(port: u16, host: &str, path: &str, headers: &str) -> u16 {
    status_of(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{headers}\r\n"),
    )
}

//! Our relay as a process (`aigenora relay`, or the one `aigenora server --relay-listen`
//! runs): started from any command (plain, or inside a network namespace), with the
//! addresses it prints, and TLS material for it.

use std::process::Command;
use std::time::Duration;

use super::process::Proc;

/// How long a relay may take to start.
const START_LIMIT: Duration = Duration::from_secs(30);

/// What a relay prints once it listens: `aigenora relay listening on URL (stun ADDR) ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayLine {
    pub url: String,
    pub stun: Option<String>,
    pub metrics: Option<String>,
    pub captive_portal: Option<String>,
}

impl RelayLine {
    pub fn parse(line: &str) -> RelayLine {
        let rest = line
            .split("aigenora relay listening on ")
            .nth(1)
            .unwrap_or_else(|| panic!("not a relay line: {line:?}"));
        let url = rest.split_whitespace().next().unwrap().to_string();
        let service = |name: &str| {
            let start = rest.find(&format!("({name} "))? + name.len() + 2;
            let end = rest[start..].find(')')? + start;
            Some(rest[start..end].to_string())
        };
        RelayLine {
            url,
            stun: service("stun"),
            metrics: service("metrics"),
            captive_portal: service("captive portal"),
        }
    }
}

/// A running relay process; killed when dropped.
pub struct RelayProc {
    pub proc: Proc,
    pub line: RelayLine,
}

impl RelayProc {
    /// Runs `command` (an `aigenora relay ...` or `aigenora server --relay-listen ...`) and
    /// waits for its relay line.
    pub fn start(command: Command) -> RelayProc {
        let proc = Proc::spawn("relay", command);
        let line =
            RelayLine::parse(&proc.wait_for_line("aigenora relay listening on", START_LIMIT));
        RelayProc { proc, line }
    }

    pub fn url(&self) -> &str {
        &self.line.url
    }

    /// SIGTERM; the relay must exit 0 within a few seconds.
    pub fn stop(self) {
        let finished = self.proc.terminate(Duration::from_secs(10));
        assert!(
            finished.status.success(),
            "the relay exits 0 on SIGTERM: {}\n{}",
            finished.status,
            finished.stderr
        );
    }
}

/// A self-signed certificate for `name` and its key, as PEM files in `dir`: (cert, key).
pub fn self_signed(dir: &std::path::Path, name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let made = rcgen::generate_simple_self_signed(vec![name.to_string()]).unwrap();
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.key_pair.serialize_pem()).unwrap();
    (cert, key)
}

/// A loopback TCP port that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The value of counter `name` in Prometheus text (`name value` or `name_total value`).
pub fn counter(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let (key, value) = line.split_once(' ')?;
            (key == name || key == format!("{name}_total")).then(|| value.trim().parse().ok())?
        })
}

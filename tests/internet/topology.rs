//! A simulated internet in network namespaces, built by the test that needs it and torn down
//! when it is dropped (root only, as CI runs):
//!
//! ```text
//!   host 10.0.1.2 ── router A ── 203.0.113.2 ┐                     ┌ 192.0.2.2 ── router B ── guest 10.0.2.2
//!                   (NAT A)   wire or veth   └── public 198.51.100.0/24 ──┘      veth   (NAT B)
//!                                               .1 server  .2 relay  .3 second relay
//! ```
//!
//! Each router is a namespace that masquerades with nftables and, like a home router, drops
//! whatever nobody inside asked for (an unsolicited packet must not even leave a conntrack
//! entry, or it would change the port of the next outgoing mapping). [`Nat`] picks how it
//! maps: keeping the inside port for every destination (endpoint-independent, so holes can
//! be punched) or a random port per destination (symmetric). The link between router A and
//! the public network is either a veth pair or a user-space [`Wire`] with delay, loss and
//! stalls (this kernel has no netem qdisc).
//!
//! Only std, libc and the shared package installer: the benchmarks build the same topology.

use std::io::Write;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

#[path = "wire.rs"]
mod wire;

// The crate that includes this file provides `system` (tests/support/system.rs).
use super::system::ensure_programs;

pub use wire::{Shape, Wire};

/// The community server's address on the public network.
pub const SERVER_IP: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 1);
/// Our relay's address.
pub const RELAY_IP: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 2);
/// The second relay's address.
pub const SECOND_RELAY_IP: Ipv4Addr = Ipv4Addr::new(198, 51, 100, 3);
/// Router A's public address (NAT A's outside).
pub const ROUTER_A_IP: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 2);
/// Router B's public address (NAT B's outside).
pub const ROUTER_B_IP: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 2);
/// The public network's own address on its link to router B (a machine on the public
/// network, as router B sees it).
pub const PUBLIC_TOWARDS_B_IP: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
/// The public network's own address on its link to router A; a machine on the public
/// network answers at both, and router B routes to both.
pub const PUBLIC_TOWARDS_A_IP: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 1);

/// How a router maps inside addresses to its public address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nat {
    /// The inside port is kept for every destination (where free): a hole punched towards
    /// one peer is the address every peer sees.
    EndpointIndependent,
    /// A random outside port for every new destination: what a STUN server sees is not
    /// what the peer sees, so no hole can be punched.
    Symmetric,
}

/// The places of the topology, each its own network namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The public network: the server and the relays.
    Public,
    RouterA,
    RouterB,
    /// Behind NAT A.
    Host,
    /// Behind NAT B.
    Guest,
}

impl Place {
    const ALL: [Place; 5] = [
        Place::Public,
        Place::RouterA,
        Place::RouterB,
        Place::Host,
        Place::Guest,
    ];

    fn suffix(self) -> &'static str {
        match self {
            Place::Public => "pub",
            Place::RouterA => "nata",
            Place::RouterB => "natb",
            Place::Host => "host",
            Place::Guest => "guest",
        }
    }
}

/// How to build one topology.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub nat_a: Nat,
    pub nat_b: Nat,
    /// `Some`: router A reaches the public network through a user-space wire shaped so.
    pub wire: Option<Shape>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            nat_a: Nat::EndpointIndependent,
            nat_b: Nat::EndpointIndependent,
            wire: None,
        }
    }
}

/// A built topology; dropping it deletes its namespaces (and stops its wire).
pub struct Topology {
    prefix: String,
    wire: Option<Wire>,
}

impl Topology {
    /// Builds the namespaces, links, addresses, routes and NAT rules. Panics with the reason
    /// when this machine cannot (not root, no nftables and no way to install it).
    pub fn build(options: Options) -> Topology {
        ensure_tools();
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let prefix = format!(
            "aig{}x{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut topology = Topology { prefix, wire: None };
        topology.create(options);
        topology
    }

    /// The namespace name of `place` (for `ip netns exec`).
    pub fn ns(&self, place: Place) -> String {
        format!("{}-{}", self.prefix, place.suffix())
    }

    /// The wire between router A and the public network, when there is one.
    pub fn wire(&self) -> &Wire {
        self.wire
            .as_ref()
            .expect("this topology was built with a wire")
    }

    /// `program` to run in `place`.
    pub fn command(&self, place: Place, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", &self.ns(place)])
            .arg(program);
        command
    }

    /// Runs `work` on a thread that has entered `place`'s network namespace (sockets it
    /// opens live there), and returns its result.
    pub fn within<T: Send + 'static>(
        &self,
        place: Place,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> T {
        let path = PathBuf::from("/run/netns").join(self.ns(place));
        std::thread::spawn(move || {
            let file = std::fs::File::open(&path)
                .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
            use std::os::fd::AsRawFd;
            // SAFETY: setns on a valid namespace fd affects only this thread.
            let entered = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(entered, 0, "setns into {}", path.display());
            work()
        })
        .join()
        .expect("the work in the namespace panicked")
    }

    fn ip(&self, place: Place, args: &[&str]) {
        run(Command::new("ip").arg("-n").arg(self.ns(place)).args(args));
    }

    fn create(&mut self, options: Options) {
        for place in Place::ALL {
            run(Command::new("ip").args(["netns", "add", &self.ns(place)]));
            self.ip(place, &["link", "set", "lo", "up"]);
        }
        for ip in [SERVER_IP, RELAY_IP, SECOND_RELAY_IP] {
            self.ip(
                Place::Public,
                &["addr", "add", &format!("{ip}/32"), "dev", "lo"],
            );
        }
        match options.wire {
            Some(shape) => {
                let name = format!("{}w", self.prefix);
                let wire = Wire::open(&format!("{name}a"), &format!("{name}b"), shape);
                for (tun, place, as_name, addr) in [
                    (wire.outside_name(), Place::Public, "ra", "203.0.113.1/24"),
                    (wire.inside_name(), Place::RouterA, "wan", "203.0.113.2/24"),
                ] {
                    run(Command::new("ip").args(["link", "set", tun, "netns", &self.ns(place)]));
                    self.ip(place, &["link", "set", tun, "name", as_name]);
                    self.ip(place, &["addr", "add", addr, "dev", as_name]);
                    self.ip(place, &["link", "set", as_name, "up"]);
                }
                self.wire = Some(wire);
            }
            None => self.veth(
                Place::Public,
                "ra",
                "203.0.113.1",
                Place::RouterA,
                "wan",
                "203.0.113.2",
            ),
        }
        self.veth(
            Place::Public,
            "rb",
            "192.0.2.1",
            Place::RouterB,
            "wan",
            "192.0.2.2",
        );
        self.veth(
            Place::RouterA,
            "lan",
            "10.0.1.1",
            Place::Host,
            "eth0",
            "10.0.1.2",
        );
        self.veth(
            Place::RouterB,
            "lan",
            "10.0.2.1",
            Place::Guest,
            "eth0",
            "10.0.2.2",
        );
        for (router, gateway, nat) in [
            (Place::RouterA, "203.0.113.1", options.nat_a),
            (Place::RouterB, "192.0.2.1", options.nat_b),
        ] {
            self.ip(router, &["route", "add", "default", "via", gateway]);
            self.forwarding(router);
            self.nftables(router, nat);
        }
        self.forwarding(Place::Public);
        self.ip(Place::Host, &["route", "add", "default", "via", "10.0.1.1"]);
        self.ip(
            Place::Guest,
            &["route", "add", "default", "via", "10.0.2.1"],
        );
    }

    fn veth(&self, a: Place, a_name: &str, a_ip: &str, b: Place, b_name: &str, b_ip: &str) {
        self.ip(
            a,
            &[
                "link",
                "add",
                a_name,
                "type",
                "veth",
                "peer",
                "name",
                b_name,
                "netns",
                &self.ns(b),
            ],
        );
        self.ip(a, &["addr", "add", &format!("{a_ip}/24"), "dev", a_name]);
        self.ip(b, &["addr", "add", &format!("{b_ip}/24"), "dev", b_name]);
        self.ip(a, &["link", "set", a_name, "up"]);
        self.ip(b, &["link", "set", b_name, "up"]);
    }

    fn forwarding(&self, place: Place) {
        run(self
            .command(place, "sysctl")
            .args(["-qw", "net.ipv4.ip_forward=1"]));
    }

    fn nftables(&self, router: Place, nat: Nat) {
        let mapping = match nat {
            Nat::EndpointIndependent => "masquerade",
            Nat::Symmetric => "masquerade fully-random",
        };
        let rules = format!(
            r#"table ip nat {{
  chain outbound {{
    type nat hook postrouting priority srcnat; policy accept;
    oifname "wan" {mapping}
  }}
}}
table ip filter {{
  chain through {{
    type filter hook forward priority 0; policy drop;
    ct state established,related accept
    iifname "lan" accept
  }}
  chain inbound {{
    type filter hook input priority 0; policy drop;
    ct state established,related accept
    iifname "lan" accept
    iifname "lo" accept
  }}
}}
"#
        );
        let mut child = self
            .command(router, "nft")
            .args(["-f", "-"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run nft");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(rules.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "nft rules for {router:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        self.wire.take();
        for place in Place::ALL {
            let _ = Command::new("ip")
                .args(["netns", "del", &self.ns(place)])
                .stderr(Stdio::null())
                .status();
        }
    }
}

fn run(command: &mut Command) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Root, `ip` and `nft` (installed from Debian's `iproute2` and `nftables` packages when
/// missing). Panics with the reason otherwise: these tests never skip.
fn ensure_tools() {
    static READY: OnceLock<Result<(), String>> = OnceLock::new();
    let ready = READY.get_or_init(|| {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(
                "the simulated internet needs root (network namespaces and nftables); \
                        CI runs the tests as root"
                    .into(),
            );
        }
        ensure_programs(&["ip", "nft"], &["iproute2", "nftables"]);
        Ok(())
    });
    if let Err(reason) = ready {
        panic!("{reason}");
    }
}

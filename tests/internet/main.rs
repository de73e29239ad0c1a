//! Sessions across a simulated internet (root only, as CI runs; each test builds its own
//! topology of network namespaces and tears it down): a public network with the community
//! server and our relay, a host behind NAT A, a guest behind NAT B, a second relay, and a
//! user-space wire for delay, loss and stalls (`topology`). Real processes of our binary and
//! of the reference client, real iroh.
//!
//! - `paths`: through our relay, then direct where the NATs allow it; relayed behind a
//!   symmetric NAT; the relay stopping mid-session and before the start; a second relay.
//! - `reference`: the reference client in the same topology, as guest and as host.
//! - `lossy`: 100 ms round trip and 2% loss each way; a stall past the heartbeat timeout.
//! - `rooms`: a room whose leader and members sit behind different NATs.

#[path = "../support/mod.rs"]
mod support;

// What `topology` needs from the support module, where the benchmark provides it too.
use support::system;

mod fixture;
mod lossy;
mod paths;
mod reference;
mod rooms;
mod topology;

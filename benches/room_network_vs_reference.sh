#!/usr/bin/env bash
# A 32-member Community Room over loopback iroh and our server, the same 31 members of ours
# each time: our leader, then the reference client's leader process (`ROOM_LEADER=reference`),
# RUNS times each, interleaved (benches/room_network.rs, release build).
# usage: benches/room_network_vs_reference.sh [RUNS]   (ROOM_ACTIONS=100 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-2}
cargo bench --bench room_network --no-run --quiet 2>/dev/null
bench=$(ls -t target/release/deps/room_network-* | grep -v '\.d$' | head -n 1)
for _ in $(seq "$runs"); do
    "$bench"
    ROOM_LEADER=reference "$bench"
done

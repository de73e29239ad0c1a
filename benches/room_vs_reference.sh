#!/usr/bin/env bash
# A 32-member Community Room in one process, the leader's work per action and a member's
# verification per envelope: ours (benches/room_authority.rs, release build) and the
# reference's (benches/room_authority_reference.py), RUNS times each, interleaved.
# usage: benches/room_vs_reference.sh [RUNS]   (ROOM_ACTIONS=500 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
python=${AIGENORA_REFERENCE_PYTHON:-target/reference-venv/bin/python}
cargo bench --bench room_authority --no-run --quiet 2>/dev/null
bench=$(ls -t target/release/deps/room_authority-* | grep -v '\.d$' | head -n 1)
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$runs"); do
    "$bench"
    "$python" benches/room_authority_reference.py
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"

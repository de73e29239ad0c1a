#!/usr/bin/env bash
# One hand of each four-seat table with four agent seats in one process: through our leader
# (benches/tables.rs, release build) and through the reference's leader and hooks
# (benches/tables_reference.py; its seats chosen by our seat agents), RUNS times, interleaved:
# run N deals with deal_seed "table-bench-N" on both sides (the two deal differently). The
# reference runs twice: as it is, and without writing its files inside the timed calls.
# Prints every hand as a JSON line, then per table the median hand, its actions, ms per action
# and the reference's time over ours (benches/tables_summary.py).
# usage: benches/tables_vs_reference.sh [RUNS]   (TABLES="alias ..." to pick the tables)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
tables=${TABLES:-texas-holdem-v1 contract-bridge-v1 four-player-landlord-v1 upgrade-tractor-v1 aether-sigil-v1 classical-mahjong-v1}
python=${AIGENORA_REFERENCE_PYTHON:-target/reference-venv/bin/python}
cargo bench --bench tables --no-run --quiet 2>/dev/null
bench=$(ls -t target/release/deps/tables-* | grep -v '\.d$' | head -n 1)
hands=$(mktemp)
trap 'rm -f "$hands"' EXIT
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq "$runs"); do
    # shellcheck disable=SC2086
    "$bench" "$run" $tables | tee -a "$hands"
    # shellcheck disable=SC2086
    "$python" benches/tables_reference.py "$run" $tables | tee -a "$hands"
    # shellcheck disable=SC2086
    "$python" benches/tables_reference.py --no-files "$run" $tables | tee -a "$hands"
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 benches/tables_summary.py < "$hands"

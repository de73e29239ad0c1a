#!/usr/bin/env bash
# `protocol test` of Rock-Paper-Scissors with 99 fixed rounds: our binary running our
# built-in, against the reference running its own RPS with the same options, as whole
# processes (wall time, mean of RUNS runs). Also times our binary on the reference's RPS
# hooks, so the engine is compared on identical hook code.
#
# usage: benches/selfplay_vs_reference.sh [RUNS]     (default 5)
# env: AIGENORA_REFERENCE_PYTHON (default target/reference-venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
python=${AIGENORA_REFERENCE_PYTHON:-target/reference-venv/bin/python}
package=$("$python" -c 'import aigenora, os; print(os.path.dirname(aigenora.__file__))')
reference_rps=$(ls -d "$package"/protocols/43a80648/*)
options='{"best_of":99,"termination":"fixed_rounds"}'
ours_options='{"best_of":99,"termination":"fixed_rounds","moves":"rock,paper,scissors"}'
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
cargo build --release --quiet
ours=target/release/aigenora

mean_ms() { # command... -> mean wall milliseconds per run
    local start end
    start=$(date +%s%N)
    for _ in $(seq "$runs"); do "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }; done
    end=$(date +%s%N)
    echo $(( (end - start) / runs / 1000000 ))
}

ours_ms=$(mean_ms "$ours" protocol test rock-paper-scissors --options "$ours_options" --state-base "$state")
ours_on_ref_ms=$(mean_ms "$ours" protocol test "$reference_rps" --options "$options" --state-base "$state")
ref_ms=$(mean_ms "$python" -m aigenora protocol test "$reference_rps" --options "$options" --state-base "$state")
echo "99-round RPS self-play, mean of $runs runs (wall time per process)"
echo "  aigenora, built-in rock-paper-scissors:   ${ours_ms} ms"
echo "  aigenora, the reference's RPS hooks:      ${ours_on_ref_ms} ms"
echo "  reference, its own RPS:                   ${ref_ms} ms"
awk -v r="$ref_ms" -v o="$ours_ms" 'BEGIN { printf "  speedup: %.1fx (goal: >= 10x)\n", r / o }'

#!/usr/bin/env bash
# Times `aigenora protocol hash` against the reference's `aigenora protocol hash` on the same
# spec, as whole processes (what an agent or CI script pays per call).
#
# usage: benches/hash_vs_reference.sh [SPEC] [RUNS]
#   SPEC  default: the reference's Rock-Paper-Scissors spec from the test venv
#   RUNS  default: 20
# env: AIGENORA_REFERENCE_PYTHON (default target/reference-venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${AIGENORA_REFERENCE_PYTHON:-target/reference-venv/bin/python}
package=$("$python" -c 'import aigenora, os; print(os.path.dirname(aigenora.__file__))')
spec=${1:-$package/protocols/43a80648/1a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f/spec.json}
runs=${2:-20}
cargo build --release --quiet
ours=target/release/aigenora

time_runs() { # command... -> mean milliseconds per run
    local start end
    start=$(date +%s%N)
    for _ in $(seq "$runs"); do "$@" >/dev/null; done
    end=$(date +%s%N)
    echo $(( (end - start) / runs / 1000 ))
}

[ "$("$ours" protocol hash "$spec")" = "$("$python" -m aigenora protocol hash "$spec")" ] || { echo "hash mismatch" >&2; exit 1; }
ours_us=$(time_runs "$ours" protocol hash "$spec")
ref_us=$(time_runs "$python" -m aigenora protocol hash "$spec")
echo "spec:      $spec"
echo "aigenora:  ${ours_us} µs per process"
echo "reference: ${ref_us} µs per process"
awk -v r="$ref_us" -v o="$ours_us" 'BEGIN { printf "speedup:   %.0fx (goal: >= 50x)\n", r / o }'

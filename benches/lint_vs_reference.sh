#!/usr/bin/env bash
# The spec commands a CI script runs, as whole processes, side by side in one run:
# Single processes are timed by hyperfine (medians); the 1,000-spec comparison by wall clock.
#   1. `protocol hash SPEC`, ours against the reference's (goal: >= 50x);
#   2. `validate SPEC` (ours lints the whole spec) against the reference's only `validate`,
#      `validate SPEC MESSAGE` (it loads the spec and checks one message; goal: >= 50x), and
#      `validate SPEC MESSAGE` on both sides;
#   3. `validate` of 1,000 specs in one call against 1,000 single-file calls of ours (goal:
#      >= 20x), and its time per spec against the in-process lint of `cargo bench --bench
#      spec` ("lint all built-ins", 21 specs).
#
# usage: benches/lint_vs_reference.sh [RUNS]
#   RUNS  processes per single-spec measurement (default: 40)
# env: AIGENORA_REFERENCE_PYTHON (default target/reference-venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${AIGENORA_REFERENCE_PYTHON:-target/reference-venv/bin/python}
package=$("$python" -c 'import aigenora, os; print(os.path.dirname(aigenora.__file__))')
spec=$package/protocols/43a80648/1a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f/spec.json
message='{"action":"commit","round":0,"hash":"'$(printf 'a%.0s' $(seq 64))'"}'
runs=${1:-40}
cargo build --release --quiet
ours=target/release/aigenora
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 2; }

mean_us() { # runs command... -> mean microseconds per process, the loop's own cost included
    local count=$1 start end
    shift
    start=$(date +%s%N)
    for _ in $(seq "$count"); do "$@" >/dev/null 2>&1 || true; done
    end=$(date +%s%N)
    echo $(( (end - start) / count / 1000 ))
}
# runs command... -> the median microseconds of one process (hyperfine, no shell between):
# a median, because on a shared box a few runs of a 2 ms process land on a busy core and
# double, which moves a mean of ours far more than the reference's 100+ ms.
median_us() {
    local count=$1 json
    shift
    json=$(mktemp)
    hyperfine -N -i --warmup 3 --runs "$count" --export-json "$json" -- "$(printf '%q ' "$@")" >/dev/null 2>&1
    "$python" -c 'import json, sys; print(int(json.load(open(sys.argv[1]))["results"][0]["median"] * 1e6))' "$json"
    rm -f "$json"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

[ "$("$ours" protocol hash "$spec")" = "$("$python" -m aigenora protocol hash "$spec")" ] \
    || { echo "hash mismatch" >&2; exit 1; }
"$ours" validate --quiet "$spec" "$message" --direction host_to_guest

echo "spec: $spec"
hash_ours=$(median_us "$runs" "$ours" protocol hash "$spec")
hash_ref=$(median_us "$runs" "$python" -m aigenora protocol hash "$spec")
echo "protocol hash:            ours ${hash_ours} µs, reference ${hash_ref} µs: $(ratio "$hash_ref" "$hash_ours")x (goal >= 50x)"
lint_ours=$(median_us "$runs" "$ours" validate "$spec")
message_ref=$(median_us "$runs" "$python" -m aigenora validate "$spec" "$message" --direction host_to_guest)
echo "validate SPEC:            ours ${lint_ours} µs (whole lint), reference ${message_ref} µs (validate SPEC MESSAGE): $(ratio "$message_ref" "$lint_ours")x (goal >= 50x)"
message_ours=$(median_us "$runs" "$ours" validate "$spec" "$message" --direction host_to_guest)
echo "validate SPEC MESSAGE:    ours ${message_ours} µs, reference ${message_ref} µs: $(ratio "$message_ref" "$message_ours")x"

# 1,000 specs: the reference's samples and our built-ins, over and over, one per directory.
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mapfile -t sources < <(find "$package/protocols" src/protocols examples/protocols -name spec.json | sort)
for i in $(seq 0 999); do
    mkdir -p "$tree/$i"
    cp "${sources[$((i % ${#sources[@]}))]}" "$tree/$i/spec.json"
done
one_call_us=$(mean_us 5 "$ours" validate --quiet "$tree")
start=$(date +%s%N)
for file in "$tree"/*/spec.json; do "$ours" validate --quiet "$file" >/dev/null 2>&1 || true; done
end=$(date +%s%N)
many_calls_us=$(( (end - start) / 1000 ))
echo "validate 1,000 specs:     one call ${one_call_us} µs, 1,000 calls ${many_calls_us} µs: $(ratio "$many_calls_us" "$one_call_us")x (goal >= 20x)"
per_spec=$(awk -v t="$one_call_us" 'BEGIN { printf "%.1f", t / 1000 }')

# The in-process lint of the same kind of specs (criterion, a short run).
line=$(cargo bench --quiet --bench spec -- "lint all built-ins" --warm-up-time 1 --measurement-time 3 2>/dev/null \
    | grep -A1 "lint all built-ins" | grep -o 'time: *\[[^]]*\]' | head -n 1)
in_process=$(echo "$line" | awk '{ v = $4; u = $5; if (u == "ms") v *= 1000; else if (u == "ns") v /= 1000; printf "%.1f", v / 21 }')
echo "time per spec:            one validate call ${per_spec} µs (read, parse, lint, two threads), in-process lint ${in_process} µs ($line for 21 specs)"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/usr/bin/env bash
# A whole mental-poker game, ours against the reference's, on the same deck and strategy: the
# reference's own Crazy Eights hooks (52 cards, hands of 5, its scripted bot) on both sides,
# hybrid control (both clients' default; no decisions are submitted, so every turn falls back to the bot), host and guest in one process. Reports, as means of RUNS runs:
#  - end to end: `protocol test` as a whole process (interpreter start, hooks, setup with two
#    RSA keys, deal, play, audit, receipts), ours vs the reference's own CLI;
#  - the game's phases from both sides' events (setup, play, audit, game), ours vs the
#    reference's engine driven with event buses (benches/mental_poker_reference.py).
# Runs are interleaved. Each game is dealt afresh, so its length varies from run to run.
#
# usage: benches/mental_poker_vs_reference.sh [RUNS]     (default 10)
# env: AIGENORA_REFERENCE_PYTHON (default target/reference-venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
python=${AIGENORA_REFERENCE_PYTHON:-target/reference-venv/bin/python}
package=$("$python" -c 'import aigenora, os; print(os.path.dirname(aigenora.__file__))')
crazy_eights=$(ls -d "$package"/protocols/3a3c352a/*)
options='{"hand_size":5}'
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo build --release --quiet
ours=$PWD/target/release/aigenora

measure() { # command... -> "wall_ms cpu_ms" (CPU: user + system, all threads)
    /usr/bin/time -f '%e %U %S' -o "$work/time" "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
    awk '{ printf "%d %d\n", $1 * 1000, ($2 + $3) * 1000 }' "$work/time"
}

echo "mental poker, Crazy Eights (reference hooks, hand_size 5), $runs runs each, load $(cut -d' ' -f1-3 /proc/loadavg)"
ours_wall=0 ours_cpu=0 ref_wall=0 ref_cpu=0
for run in $(seq "$runs"); do
    state=$work/ours-$run
    read -r wall cpu < <(measure "$ours" protocol test "$crazy_eights" --options "$options" --state-base "$state")
    ours_wall=$((ours_wall + wall)) ours_cpu=$((ours_cpu + cpu))
    echo "ours $(ls -d "$state"/host-*/events.jsonl) $(ls -d "$state"/guest-*/events.jsonl)" >>"$work/runs.txt"
    read -r wall cpu < <(measure "$python" -m aigenora protocol test "$crazy_eights" --options "$options" --state-base "$work/ref-cli-$run")
    ref_wall=$((ref_wall + wall)) ref_cpu=$((ref_cpu + cpu))
    "$python" benches/mental_poker_reference.py "$crazy_eights" "$options" "$work/ref-$run"
    echo "reference $work/ref-$run/host/events.jsonl $work/ref-$run/guest/events.jsonl" >>"$work/runs.txt"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "end to end (protocol test, whole process, mean):"
awk -v ow="$ours_wall" -v rw="$ref_wall" -v oc="$ours_cpu" -v rc="$ref_cpu" -v n="$runs" 'BEGIN {
    printf "  wall: ours %d ms, reference %d ms: %.1fx (goal: >= 5x)\n", ow / n, rw / n, rw / ow
    printf "  CPU:  ours %d ms, reference %d ms: %.1fx\n", oc / n, rc / n, rc / oc }'
"$python" benches/mental_poker_timeline.py "$work/runs.txt"

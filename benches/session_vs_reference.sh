#!/usr/bin/env bash
# A 99-round Rock-Paper-Scissors session over iroh on loopback, host and guest as separate
# daemon processes through one `aigenora server`: ours (built-in RPS, relays disabled)
# against the reference (its own RPS, same options; its iroh node has no relay switch, so
# run this offline for a like-for-like loopback session). Both control modes, RUNS runs
# each, interleaved. Timelines come from both sides' events.jsonl (benches/session_timeline.py).
#
# usage: benches/session_vs_reference.sh [RUNS]     (default 5)
# env: AIGENORA_REFERENCE_PYTHON (default target/reference-venv/bin/python)
#      BENCH_OURS=/path/to/aigenora: play that build (none is built) instead of target/release's
#      BENCH_BEFORE=/path/to/an/older/aigenora: also play that build ("before"), interleaved,
#      for a before/after comparison in one run

set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
# Absolute (runs cd into the work dir), without resolving the venv's symlink.
python=$(realpath -s "${AIGENORA_REFERENCE_PYTHON:-target/reference-venv/bin/python}")
ours=${BENCH_OURS:-}
if [ -z "$ours" ]; then
    cargo build --release --quiet
    ours=$PWD/target/release/aigenora
fi
before=${BENCH_BEFORE:-}
work=$(mktemp -d)
server_pid=
cleanup() {
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# The lowest proof of work: registering is not what is measured.
"$ours" server --listen 127.0.0.1:0 --database "sqlite://$work/server.sqlite3" --pow-difficulty 1 \
    >"$work/server.out" 2>&1 &
server_pid=$!
for _ in $(seq 50); do grep -q "listening on" "$work/server.out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o 'http://[0-9.:]*' "$work/server.out" | head -1)
export P2P_SERVER=$url
ref() { "$python" -m aigenora "$@"; }

for who in alice bob; do
    "$ours" --data-dir "$work/ours-$who" --server "$url" init >/dev/null
    "$ours" --data-dir "$work/ours-$who" --server "$url" register --nickname "$who" >/dev/null
    ref init --data-dir "$work/ref-$who" >/dev/null
    ref register --nickname "$who" --data-dir "$work/ref-$who" >/dev/null
done
# The reference host does not register its protocol; its own client does it once.
ref_rps=$(ls -d "$work"/ref-alice/protocols/43a80648/*)
ref protocol register "$ref_rps/spec.json" --data-dir "$work/ref-alice" >/dev/null
ours_options='{"best_of":99,"termination":"fixed_rounds","moves":"rock,paper,scissors"}'
ref_options='{"best_of":99,"termination":"fixed_rounds"}'

# While a game runs the harness starts no process: on these 2 cores every fork and exec (a
# grep, a sed, a sleep) takes a millisecond or more from the two players, and a 99-round game
# of ours lasts about 40 ms. Everything below that runs after a `join` is bash builtins.
exec {nap_fd}<> <(:) # a pipe nothing writes to: `read -t` on it sleeps without a process
nap() { read -r -t "$1" -u "$nap_fd" _ || true; }
field() { # VAR NAME TEXT: VAR := that (string) field of TEXT's last JSON line
    local line last= pattern="\"$2\": *\"([^\"]*)\""
    while IFS= read -r line; do [[ $line == '{'* ]] && last=$line; done <<<"$3"
    [[ $last =~ $pattern ]] || { echo "no $2 in: $3" >&2; exit 1; }
    printf -v "$1" '%s' "${BASH_REMATCH[1]}"
}
absolute() { # VAR PATH: VAR := PATH, made absolute against the work dir
    case $2 in /*) printf -v "$1" '%s' "$2" ;; *) printf -v "$1" '%s' "$work/$2" ;; esac
}
wait_ended() { # session dir...: until each has logged session_ended (120 s at most)
    local dir lines i deadline=$((SECONDS + 120))
    nap 0.3 # longer than a game of ours: the first look comes after it ended
    for dir in "$@"; do
        while :; do
            lines=()
            [ -e "$dir/events.jsonl" ] && mapfile -t lines <"$dir/events.jsonl"
            for ((i = ${#lines[@]} - 1; i >= 0 && i >= ${#lines[@]} - 10; i--)); do
                [[ ${lines[i]} == *'"session_ended"'* ]] && continue 3
            done
            ((SECONDS < deadline)) || { echo "no session_ended in $dir" >&2; exit 1; }
            nap 0.1
        done
    done
}

one_run() { # impl mode
    local impl=$1 mode=$2 started joined post_id launch host_dir guest_dir binary=$ours
    [ "$impl" = before ] && binary=$before
    cd "$work"
    if [ "$impl" != reference ]; then
        started=$("$binary" --data-dir ours-alice --server "$url" host --protocol-dir rock-paper-scissors \
            --options "$ours_options" --control-mode "$mode" --relay disabled --daemon)
        field post_id post_id "$started"
        launch=$EPOCHREALTIME
        joined=$("$binary" --data-dir ours-bob --server "$url" join "$post_id" \
            --control-mode "$mode" --relay disabled --daemon)
    else
        started=$(ref host --protocol-dir "$ref_rps" --options "$ref_options" --control-mode "$mode" \
            --data-dir ref-alice --daemon)
        field post_id post_id "$started"
        launch=$EPOCHREALTIME
        joined=$(ref join "$post_id" --control-mode "$mode" --data-dir ref-bob --daemon)
    fi
    field host_dir state_dir "$started"
    absolute host_dir "$host_dir"
    field guest_dir state_dir "$joined"
    absolute guest_dir "$guest_dir"
    wait_ended "$host_dir" "$guest_dir"
    sleep 1 # let both daemons report to the server and exit before the next run
    echo "$impl $mode $launch $host_dir $guest_dir" >>"$work/runs.txt"
    cd - >/dev/null
}

echo "session_vs_reference: $runs runs per implementation and mode, server $url, load $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in autonomous hybrid; do
    for _ in $(seq "$runs"); do
        one_run ours "$mode"
        [ -n "$before" ] && one_run before "$mode"
        one_run reference "$mode"
    done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$python" benches/session_timeline.py "$work/runs.txt"

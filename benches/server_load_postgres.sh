#!/bin/sh
# The community server load benchmark (benches/server_load.rs) on PostgreSQL: starts a
# throwaway cluster (durable settings: fsync and synchronous_commit on, as SQLite's
# synchronous=FULL), then runs the benchmark against one instance and against two
# instances sharing one database, each on a fresh database. Needs initdb/pg_ctl/psql on
# PATH or in /usr/lib/postgresql/*/bin; as root, the cluster runs as the unprivileged user
# aigenora-pg (created if missing). BENCH_CLIENTS / BENCH_SECONDS as for server_load.sh.
set -eu
cd "$(dirname "$0")/.."
if ! command -v initdb >/dev/null 2>&1; then
    PATH="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1):$PATH"
fi
run_as() { "$@"; }
if [ "$(id -u)" = 0 ]; then
    id -u aigenora-pg >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin aigenora-pg
    run_as() { runuser -u aigenora-pg -- "$@"; }
fi
dir=$(mktemp -d)
[ "$(id -u)" = 0 ] && chown aigenora-pg "$dir"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run_as initdb -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C >/dev/null
trap 'run_as pg_ctl -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
run_as pg_ctl -D "$dir/data" -l "$dir/log" -w \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200" start >/dev/null
base="postgres://postgres@127.0.0.1:$port"
for instances in 1 2; do
    db="bench_$instances"
    psql "$base/postgres" -q -c "CREATE DATABASE $db"
    echo "== PostgreSQL, $instances instance(s)"
    BENCH_DATABASE="$base/$db" BENCH_INSTANCES=$instances \
        BENCH_CLIENTS="${BENCH_CLIENTS:-16}" BENCH_SECONDS="${BENCH_SECONDS:-5}" \
        cargo bench --bench server_load
done

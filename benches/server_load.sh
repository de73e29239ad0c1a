#!/bin/sh
# Builds the release server and runs the load benchmark (benches/server_load.rs) on loopback.
# BENCH_CLIENTS concurrent signed clients, BENCH_SECONDS per phase.
set -eu
cd "$(dirname "$0")/.."
BENCH_CLIENTS="${BENCH_CLIENTS:-16}" BENCH_SECONDS="${BENCH_SECONDS:-5}" cargo bench --bench server_load

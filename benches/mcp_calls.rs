//! What one MCP tool call costs over stdio: `aigenora mcp` as a child process, spoken to in
//! newline-delimited JSON-RPC as any stdio client does, each `tools/call` timed from writing
//! the request to reading and parsing its result. Tools: `session_snapshot` of a session
//! directory and `whoami` (a cheap one). Goal: p50 under 2 ms per call.
//! `cargo bench --bench mcp_calls`; `BENCH_CALLS` per tool (default 2000).

// Each benchmark uses its own part of the shared helpers.
#[allow(dead_code)]
mod common;

use std::time::Instant;

use common::mcp::Rpc;
use common::percentile_ms as percentile;
use serde_json::json;

/// A session directory as a running human-controlled guest leaves it, with a few events.
fn session_dir(data: &std::path::Path) -> std::path::PathBuf {
    let dir = data.join("sessions").join("guest-1");
    std::fs::create_dir_all(&dir).unwrap();
    let record = json!({"role": "guest", "status": "running", "protocol_id": "a".repeat(64),
        "local_control_mode": "human", "pid": std::process::id()});
    std::fs::write(dir.join("session.json"), record.to_string()).unwrap();
    let mut events = String::new();
    for round in 0..20 {
        let msg = json!({"action": "commit", "round": round, "hash": "b".repeat(64)});
        let event = json!({"ts": "2026-12-02T00:00:00Z", "type": "protocol_message",
            "data": {"direction": "received", "msg": msg}});
        events.push_str(&format!("{event}\n"));
    }
    std::fs::write(dir.join("events.jsonl"), events).unwrap();
    dir
}

fn main() {
    let calls: usize = std::env::var("BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("agent");
    let state_dir = session_dir(&data);
    let mut rpc = Rpc::start(&data, "http://127.0.0.1:9");
    let pid = rpc.pid();
    println!(
        "aigenora mcp over stdio, {calls} calls per tool, load {}",
        common::load_average()
    );
    let tools = [
        ("session_snapshot", json!({"state_dir": state_dir})),
        ("whoami", json!({})),
    ];
    let view = rpc.request(
        "tools/call",
        json!({"name": "session_snapshot", "arguments": tools[0].1}),
    );
    assert_eq!(view["structuredContent"]["status"], "running", "{view}");
    for (name, arguments) in tools {
        let params = json!({"name": name, "arguments": arguments});
        for _ in 0..100 {
            rpc.request("tools/call", params.clone());
        }
        let cpu_before = common::cpu_seconds(&pid);
        let mut times = Vec::with_capacity(calls);
        for _ in 0..calls {
            let started = Instant::now();
            let result = rpc.request("tools/call", params.clone());
            times.push(started.elapsed());
            assert!(result["structuredContent"].is_object(), "{result}");
        }
        let cpu = common::cpu_seconds(&pid) - cpu_before;
        times.sort();
        println!(
            "{name:<17} p50 {:.3} ms  p99 {:.3} ms  max {:.3} ms  server CPU {:.0} µs/call",
            percentile(&times, 0.5),
            percentile(&times, 0.99),
            percentile(&times, 1.0),
            cpu / calls as f64 * 1e6,
        );
    }
}

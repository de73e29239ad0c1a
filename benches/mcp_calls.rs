//! What one MCP tool call costs over stdio: `aigenora mcp` as a child process, spoken to in
//! newline-delimited JSON-RPC as any stdio client does, each `tools/call` timed from writing
//! the request to reading and parsing its result. Tools: `session_snapshot` of a session
//! directory and `whoami` (a cheap one). Goal: p50 under 2 ms per call.
//! `cargo bench --bench mcp_calls`; `BENCH_CALLS` per tool (default 2000).

// Each benchmark uses its own part of the shared helpers.
#[allow(dead_code)]
mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// One JSON-RPC exchange partner over the child's pipes.
struct Rpc {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Rpc {
    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns its result, failing on an error or a tool error.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let answer: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
        assert_eq!(answer["id"], id, "{answer}");
        let result = answer["result"].clone();
        assert!(result.is_object(), "{answer}");
        assert_ne!(result["isError"], true, "{answer}");
        result
    }
}

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

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

fn main() {
    let calls: usize = std::env::var("BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("agent");
    let state_dir = session_dir(&data);
    let mut child = Command::new(env!("CARGO_BIN_EXE_aigenora"))
        .arg("--data-dir")
        .arg(&data)
        .args(["--server", "http://127.0.0.1:9", "mcp"])
        .env_remove("AIGENORA_SERVER")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start aigenora mcp");
    let pid = child.id().to_string();
    let mut rpc = Rpc {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()),
        next_id: 0,
    };
    let client = json!({"name": "mcp_calls bench", "version": "0"});
    rpc.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}),
    );
    rpc.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
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
    drop(rpc);
    let _ = child.wait();
}

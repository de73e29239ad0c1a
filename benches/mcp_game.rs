//! A 9-round rock-paper-scissors whose guest, in human control, is driven by an agent two
//! ways against the same kind of autonomous host on the same community server (ours, in
//! process, on loopback): through `aigenora mcp` tool calls (`join`, then `session_wait` and
//! `session_decide` for each window) and through the CLI (`join --daemon`, one
//! `session snapshot --follow --json` read line by line, `session decide` for each window).
//! Each game is timed from the join to the driver seeing the session's end; the two ways
//! take turns. Goal: the MCP-driven game within 1.5× of the CLI-driven one.
//! `cargo bench --bench mcp_game`; `BENCH_GAMES` per way (default 3).

// Each benchmark uses its own part of the shared helpers.
#[allow(dead_code)]
mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use aigenora::server;
use common::mcp::Rpc;
use serde_json::{Value, json};

/// Exactly nine rounds, the host always playing rock.
const OPTIONS: &str = r#"{"best_of": 9, "termination": "fixed_rounds", "moves": "rock"}"#;
const ROUNDS: u64 = 9;

/// `aigenora --data-dir DATA --server URL` on loopback.
fn aigenora(data: &Path, url: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_aigenora"));
    command
        .arg("--data-dir")
        .arg(data)
        .args(["--server", url])
        .env_remove("AIGENORA_SERVER")
        .env("AIGENORA_RELAY", "disabled");
    command
}

/// Runs a command that must succeed: its stdout as JSON.
fn json_of(command: &mut Command) -> Value {
    let output = command.output().unwrap();
    assert!(output.status.success(), "{command:?}: {output:?}");
    serde_json::from_slice(&output.stdout).unwrap_or(Value::Null)
}

/// A fresh autonomous host's invitation: its post_id.
fn host(alice: &Path, url: &str) -> String {
    let hosting = json_of(aigenora(alice, url).args([
        "host",
        "--protocol-dir",
        "rock-paper-scissors",
        "--options",
        OPTIONS,
        "--control-mode",
        "autonomous",
        "--daemon",
    ]));
    hosting["post_id"].as_str().unwrap().to_string()
}

/// The session ended closed, with every round answered by the driver.
fn check_end(state_dir: &Path, answered: u64) {
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(state_dir.join("session.json")).unwrap())
            .unwrap();
    assert_eq!(record["status"], "closed", "{record}");
    assert_eq!(answered, ROUNDS, "{record}");
}

/// The guest driven through MCP tools.
fn through_mcp(rpc: &mut Rpc, post_id: &str) -> Duration {
    let started = Instant::now();
    let joined = rpc.call(
        "join",
        json!({"post_id": post_id, "control_mode": "human", "think_seconds": 60}),
    );
    let state_dir = joined["state_dir"].clone();
    let (mut last, mut answered) = (0, 0);
    loop {
        let waited = rpc.call(
            "session_wait",
            json!({"state_dir": state_dir, "timeout_seconds": 60, "after_window": last}),
        );
        if waited["reason"] == "ended" {
            break;
        }
        assert_eq!(waited["reason"], "decision", "{waited}");
        let window = &waited["view"]["window"];
        let seq = window["seq"].as_u64().unwrap();
        let decided = rpc.call(
            "session_decide",
            json!({"state_dir": state_dir, "decision": window["choices"]["values"][0], "window": seq}),
        );
        assert_eq!(decided["status"], "played", "{decided}");
        (last, answered) = (seq, answered + 1);
    }
    let elapsed = started.elapsed();
    check_end(Path::new(state_dir.as_str().unwrap()), answered);
    elapsed
}

/// The guest driven through CLI commands.
fn through_cli(bob: &Path, url: &str, post_id: &str) -> Duration {
    let started = Instant::now();
    let joined = json_of(aigenora(bob, url).args([
        "join",
        post_id,
        "--no-prompt",
        "--control-mode",
        "human",
        "--think-seconds",
        "60",
        "--daemon",
    ]));
    let state_dir = PathBuf::from(joined["state_dir"].as_str().unwrap());
    let mut follow = aigenora(bob, url)
        .args(["session", "snapshot", "--follow", "--json", "--state-dir"])
        .arg(&state_dir)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut last, mut answered) = (0, 0);
    for line in BufReader::new(follow.stdout.take().unwrap()).lines() {
        let view: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let window = &view["window"];
        let Some(seq) = window["seq"].as_u64().filter(|seq| *seq > last) else {
            continue;
        };
        let decided = json_of(
            aigenora(bob, url)
                .args(["session", "decide"])
                .arg(window["choices"]["values"][0].as_str().unwrap())
                .args(["--window", &seq.to_string(), "--json", "--state-dir"])
                .arg(&state_dir),
        );
        assert_eq!(decided["status"], "played", "{decided}");
        (last, answered) = (seq, answered + 1);
    }
    assert!(follow.wait().unwrap().success());
    let elapsed = started.elapsed();
    check_end(&state_dir, answered);
    elapsed
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let games: usize = std::env::var("BENCH_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let load_before = common::load_average();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = common::server_config(&work.path().join("bench.sqlite3"));
    let handle = rt.block_on(server::serve(config)).unwrap();
    let url = handle.url();
    let (alice, bob) = (work.path().join("alice"), work.path().join("bob"));
    for (dir, name) in [(&alice, "alice"), (&bob, "bob")] {
        json_of(aigenora(dir, &url).arg("init"));
        json_of(aigenora(dir, &url).args(["register", "--nickname", name]));
    }
    // The agent's MCP server lives across games, as it does for an agent.
    let mut rpc = Rpc::start(&bob, &url);
    let (mut mcp, mut cli) = (Vec::new(), Vec::new());
    for game in 0..games {
        let post_id = host(&alice, &url);
        cli.push(through_cli(&bob, &url, &post_id));
        let post_id = host(&alice, &url);
        mcp.push(through_mcp(&mut rpc, &post_id));
        println!(
            "game {}: CLI {:.0} ms, MCP {:.0} ms",
            game + 1,
            cli[game].as_secs_f64() * 1000.0,
            mcp[game].as_secs_f64() * 1000.0
        );
    }
    let (cli, mcp) = (median(&mut cli), median(&mut mcp));
    println!(
        "9-round RPS, guest in human control, {games} games each way: median CLI {:.0} ms, \
         MCP {:.0} ms, MCP/CLI {:.2} (goal ≤ 1.5); load before {load_before}, after {}",
        cli.as_secs_f64() * 1000.0,
        mcp.as_secs_f64() * 1000.0,
        mcp.as_secs_f64() / cli.as_secs_f64(),
        common::load_average()
    );
}

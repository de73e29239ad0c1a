//! A real MCP client in front of `aigenora mcp`: the PyPI `mcp` package in its own venv
//! (`target/mcp-venv`, installed once), run through `tests/python/mcp_bridge.py`, which
//! starts our binary as its stdio server and answers one JSON request per line.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};

use super::net::SESSION_LIMIT;

/// The version of the MCP Python SDK the tests drive our server with.
pub const MCP_CLIENT: &str = "mcp==2.3.0";

fn mcp_python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| super::reference::venv_with("mcp-venv", MCP_CLIENT))
}

/// What one tool call returned.
#[derive(Debug)]
pub struct ToolAnswer {
    pub is_error: bool,
    /// The structured content (`null` on a tool error).
    pub structured: Value,
    /// The text content (the JSON text of a result, or the error's one line).
    pub text: String,
}

impl ToolAnswer {
    /// The structured result, failing the test on a tool error.
    pub fn ok(self) -> Value {
        assert!(!self.is_error, "tool error: {}", self.text);
        self.structured
    }

    /// The error line, failing the test on success.
    pub fn error(self) -> String {
        assert!(self.is_error, "expected a tool error: {}", self.structured);
        self.text
    }
}

/// One MCP session with `aigenora --data-dir DIR --server URL mcp`.
pub struct McpClient {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl McpClient {
    /// Starts the server for `data_dir` and `server` (relays disabled: loopback tests).
    pub fn start(data_dir: &Path, server: &str) -> McpClient {
        let bridge = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/mcp_bridge.py");
        let mut child = Command::new(mcp_python())
            .arg(bridge)
            .arg(env!("CARGO_BIN_EXE_aigenora"))
            .arg("--data-dir")
            .arg(data_dir)
            .args(["--server", server, "mcp"])
            .env("AIGENORA_RELAY", "disabled")
            .env_remove("AIGENORA_SERVER")
            .env_remove("AIGENORA_DATA_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the MCP bridge");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        McpClient {
            child,
            stdin,
            stdout,
        }
    }

    fn request(&mut self, request: Value) -> Value {
        writeln!(self.stdin, "{request}").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("the MCP bridge answered {line:?} to {request}"))
    }

    /// `tools/list`: every tool with its description and input schema.
    pub fn tools(&mut self) -> Vec<Value> {
        let listed = self.request(json!({"op": "list"}));
        listed["tools"].as_array().unwrap().clone()
    }

    /// What the server said about itself when the client connected.
    pub fn info(&mut self) -> Value {
        self.request(json!({"op": "info"}))
    }

    /// `tools/call`.
    pub fn call(&mut self, name: &str, arguments: Value) -> ToolAnswer {
        let answer = self.request(json!({"op": "call", "name": name, "arguments": arguments}));
        ToolAnswer {
            is_error: answer["is_error"].as_bool().unwrap(),
            structured: answer["structured"].clone(),
            text: answer["text"].as_str().unwrap_or_default().to_string(),
        }
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        // The bridge gone, the server reads the end of its stdin and stops too.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Answers every decision window of the session with its first legal move, only through
/// MCP tools, until the session ends; the windows answered.
pub fn play_through_mcp(mcp: &mut McpClient, state_dir: &Value) -> u64 {
    let mut answered = 0;
    let mut last = 0;
    loop {
        let waited = mcp
            .call(
                "session_wait",
                json!({"state_dir": state_dir, "timeout_seconds": SESSION_LIMIT.as_secs(), "after_window": last}),
            )
            .ok();
        match waited["reason"].as_str().unwrap() {
            "ended" => return answered,
            "decision" => {}
            other => panic!("session_wait: {other}: {waited}"),
        }
        let window = &waited["view"]["window"];
        let seq = window["seq"].as_u64().unwrap();
        assert_eq!(window["choices"]["kind"], "one_of", "{window}");
        let choice = window["choices"]["values"][0].as_str().unwrap();
        let decided = mcp
            .call(
                "session_decide",
                json!({"state_dir": state_dir, "decision": choice, "window": seq}),
            )
            .ok();
        assert_eq!(decided["status"], "played", "{decided}");
        answered += 1;
        last = seq;
    }
}

//! A real MCP client in front of `aigenora mcp`: the PyPI `mcp` package in its own venv
//! (`target/mcp-venv`, installed once), run through `tests/python/mcp_bridge.py`, which
//! starts our binary as its stdio server and answers one JSON request per line: tools,
//! resources, subscriptions (the 2025 way and the newest way) and progress.

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
    /// The progress notifications the call received (`{progress, total, message}`).
    pub progress: Vec<Value>,
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
    /// Starts the server for `data_dir` and `server` (relays disabled: loopback tests),
    /// speaking the newest protocol version.
    pub fn start(data_dir: &Path, server: &str) -> McpClient {
        McpClient::spawn(data_dir, server, &[])
    }

    /// The same through the 2025 `initialize` handshake, as agents of that era connect.
    pub fn start_legacy(data_dir: &Path, server: &str) -> McpClient {
        McpClient::spawn(data_dir, server, &["--legacy"])
    }

    fn spawn(data_dir: &Path, server: &str, mode: &[&str]) -> McpClient {
        let bridge = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/mcp_bridge.py");
        let mut child = Command::new(mcp_python())
            .arg(bridge)
            .args(mode)
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
        self.send(&request);
        self.receive()
    }

    fn send(&mut self, request: &Value) {
        writeln!(self.stdin, "{request}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn receive(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("the MCP bridge answered {line:?}"))
    }

    /// The answer to a request the server may refuse: its result, or the refusal's message.
    fn fallible(&mut self, request: Value) -> Result<Value, String> {
        let answer = self.request(request);
        match answer["error"].as_str() {
            Some(message) => Err(message.to_string()),
            None => Ok(answer),
        }
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
        self.call_later(name, arguments, false);
        self.answer()
    }

    /// Sends a `tools/call` (with a progress token when `progress`) without waiting for
    /// its answer, which `answer` reads; meanwhile this client takes no other request.
    pub fn call_later(&mut self, name: &str, arguments: Value, progress: bool) {
        let request =
            json!({"op": "call", "name": name, "arguments": arguments, "progress": progress});
        self.send(&request);
    }

    /// The answer to the call `call_later` sent.
    pub fn answer(&mut self) -> ToolAnswer {
        let answer = self.receive();
        ToolAnswer {
            is_error: answer["is_error"].as_bool().unwrap(),
            structured: answer["structured"].clone(),
            text: answer["text"].as_str().unwrap_or_default().to_string(),
            progress: answer["progress"].as_array().cloned().unwrap_or_default(),
        }
    }

    /// `resources/list` and `resources/templates/list`: (resources, templates).
    pub fn resources(&mut self) -> (Vec<Value>, Vec<Value>) {
        let listed = self.request(json!({"op": "resources"}));
        let items = |key: &str| listed[key].as_array().unwrap().clone();
        (items("resources"), items("templates"))
    }

    /// `resources/read`: the contents, or the server's refusal.
    pub fn read(&mut self, uri: &str) -> Result<Vec<Value>, String> {
        let read = self.fallible(json!({"op": "read", "uri": uri}))?;
        Ok(read["contents"].as_array().unwrap().clone())
    }

    /// `resources/subscribe` (a legacy client).
    pub fn subscribe(&mut self, uri: &str) -> Result<(), String> {
        self.fallible(json!({"op": "subscribe", "uri": uri}))
            .map(drop)
    }

    /// `resources/unsubscribe` (a legacy client).
    pub fn unsubscribe(&mut self, uri: &str) -> Result<(), String> {
        self.fallible(json!({"op": "unsubscribe", "uri": uri}))
            .map(drop)
    }

    /// Opens a `subscriptions/listen` stream for `uris`: the URIs the server honoured.
    pub fn listen(&mut self, uris: &[&str]) -> Vec<String> {
        let honored = self.request(json!({"op": "listen", "uris": uris}));
        serde_json::from_value(honored["honored"].clone()).unwrap()
    }

    /// Closes the listen stream.
    pub fn unlisten(&mut self) {
        self.request(json!({"op": "unlisten"}));
    }

    /// The URI of the oldest resource update not yet taken, waiting at most `limit`.
    pub fn next_update(&mut self, limit: std::time::Duration) -> Option<String> {
        let next = self.request(json!({"op": "next", "timeout": limit.as_secs_f64()}));
        next["notification"]["uri"].as_str().map(str::to_string)
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
    let answers = answer_through_mcp(mcp, state_dir, |window| {
        assert_eq!(window["choices"]["kind"], "one_of", "{window}");
        window["choices"]["values"][0].as_str().unwrap().to_string()
    });
    for decided in &answers {
        assert_eq!(decided["status"], "played", "{decided}");
    }
    answers.len() as u64
}

/// Answers every decision window of the session with `choose`'s decision for it, only
/// through MCP tools (`session_wait`, `session_decide`), until the session ends; the
/// `session_decide` answers (`closed` for a window withdrawn before its decision came).
pub fn answer_through_mcp(
    mcp: &mut McpClient,
    state_dir: &Value,
    choose: impl Fn(&Value) -> String,
) -> Vec<Value> {
    let mut answers = Vec::new();
    let mut last = 0;
    loop {
        let waited = mcp
            .call(
                "session_wait",
                json!({"state_dir": state_dir, "timeout_seconds": SESSION_LIMIT.as_secs(), "after_window": last}),
            )
            .ok();
        match waited["reason"].as_str().unwrap() {
            "ended" => return answers,
            "decision" => {}
            other => panic!("session_wait: {other}: {waited}"),
        }
        let window = &waited["view"]["window"];
        let seq = window["seq"].as_u64().unwrap();
        let decided = mcp
            .call(
                "session_decide",
                json!({"state_dir": state_dir, "decision": choose(window), "window": seq}),
            )
            .ok();
        answers.push(decided);
        last = seq;
    }
}

/// A new identity for the client's data dir, registered as `nickname`, through MCP.
pub fn register(mcp: &mut McpClient, nickname: &str) {
    mcp.call("init", json!({})).ok();
    let registered = mcp.call("register", json!({"nickname": nickname})).ok();
    assert_eq!(registered["agent"]["nickname"], nickname);
}

/// Joins `post_id` through MCP in human control (every move through session_decide): the
/// guest's state_dir.
pub fn join_in_human_control(mcp: &mut McpClient, post_id: &str) -> Value {
    let joined = mcp
        .call(
            "join",
            json!({"post_id": post_id, "control_mode": "human", "think_seconds": 60}),
        )
        .ok();
    assert_eq!(joined["status"], "joining", "{joined}");
    joined["state_dir"].clone()
}

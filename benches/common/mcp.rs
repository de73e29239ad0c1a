//! `aigenora mcp` as a child process spoken to as any stdio client does: newline-delimited
//! JSON-RPC, one request at a time, after the `initialize` handshake.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// One MCP server and the pipes to it.
pub struct Rpc {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Rpc {
    /// Starts `aigenora --data-dir DATA --server SERVER mcp` and initializes it.
    pub fn start(data: &Path, server: &str) -> Rpc {
        let mut child = Command::new(env!("CARGO_BIN_EXE_aigenora"))
            .arg("--data-dir")
            .arg(data)
            .args(["--server", server, "mcp"])
            .env_remove("AIGENORA_SERVER")
            // Loopback only: the sessions it starts need no relay.
            .env("AIGENORA_RELAY", "disabled")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start aigenora mcp");
        let mut rpc = Rpc {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            next_id: 0,
        };
        let client = json!({"name": "aigenora bench", "version": "0"});
        rpc.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}),
        );
        rpc.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        rpc
    }

    /// The server's process id.
    pub fn pid(&self) -> String {
        self.child.id().to_string()
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns its result, failing on an error or a tool error.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
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

    /// `tools/call`: the tool's structured result.
    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        let result = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        result["structuredContent"].clone()
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        // Its stdin closed, the server stops.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

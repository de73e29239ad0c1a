//! `aigenora mcp` driven by a real MCP client (the PyPI `mcp` package): the tools it lists
//! and their typed schemas, contract tools agreeing with the CLI, failures as tool errors
//! carrying the CLI's one line, and a whole game played only through MCP tools against our
//! autonomous host.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::cli::aigenora;
use crate::support::mcp::{McpClient, join_in_human_control, play_through_mcp, register};
use crate::support::net::{Agent, Background, Net, SESSION_LIMIT, assert_clean_end};

const TOOLS: [&str; 24] = [
    "whoami",
    "init",
    "register",
    "protocol_list",
    "protocol_path",
    "protocol_hash",
    "protocol_validate",
    "protocol_scaffold",
    "protocol_test",
    "protocol_fetch",
    "protocol_register",
    "protocol_discover",
    "browse",
    "cancel",
    "host",
    "join",
    "session_list",
    "session_snapshot",
    "session_events",
    "session_decide",
    "session_strategy",
    "session_abort",
    "session_action",
    "session_wait",
];

/// The one error line the CLI prints for `args` in `data_dir`, without its `error: `.
fn cli_error(data_dir: &Path, args: &[&str]) -> String {
    let output = aigenora()
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    stderr
        .trim_end()
        .strip_prefix("error: ")
        .unwrap()
        .to_string()
}

#[test]
fn the_tools_are_listed_with_typed_schemas_and_the_contract_tools_agree_with_the_cli() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("agent");
    let mut mcp = McpClient::start(&data, "http://127.0.0.1:9");
    let info = mcp.info();
    assert_eq!(info["name"], "aigenora");
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        info["instructions"]
            .as_str()
            .unwrap()
            .contains("session_wait")
    );

    let tools = mcp.tools();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    let mut expected = TOOLS.to_vec();
    expected.sort();
    assert_eq!(names, expected);
    for tool in &tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(!tool["description"].as_str().unwrap().is_empty(), "{tool}");
    }
    let schema =
        |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["inputSchema"].clone();
    assert_eq!(schema("session_decide")["required"], json!(["decision"]));
    assert_eq!(schema("join")["required"], json!(["post_id"]));
    let modes = &schema("host")["$defs"]["ControlModeInput"];
    let modes: Vec<&str> = modes["oneOf"]
        .as_array()
        .map(|variants| {
            variants
                .iter()
                .filter_map(|v| v["const"].as_str())
                .collect()
        })
        .or_else(|| {
            modes["enum"]
                .as_array()
                .map(|v| v.iter().filter_map(Value::as_str).collect())
        })
        .unwrap_or_default();
    assert_eq!(
        modes,
        ["autonomous", "hybrid", "human"],
        "{}",
        schema("host")
    );

    let whoami = mcp.call("whoami", json!({})).ok();
    assert_eq!(whoami["public_key"], Value::Null);
    assert_eq!(whoami["server"], "http://127.0.0.1:9");
    let created = mcp.call("init", json!({})).ok();
    assert_eq!(created["created"], true);
    let key = aigenora::identity::load_key_file(&aigenora::layout::DataDir::new(&data)).unwrap();
    assert_eq!(created["public_key"], key.public_key());
    assert_eq!(mcp.call("init", json!({})).ok()["created"], false);

    // Failures carry the line the CLI prints for the same request.
    assert_eq!(
        mcp.call("protocol_path", json!({"protocol": "no-such-v1"}))
            .error(),
        cli_error(&data, &["protocol", "path", "no-such-v1"])
    );
    assert_eq!(
        mcp.call("protocol_path", json!({"protocol": "rps-v1"}))
            .error(),
        cli_error(&data, &["protocol", "path", "rps-v1"])
    );
    let offline = mcp.call("browse", json!({})).error();
    assert!(
        offline.contains("cannot reach http://127.0.0.1:9"),
        "{offline}"
    );

    let listed = mcp.call("protocol_list", json!({})).ok();
    let rows = listed["items"].as_array().unwrap();
    assert!(rows.iter().any(|row| row["alias"] == "rock-paper-scissors"));
    let dir = mcp
        .call("protocol_path", json!({"protocol": "guess-number"}))
        .ok()["dir"]
        .clone();
    let spec = Path::new(dir.as_str().unwrap()).join("spec.json");
    let hashed = mcp.call("protocol_hash", json!({"spec": spec})).ok();
    let cli_hash = aigenora()
        .args(["protocol", "hash"])
        .arg(&spec)
        .output()
        .unwrap();
    assert_eq!(
        hashed["protocol_id"],
        String::from_utf8(cli_hash.stdout).unwrap().trim()
    );
    let linted = mcp.call("protocol_validate", json!({"spec": spec})).ok();
    assert_eq!(
        (linted["valid"].clone(), linted["errors"].clone()),
        (json!(true), json!(0))
    );
    let faulty = work.path().join("faulty.json");
    std::fs::write(&faulty, r#"{"name": "x", "messages": []}"#).unwrap();
    let linted = mcp.call("protocol_validate", json!({"spec": faulty})).ok();
    assert_eq!(linted["valid"], false);
    assert!(linted["diagnostics"][0]["check"].is_string(), "{linted}");
    let message = json!({"action": "guess", "attempt": 1, "number": "seven"});
    let checked = mcp
        .call(
            "protocol_validate",
            json!({"spec": spec, "message": message, "direction": "guest_to_host"}),
        )
        .ok();
    assert_eq!(checked["valid"], false, "{checked}");
    assert!(
        checked["error"].as_str().unwrap().contains("number"),
        "{checked}"
    );

    let target = work.path().join("mine");
    let scaffolded = mcp
        .call(
            "protocol_scaffold",
            json!({"protocol": "guess-number", "dir": target}),
        )
        .ok();
    assert_eq!(
        scaffolded["hooks"],
        target.join("hooks.py").to_str().unwrap()
    );
    assert!(
        std::fs::read_to_string(target.join("hooks.py"))
            .unwrap()
            .contains("class Hooks")
    );
    let again = mcp.call(
        "protocol_scaffold",
        json!({"protocol": "guess-number", "dir": target}),
    );
    assert!(
        again
            .error()
            .ends_with("already exists; not overwriting it")
    );

    let tested = mcp
        .call(
            "protocol_test",
            json!({"protocol": "rock-paper-scissors", "options": {"best_of": 3}}),
        )
        .ok();
    assert_eq!(tested["passed"], true, "{tested}");
    assert_eq!(tested["host"]["completed"], true);
    let skeleton = mcp.call("protocol_test", json!({"protocol": target}));
    assert!(skeleton.error().contains("skeleton"));
}

/// `protocol_discover` lists what `protocol discover` lists, newest first, with the same
/// limit, cursor and query, and refuses a limit the CLI refuses with the CLI's line.
#[test]
fn protocol_discover_lists_the_servers_protocols_like_the_cli() {
    let net = Net::start();
    let alice = net.agent("alice");
    let mut mcp = McpClient::start(&alice.dir, net.url());
    let tools = mcp.tools();
    let tool = tools
        .iter()
        .find(|t| t["name"] == "protocol_discover")
        .unwrap();
    let properties = &tool["inputSchema"]["properties"];
    for key in ["limit", "cursor", "query"] {
        assert!(properties[key].is_object(), "{tool}");
    }
    assert!(
        json!(["integer", ["integer", "null"]])
            .as_array()
            .unwrap()
            .contains(&properties["limit"]["type"]),
        "{tool}"
    );
    // The server lists the built-ins it seeds; two contracts of our own (a different
    // parameter bound makes a different contract) come after them.
    let mut ids = Vec::new();
    for (attempts, name) in [(1001, "Discover Me One"), (1002, "Discover Me Two")] {
        let mut spec: Value =
            serde_json::from_str(aigenora::protocols::find("guess-number").unwrap().spec_json)
                .unwrap();
        spec["name"] = json!(name);
        spec["parameters"]["max_attempts"]["max"] = json!(attempts);
        let path = net.work.path().join(format!("{name}.json"));
        std::fs::write(&path, spec.to_string()).unwrap();
        let registered: Value = serde_json::from_str(&alice.ok(&[
            "protocol",
            "register",
            path.to_str().unwrap(),
            "--json",
        ]))
        .unwrap();
        ids.push(registered["protocol_id"].as_str().unwrap().to_string());
    }
    let all = mcp.call("protocol_discover", json!({"limit": 100})).ok();
    let cli = alice.ok(&["protocol", "discover", "--limit", "100", "--json"]);
    assert_eq!(all, serde_json::from_str::<Value>(&cli).unwrap());
    let listed: Vec<&str> = all["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["protocol_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed[..2],
        [ids[1].as_str(), ids[0].as_str()],
        "newest first: {all}"
    );
    assert!(listed.len() > 2, "the seeded built-ins too: {all}");

    let first = mcp.call("protocol_discover", json!({"limit": 1})).ok();
    assert_eq!(first["results"][0]["protocol_id"], ids[1]);
    let cursor = first["next_cursor"].as_str().unwrap();
    let second = mcp
        .call("protocol_discover", json!({"limit": 1, "cursor": cursor}))
        .ok();
    assert_eq!(second["results"][0]["protocol_id"], ids[0], "{second}");
    let found = mcp
        .call("protocol_discover", json!({"query": "Discover Me"}))
        .ok();
    assert_eq!(found["results"].as_array().unwrap().len(), 2, "{found}");
    assert_eq!(found["results"][1]["name"], "Discover Me One");
    assert_eq!(found["next_cursor"], Value::Null);

    for limit in ["0", "101"] {
        let refused = mcp
            .call(
                "protocol_discover",
                json!({"limit": limit.parse::<u32>().unwrap()}),
            )
            .error();
        assert_eq!(
            refused,
            cli_error(
                &alice.dir,
                &[
                    "--server",
                    net.url(),
                    "protocol",
                    "discover",
                    "--limit",
                    limit
                ]
            )
        );
    }
    let bad_cursor = mcp
        .call("protocol_discover", json!({"cursor": "not-a-cursor"}))
        .error();
    assert!(bad_cursor.contains("cursor"), "{bad_cursor}");
}

/// A best-of-3 rock-paper-scissors hosted by `alice` in the background, autonomous: the
/// `--daemon` line and the host's session.
pub fn host_rps(alice: &Agent) -> (Value, Background) {
    let args = [
        "host",
        "--protocol-dir",
        "rock-paper-scissors",
        "--options",
        r#"{"best_of": 3, "moves": "rock,paper,scissors"}"#,
        "--control-mode",
        "autonomous",
        "--daemon",
    ];
    let line: Value = serde_json::from_str(&alice.ok(&args)).unwrap();
    let dir = line["state_dir"].as_str().unwrap().into();
    (line, Background { state_dir: dir })
}

#[test]
fn a_game_is_played_only_through_mcp_tools_against_our_autonomous_host() {
    let net = Net::start();
    let alice = net.agent("alice");
    let (hosting, host) = host_rps(&alice);
    let bob_dir = net.work.path().join("bob");
    let mut mcp = McpClient::start(&bob_dir, net.url());
    register(&mut mcp, "bob");

    let protocol_id = hosting["protocol_id"].as_str().unwrap();
    let offered = mcp.call("browse", json!({"protocol_id": protocol_id})).ok();
    let post_id = offered["results"][0]["post_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(post_id, hosting["post_id"].as_str().unwrap());

    let state_dir = join_in_human_control(&mut mcp, &post_id);
    let listed = mcp.call("session_list", json!({})).ok();
    assert_eq!(listed["sessions"][0]["session_dir"], state_dir);

    let answered = play_through_mcp(&mut mcp, &state_dir);
    assert!(
        answered >= 2,
        "a best-of-3 takes at least two rounds: {answered}"
    );

    let view = mcp
        .call("session_snapshot", json!({"state_dir": state_dir}))
        .ok();
    assert_eq!(view["status"], "closed", "{view}");
    assert_eq!(view["window"], Value::Null);
    let events = mcp
        .call("session_events", json!({"state_dir": state_dir}))
        .ok();
    assert_eq!(events["ended"], true);
    let all = events["events"].as_array().unwrap();
    let names: Vec<&str> = all.iter().filter_map(|e| e["type"].as_str()).collect();
    assert!(
        names.contains(&"peer_joined") && names.contains(&"session_ended"),
        "{names:?}"
    );
    assert_eq!(events["next_cursor"], all.len());
    let rest = mcp
        .call(
            "session_events",
            json!({"state_dir": state_dir, "cursor": all.len()}),
        )
        .ok();
    assert_eq!(rest["events"], json!([]));
    let after_end = mcp.call(
        "session_decide",
        json!({"state_dir": state_dir, "decision": "rock"}),
    );
    assert_ne!(after_end.ok()["status"], "played");
    let aborted = mcp
        .call("session_abort", json!({"state_dir": state_dir}))
        .error();
    assert!(aborted.contains("already ended"), "{aborted}");

    let guest = crate::support::net::SessionFiles::read(Path::new(state_dir.as_str().unwrap()));
    assert_clean_end(&host.wait_final(), &guest);
}

#[test]
fn hooks_writing_to_stdout_cannot_corrupt_the_protocol_stream() {
    let work = tempfile::tempdir().unwrap();
    let noisy = work.path().join("noisy");
    std::fs::create_dir_all(&noisy).unwrap();
    let builtin = aigenora::protocols::find("guess-number").unwrap();
    std::fs::write(noisy.join("spec.json"), builtin.spec_json).unwrap();
    // At load time, raw bytes and forged answers to every request id a client may be
    // waiting on; then a line for every message the hooks display.
    let forged = r#"{"jsonrpc": "2.0", "id": %d, "result": {"content": [], "structuredContent": {"passed": "forged"}}}"#;
    let hooks = format!(
        "{}\nimport os as _os\n_os.write(1, b'not json\\n')\n\
         for _id in range(50):\n    _os.write(1, (r'{forged}' % _id).encode() + b'\\n')\n\
         Hooks.proto_display = lambda self, msg, direction: _os.write(1, b'noise\\n') and None\n",
        builtin.hooks_py
    );
    std::fs::write(noisy.join("hooks.py"), hooks).unwrap();
    let mut mcp = McpClient::start(&work.path().join("agent"), "http://127.0.0.1:9");
    let tested = mcp.call("protocol_test", json!({"protocol": noisy})).ok();
    assert_eq!(tested["passed"], true, "{tested}");
    // The stream is intact: the next call is answered as usual.
    assert_eq!(
        mcp.call("whoami", json!({})).ok()["server"],
        "http://127.0.0.1:9"
    );
}

#[test]
fn a_session_hosted_through_mcp_is_joined_by_our_cli_and_another_is_withdrawn_and_aborted() {
    let net = Net::start();
    let bob = net.agent("bob");
    let alice_dir = net.work.path().join("alice");
    let mut mcp = McpClient::start(&alice_dir, net.url());
    mcp.call("init", json!({})).ok();
    mcp.call("register", json!({"nickname": "alice"})).ok();

    let hosted = mcp
        .call(
            "host",
            json!({"protocol": "guess-number", "options": {"secret": 42}, "control_mode": "autonomous"}),
        )
        .ok();
    assert_eq!(hosted["status"], "hosting", "{hosted}");
    let post_id = hosted["post_id"].as_str().unwrap().to_string();
    let guest = bob.join(&post_id, &["--control-mode", "autonomous"]);
    guest.succeed(SESSION_LIMIT);
    let host = Background {
        state_dir: hosted["state_dir"].as_str().unwrap().into(),
    };
    let host_files = host.wait_final();
    assert_clean_end(&host_files, &bob.session("guest"));
    let waited = mcp
        .call(
            "session_wait",
            json!({"state_dir": hosted["state_dir"], "timeout_seconds": 5}),
        )
        .ok();
    assert_eq!(waited["reason"], "ended");
    assert_eq!(waited["view"]["winner"], host_files.field("winner").clone());

    // A second invitation, withdrawn before anyone joins: its host stops without a game.
    let second = mcp.call("host", json!({"protocol": "guess-number"})).ok();
    let second_post = second["post_id"].as_str().unwrap();
    let offered = mcp.call("browse", json!({"post_id": second_post})).ok();
    assert_eq!(offered["post_id"], second_post);
    let cancelled = mcp.call("cancel", json!({"post_id": second_post})).ok();
    assert_eq!(cancelled["cancelled"], true);
    let listed = mcp.call("browse", json!({})).ok();
    assert_eq!(listed["results"], json!([]), "{listed}");
    let which = json!({"state_dir": second["state_dir"]});
    let aborting = mcp.call("session_abort", which.clone()).ok();
    assert_eq!(aborting["status"], "aborting");
    let mut wait = which.clone();
    wait["timeout_seconds"] = json!(SESSION_LIMIT.as_secs());
    let ended = mcp.call("session_wait", wait).ok();
    assert_eq!(ended["reason"], "ended", "{ended}");
    assert_eq!(ended["view"]["status"], "aborted", "{ended}");
    let gone = mcp.call("host", json!({"protocol": "no-such-v1"})).error();
    assert!(
        gone.starts_with("no-such-v1 is neither a protocol directory"),
        "{gone}"
    );
}

/// `session_action` queues a room action in a session directory exactly as `session action`
/// does, and refuses what a room could not carry with the CLI's line.
#[test]
fn session_action_queues_a_room_action_and_refuses_like_the_cli() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("agent");
    let session = data.join("sessions").join("guest-1");
    std::fs::create_dir_all(&session).unwrap();
    std::fs::write(
        session.join("session.json"),
        r#"{"role": "guest", "protocol_id": "abc"}"#,
    )
    .unwrap();
    let mut mcp = McpClient::start(&data, "http://127.0.0.1:9");
    let queued = mcp
        .call(
            "session_action",
            json!({"state_dir": session, "action": {"kind": "send", "text": "hi"}}),
        )
        .ok();
    assert_eq!(queued["status"], "ok");
    let line: Value = serde_json::from_str(
        std::fs::read_to_string(session.join("room-actions.jsonl"))
            .unwrap()
            .trim(),
    )
    .unwrap();
    assert_eq!(line["action"]["text"], "hi");
    let refused = mcp
        .call(
            "session_action",
            json!({"state_dir": session, "action": {"score": 1.5}}),
        )
        .error();
    let cli = cli_error(
        &data,
        &[
            "session",
            "action",
            "--state-dir",
            session.to_str().unwrap(),
            "--action",
            r#"{"score": 1.5}"#,
        ],
    );
    assert_eq!(refused, cli);
}

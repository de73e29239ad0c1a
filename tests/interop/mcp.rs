//! Our side driven only through MCP tool calls against a reference host: the reference hosts
//! its rock-paper-scissors (`host --daemon`, autonomous), our agent joins through the MCP
//! `join` tool and decides every window through `session_wait` and `session_decide`.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::mcp::{McpClient, join_in_human_control, play_through_mcp, register};
use crate::support::net::{Net, SessionFiles, assert_clean_end, assert_server_session};
use crate::support::reference::REFERENCE_RPS;

#[test]
fn a_game_is_played_only_through_mcp_tools_against_the_reference_autonomous_host() {
    let net = Net::start();
    let carol = net.reference_agent("carol");
    carol.register_protocol(REFERENCE_RPS);
    let protocol_dir = carol.protocol_dir(REFERENCE_RPS);
    let (hosting, reference) = carol.daemon(&[
        "host",
        "--protocol-dir",
        protocol_dir.to_str().unwrap(),
        "--options",
        r#"{"best_of": 3}"#,
        "--control-mode",
        "autonomous",
        "--no-web",
    ]);
    let post_id = hosting["post_id"].as_str().unwrap();

    let mut mcp = McpClient::start(&net.work.path().join("bob"), net.url());
    register(&mut mcp, "bob");
    let offered = mcp
        .call("browse", json!({"protocol_id": REFERENCE_RPS}))
        .ok();
    assert_eq!(offered["results"][0]["post_id"], post_id, "{offered}");
    let state_dir = join_in_human_control(&mut mcp, post_id);

    let answered = play_through_mcp(&mut mcp, &state_dir);
    assert!(
        answered >= 2,
        "a best-of-3 takes at least two rounds: {answered}"
    );
    let view = mcp
        .call("session_snapshot", json!({"state_dir": state_dir}))
        .ok();
    assert_eq!(view["status"], "closed", "{view}");
    assert_eq!(view["window"], Value::Null, "{view}");

    let guest = SessionFiles::read(Path::new(state_dir.as_str().unwrap()));
    let host = reference.wait_final();
    assert_clean_end(&host, &guest);
    // The reference records its end twice (its session, then its daemon's bookkeeping).
    for side in [&host, &guest] {
        let ended = side.events_of("session_ended");
        assert!(!ended.is_empty(), "{:?}", side.events);
        assert!(ended.iter().all(|e| e["completed"] == true), "{ended:?}");
    }
    let session_id = guest.field("session_id").as_str().unwrap();
    let server = crate::support::net::Agent {
        dir: net.work.path().join("bob"),
        server: net.url().to_string(),
        netns: None,
    };
    assert_server_session(
        &server.server_session(session_id),
        "closed",
        guest.field("winner").as_str(),
    );
}

//! The community commands end to end: our binary against a real server process.

use std::path::Path;
use std::process::Output;

use aigenora::api::invitation::NewInvitation;
use aigenora::api::session::NewSession;
use aigenora::identity::{self, load_key_file};
use aigenora::layout::DataDir;
use serde_json::Value;

use crate::support::cli::aigenora;
use crate::support::reference::{library_dir, reference_contract};
use crate::support::server::{TestServer, fake_ticket, test_spec};

/// Runs `aigenora --data-dir DIR --server URL ARGS...`.
fn cli(dir: &Path, server: &str, args: &[&str]) -> Output {
    aigenora()
        .arg("--data-dir")
        .arg(dir)
        .args(["--server", server])
        .args(args)
        .env_remove("AIGENORA_SERVER")
        .env_remove("P2P_SERVER")
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn json_of(output: &Output) -> Value {
    serde_json::from_str(&stdout(output)).unwrap()
}

fn error_line(output: &Output) -> String {
    assert!(
        !output.status.success(),
        "expected a failure: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    assert_eq!(stderr.lines().count(), 1, "one error line: {stderr}");
    stderr.trim_end().to_string()
}

#[test]
fn init_creates_a_private_key_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("agent");
    let first = json_of(&cli(&data, "http://unused", &["init", "--json"]));
    assert_eq!(first["created"], true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.join("key.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let again = json_of(&cli(&data, "http://unused", &["init", "--json"]));
    assert_eq!(
        (again["created"].clone(), again["public_key"].clone()),
        (Value::Bool(false), first["public_key"].clone())
    );
    let forced = json_of(&cli(&data, "http://unused", &["init", "--force", "--json"]));
    assert_ne!(forced["public_key"], first["public_key"]);

    let from_env = aigenora()
        .arg("init")
        .env("AIGENORA_DATA_DIR", dir.path().join("env"))
        .output()
        .unwrap();
    assert!(from_env.status.success());
    assert!(dir.path().join("env/key.json").exists());
}

#[test]
fn register_publish_fetch_discover_browse_cancel_and_end_a_session() {
    let server = TestServer::start(&[]);
    let work = tempfile::tempdir().unwrap();
    let (alice_dir, bob_dir) = (work.path().join("alice"), work.path().join("bob"));
    let url = server.url.as_str();
    for dir in [&alice_dir, &bob_dir] {
        stdout(&cli(dir, url, &["init"]));
    }
    assert!(
        stdout(&cli(&alice_dir, url, &["register", "--nickname", "alice"]))
            .starts_with("[OK] registered alice as agent_id 1")
    );
    assert!(
        stdout(&cli(&alice_dir, url, &["register", "--nickname", "alice"]))
            .starts_with("[OK] already registered: alice")
    );
    let bob_registered = json_of(&cli(
        &bob_dir,
        url,
        &["register", "--nickname", "bob", "--bio", "hi", "--json"],
    ));
    assert_eq!(bob_registered["agent"]["agent_id"], 2);
    assert_eq!(
        error_line(&cli(&bob_dir, url, &["register", "--nickname", "b b"])),
        "error: nickname must be 1-32 characters of A-Za-z0-9_.-"
    );

    let spec_path = work.path().join("spec.json");
    std::fs::write(
        &spec_path,
        serde_json::to_string_pretty(&test_spec("Greeting", 1)).unwrap(),
    )
    .unwrap();
    let published = json_of(&cli(
        &alice_dir,
        url,
        &[
            "protocol",
            "register",
            spec_path.to_str().unwrap(),
            "--json",
        ],
    ));
    let protocol_id = published["protocol_id"].as_str().unwrap().to_string();
    assert_eq!(published["created"], true);
    assert!(
        stdout(&cli(
            &alice_dir,
            url,
            &["protocol", "register", spec_path.to_str().unwrap()]
        ))
        .starts_with("[OK] already registered")
    );

    let fetched = json_of(&cli(
        &bob_dir,
        url,
        &["protocol", "fetch", &protocol_id, "--json"],
    ));
    let cached = bob_dir
        .join("protocols")
        .join(&protocol_id[..8])
        .join(&protocol_id[8..])
        .join("spec.json");
    assert_eq!(fetched["path"], cached.display().to_string());
    let text = std::fs::read_to_string(&cached).unwrap();
    assert_eq!(
        text,
        serde_json::to_string(&test_spec("Greeting", 1)).unwrap(),
        "compact JSON, key order kept"
    );
    assert_eq!(
        stdout(&cli(
            &bob_dir,
            url,
            &["protocol", "hash", cached.to_str().unwrap()]
        ))
        .trim(),
        protocol_id
    );

    let discovered = json_of(&cli(&bob_dir, url, &["protocol", "discover", "--json"]));
    assert_eq!(
        discovered["results"][0]["protocol_id"],
        protocol_id.as_str()
    );
    assert!(stdout(&cli(&bob_dir, url, &["protocol", "discover"])).contains("Greeting"));

    // Alice hosts (through the library, as `host` will) with her CLI identity.
    let alice = load_key_file(&DataDir::new(&alice_dir)).unwrap();
    let alice_client = server.client(&alice);
    let mut offer = NewInvitation::signed(&alice, &protocol_id, &fake_ticket(7));
    offer.message = "Say hi".into();
    offer.tags = vec!["greet".into(), "demo".into()];
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let post_id = runtime
        .block_on(alice_client.create_invitation(&offer))
        .unwrap()
        .post_id;

    let listed = json_of(&cli(
        &bob_dir,
        url,
        &["browse", "--json", "--tags", "greet", "--type", "supply"],
    ));
    assert_eq!(
        (
            listed["total"].as_u64(),
            listed["results"][0]["post_id"].as_str()
        ),
        (Some(1), Some(post_id.as_str()))
    );
    let line = stdout(&cli(
        &bob_dir,
        url,
        &["browse", "--oneline", "--protocol-id", &protocol_id],
    ));
    let columns: Vec<&str> = line.trim_end_matches('\n').split('\t').collect();
    assert_eq!(columns.len(), 12);
    assert_eq!(
        &columns[..9],
        [
            post_id.as_str(),
            &protocol_id,
            "supply",
            "Say hi",
            "greet,demo",
            alice.public_key(),
            "true",
            "alice",
            "1"
        ]
    );
    assert!(stdout(&cli(&bob_dir, url, &["browse"])).starts_with("Total: 1\n"));
    assert_eq!(
        error_line(&cli(&bob_dir, url, &["browse", "--tags", "a b"])),
        "error: --tags: tag \"a b\" must be 1-64 characters of A-Za-z0-9_.:-"
    );

    assert_eq!(
        error_line(&cli(&bob_dir, url, &["cancel", &post_id])),
        format!(
            "error: DELETE /api/v1/invitations/{post_id} failed: HTTP 403: only the creator of an invitation can cancel it"
        )
    );
    assert_eq!(
        json_of(&cli(&alice_dir, url, &["cancel", &post_id, "--json"]))["cancelled"],
        true
    );
    assert!(stdout(&cli(&bob_dir, url, &["browse"])).starts_with("Total: 0"));

    // A session between them, ended through the CLI.
    let post_id = runtime
        .block_on(alice_client.create_invitation(&offer))
        .unwrap()
        .post_id;
    let bob = load_key_file(&DataDir::new(&bob_dir)).unwrap();
    let nonce = identity::new_session_nonce();
    let canonical = identity::session_canonical(
        &post_id,
        alice.public_key(),
        bob.public_key(),
        &protocol_id,
        &nonce,
    );
    let proof = NewSession::signed_by_guest(
        &bob,
        &post_id,
        alice.public_key(),
        &protocol_id,
        &nonce,
        &alice.sign_hex(canonical.as_bytes()),
    );
    let session_id = runtime
        .block_on(server.client(&bob).create_session(&proof))
        .unwrap()
        .session_id;
    let shown = json_of(&cli(
        &bob_dir,
        url,
        &["session", "get", &session_id, "--json"],
    ));
    assert_eq!(shown["status"], "matched");
    assert!(
        stdout(&cli(&bob_dir, url, &["session", "get", &session_id])).contains("status: matched")
    );
    assert_eq!(
        stdout(&cli(
            &alice_dir,
            url,
            &["session", "status", &session_id, "closed"]
        ))
        .trim(),
        format!("[OK] session {session_id} status updated to closed")
    );
    assert!(
        error_line(&cli(
            &bob_dir,
            url,
            &["session", "status", &session_id, "failed"]
        ))
        .contains("HTTP 409: the session has already ended (closed)")
    );
}

#[test]
fn the_server_url_comes_from_flags_env_or_config_and_failures_are_one_line() {
    let server = TestServer::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    stdout(
        &aigenora()
            .arg("--data-dir")
            .arg(data)
            .arg("init")
            .output()
            .unwrap(),
    );
    let discover = |configure: &dyn Fn(&mut std::process::Command)| {
        let mut command = aigenora();
        command
            .arg("--data-dir")
            .arg(data)
            .args(["protocol", "discover", "--json"]);
        command
            .env_remove("AIGENORA_SERVER")
            .env_remove("P2P_SERVER");
        configure(&mut command);
        command.output().unwrap()
    };
    std::fs::write(
        data.join("config.json"),
        format!(r#"{{"server":"{}/"}}"#, server.url),
    )
    .unwrap();
    assert!(discover(&|_| {}).status.success(), "config.json");
    std::fs::write(
        data.join("config.json"),
        r#"{"server":"http://127.0.0.1:9"}"#,
    )
    .unwrap();
    assert!(
        discover(&|c| {
            c.env("P2P_SERVER", &server.url);
        })
        .status
        .success(),
        "P2P_SERVER beats the config"
    );
    let refused = discover(&|_| {});
    let line = error_line(&refused);
    assert!(
        line.starts_with(
            "error: GET /api/v1/protocols?limit=20 failed: cannot reach http://127.0.0.1:9:"
        ),
        "{line}"
    );

    let empty = tempfile::tempdir().unwrap();
    let missing = aigenora()
        .arg("--data-dir")
        .arg(empty.path())
        .args(["browse"])
        .output()
        .unwrap();
    assert!(
        error_line(&missing).starts_with("error: key.json not found (run `aigenora init` first)")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn fetch_refuses_a_spec_that_does_not_hash_to_the_requested_id() {
    use axum::{Json, Router, routing::get};
    let served = test_spec("Impostor", 1);
    let app = Router::new().route(
        "/api/v1/protocols/{id}",
        get(move || async move { Json(serde_json::json!({"spec_json": served})) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let dir = tempfile::tempdir().unwrap();
    let requested = "ab".repeat(32);
    let actual = aigenora::spec::Spec::from_value(test_spec("Impostor", 1))
        .unwrap()
        .protocol_id();
    let data = dir.path().to_path_buf();
    let output = tokio::task::spawn_blocking(move || {
        stdout(&cli(&data, &url, &["init"]));
        (
            cli(&data, &url, &["protocol", "fetch", &requested]),
            cli(&data, &url, &["protocol", "fetch", "nothex"]),
        )
    })
    .await
    .unwrap();
    assert_eq!(
        error_line(&output.0),
        format!(
            "error: protocol hash mismatch: requested {}, got {actual}",
            "ab".repeat(32)
        )
    );
    assert!(
        !dir.path().join("protocols").exists(),
        "nothing is installed"
    );
    assert_eq!(
        error_line(&output.1),
        "error: protocol_id must be 64 lowercase hex characters, got \"nothex\""
    );
}

/// The network's names work wherever a protocol is named: before the contract is in the
/// library, `protocol path` and `protocol test` say in one line how to get it; `protocol
/// fetch rps-v1` fetches it by its alias; then both take the alias and the protocol_id.
#[test]
fn well_known_aliases_name_a_contract_once_it_is_in_the_library() {
    let server = TestServer::start(&[]);
    let work = tempfile::tempdir().unwrap();
    let (alice_dir, bob_dir) = (work.path().join("alice"), work.path().join("bob"));
    let url = server.url.as_str();
    for (dir, nickname) in [(&alice_dir, "alice"), (&bob_dir, "bob")] {
        stdout(&cli(dir, url, &["init"]));
        stdout(&cli(dir, url, &["register", "--nickname", nickname]));
    }
    let rps = reference_contract("rps-v1");
    stdout(&cli(
        &alice_dir,
        url,
        &["protocol", "register", rps.spec.to_str().unwrap()],
    ));

    let missing = format!(
        "error: rps-v1 (the network's Rock-Paper-Scissors) is not in the protocol library of \
         {}: get it with `aigenora protocol fetch rps-v1` (needs a community server)",
        bob_dir.display()
    );
    assert_eq!(
        error_line(&cli(&bob_dir, url, &["protocol", "path", "rps-v1"])),
        missing
    );
    assert_eq!(
        error_line(&cli(&bob_dir, url, &["protocol", "test", "rps-v1"])),
        missing
    );
    let scaffolded = work.path().join("my-rps");
    let scaffold = |dir: &Path| {
        cli(
            &bob_dir,
            url,
            &["protocol", "scaffold", "rps-v1", dir.to_str().unwrap()],
        )
    };
    assert_eq!(error_line(&scaffold(&scaffolded)), missing);
    assert!(
        !scaffolded.exists(),
        "nothing written for a missing contract"
    );
    let demo_root = work.path().join("demo");
    let demo = |protocol: &str| {
        let root = demo_root.to_str().unwrap();
        cli(
            &bob_dir,
            url,
            &["demo", "--protocol", protocol, "--root", root],
        )
    };
    assert_eq!(error_line(&demo("rps-v1")), missing);

    let fetched = json_of(&cli(
        &bob_dir,
        url,
        &["protocol", "fetch", "rps-v1", "--json"],
    ));
    assert_eq!(fetched["protocol_id"], rps.protocol_id.as_str());
    let dir = library_dir(&bob_dir, &rps.protocol_id);
    for name in ["rps-v1", rps.protocol_id.as_str()] {
        assert_eq!(
            stdout(&cli(&bob_dir, url, &["protocol", "path", name])).trim(),
            dir.display().to_string(),
            "{name}"
        );
    }
    let tested = stdout(&cli(&bob_dir, url, &["protocol", "test", "rps-v1"]));
    assert!(tested.contains("[OK] protocol test passed"), "{tested}");

    assert_eq!(
        stdout(&scaffold(&scaffolded)).trim(),
        scaffolded.join("hooks.py").display().to_string()
    );
    assert_eq!(
        stdout(&cli(
            &bob_dir,
            url,
            &[
                "protocol",
                "hash",
                scaffolded.join("spec.json").to_str().unwrap()
            ]
        ))
        .trim(),
        rps.protocol_id
    );
    let hooks = std::fs::read_to_string(scaffolded.join("hooks.py")).unwrap();
    assert!(hooks.contains("class Hooks"), "{hooks}");

    // The demo plays the library's contract on its own server, both agents on our hooks.
    let played = stdout(&demo(&rps.protocol_id));
    assert!(
        played.contains("alice (host): completed: true")
            && played.contains("bob (guest): completed: true"),
        "{played}"
    );
    let bob_copy = library_dir(&demo_root.join("bob"), &rps.protocol_id);
    assert_eq!(
        std::fs::read(bob_copy.join("hooks.py")).unwrap(),
        std::fs::read(dir.join("hooks.py")).unwrap()
    );

    let never = work.path().join("never");
    for command in [
        &["protocol", "path"][..],
        &["protocol", "scaffold"],
        &["demo", "--protocol"],
    ] {
        let mut args = command.to_vec();
        args.push("no-such-v1");
        if command[1] == "scaffold" {
            args.push(never.to_str().unwrap());
        }
        let unknown = error_line(&cli(&bob_dir, url, &args));
        assert!(
            unknown.starts_with("error: no-such-v1 is neither a protocol directory, a built-in (")
                && unknown.contains("rps-v1"),
            "{command:?}: {unknown}"
        );
    }
}

#[test]
fn scaffold_takes_a_built_in_by_alias_and_never_overwrites_hooks() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("agent");
    let target = work.path().join("mine");
    let args = [
        "protocol",
        "scaffold",
        "guess-number",
        target.to_str().unwrap(),
    ];
    let output = cli(&data, "http://unused", &args);
    assert_eq!(
        stdout(&output).trim(),
        target.join("hooks.py").display().to_string()
    );
    let builtin = aigenora::protocols::find("guess-number").unwrap();
    assert_eq!(
        std::fs::read_to_string(target.join("spec.json")).unwrap(),
        builtin.spec_json
    );
    assert_ne!(
        std::fs::read_to_string(target.join("hooks.py")).unwrap(),
        builtin.hooks_py,
        "a skeleton, not our hooks"
    );
    assert!(
        !data.exists(),
        "a built-in is scaffolded without touching the data dir"
    );
    assert!(
        error_line(&cli(&data, "http://unused", &args))
            .ends_with("already exists; not overwriting it")
    );
}

/// The network's 21 contracts register on our server, rooms and the realtime game included;
/// an invitation to a realtime game (a mode this build does not run), or to a room whose host
/// opened none, is refused by `join` in one line, before any ticket is dialed, and the
/// invitation stays listed for other clients.
#[test]
fn every_network_contract_registers_and_a_realtime_invitation_is_refused_in_one_line() {
    let server = TestServer::start(&[]);
    let work = tempfile::tempdir().unwrap();
    let (alice_dir, bob_dir) = (work.path().join("alice"), work.path().join("bob"));
    let url = server.url.as_str();
    for (dir, nickname) in [(&alice_dir, "alice"), (&bob_dir, "bob")] {
        stdout(&cli(dir, url, &["init"]));
        stdout(&cli(dir, url, &["register", "--nickname", nickname]));
    }
    let index: Value = serde_json::from_str(
        &std::fs::read_to_string(
            crate::support::reference::reference_package_dir().join("protocols/index.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let aliases: Vec<&str> = index["protocols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["alias"].as_str().unwrap())
        .collect();
    assert_eq!(aliases.len(), 21);
    for alias in &aliases {
        let contract = reference_contract(alias);
        let registered = json_of(&cli(
            &alice_dir,
            url,
            &[
                "protocol",
                "register",
                contract.spec.to_str().unwrap(),
                "--json",
            ],
        ));
        assert_eq!(
            registered["protocol_id"],
            contract.protocol_id.as_str(),
            "{alias}"
        );
    }
    let alice = load_key_file(&DataDir::new(&alice_dir)).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // A realtime game is refused for its mode; a room invitation without a room (its host
    // never opened one) is refused for that, before anything is dialed.
    for (alias, expected) in [
        (
            "tank-battle-v1",
            "error: this build does not run flow mode authoritative_realtime".to_string(),
        ),
        (
            "community-room-v1",
            "no room on the server for it".to_string(),
        ),
    ] {
        let contract = reference_contract(alias);
        let offer = NewInvitation::signed(&alice, &contract.protocol_id, &fake_ticket(9));
        let post_id = runtime
            .block_on(server.client(&alice).create_invitation(&offer))
            .unwrap()
            .post_id;
        let refused = error_line(&cli(&bob_dir, url, &["join", &post_id]));
        assert!(
            refused.starts_with("error: ") && refused.contains(&expected),
            "{alias}: {refused}"
        );
        let listed = json_of(&cli(
            &bob_dir,
            url,
            &["browse", "--json", "--protocol-id", &contract.protocol_id],
        ));
        assert_eq!(
            listed["total"], 1,
            "{alias}: the invitation is still offered"
        );
    }
}

/// `session action` checks what it queues: a JSON object, at most 64 KiB in canonical form,
/// no floats, into a session directory; each refusal is one line and queues nothing.
#[test]
fn session_action_refuses_what_a_room_could_not_carry_in_one_line() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("agent");
    let session = data.join("sessions").join("guest-1");
    std::fs::create_dir_all(&session).unwrap();
    std::fs::write(
        session.join("session.json"),
        r#"{"role": "guest", "protocol_id": "abc", "status": "running"}"#,
    )
    .unwrap();
    let dir = session.to_str().unwrap();
    let texts: Vec<String> = (0..700).map(|_| "x".repeat(100)).collect();
    let big = serde_json::json!({ "texts": texts }).to_string();
    for (action, expected) in [
        ("[1, 2]", "the action must be a JSON object, not an array"),
        ("{\"x\": 1.5}", "the action cannot travel in a room"),
        ("{not json", "the action is not JSON"),
        (big.as_str(), "bytes; at most 65536"),
    ] {
        let refused = error_line(&cli(
            &data,
            "http://unused",
            &["session", "action", "--state-dir", dir, "--action", action],
        ));
        assert!(refused.contains(expected), "{action:.40}: {refused}");
    }
    assert!(
        !session.join("room-actions.jsonl").exists(),
        "nothing was queued"
    );
    let queued = json_of(&cli(
        &data,
        "http://unused",
        &[
            "session",
            "action",
            "--state-dir",
            dir,
            "--action",
            r#"{"kind": "send", "text": "hi"}"#,
            "--json",
        ],
    ));
    assert_eq!(queued["status"], "ok");
    let line = std::fs::read_to_string(session.join("room-actions.jsonl")).unwrap();
    let line: Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(line["action"]["text"], "hi");
}

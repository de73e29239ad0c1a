//! The run gate for mental_poker: a spec whose messages do not declare the fields the engine
//! sends fails `validate`, and `protocol test`, `host` and `guest` refuse it with one line
//! before any hook loads and before anything is published or dialed; hooks without the
//! mode's `proto_mp_*` hooks are refused as they load, still before anything is published or
//! dialed; and the mode's skeleton asks for those hooks. The network's realtime and room
//! contracts validate, and the commands that run a session refuse them the same way.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

/// The twelve mental_poker messages, each declaring only its `action`.
fn bare_mental_poker_spec() -> Value {
    let names = [
        "join",
        "ready",
        "mp_setup_a",
        "mp_setup_b",
        "mp_ot_request",
        "mp_ot_response",
        "mp_play",
        "mp_pass",
        "mp_opening",
        "mp_witness",
        "mp_terminal_receipt",
        "error",
    ];
    let messages: Vec<Value> = names
        .iter()
        .map(|name| {
            let direction = match *name {
                "join" => "guest_to_host",
                "ready" => "host_to_guest",
                _ => "both",
            };
            json!({"name": name, "direction": direction,
                   "fields": {"action": {"type": "enum", "values": [name], "required": true}}})
        })
        .collect();
    json!({"name": "Poker", "spec_version": "1.0", "flow": {"mode": "mental_poker"}, "messages": messages})
}

fn aigenora(data_dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_aigenora"))
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .output()
        .unwrap()
}

/// `protocol test PROTOCOL EXTRA` with its state under `home/state`: the run and that dir.
fn protocol_test(home: &Path, protocol: &Path, extra: &[&str]) -> (Output, PathBuf) {
    let state = home.join("state");
    let mut args = vec![
        "protocol",
        "test",
        protocol.to_str().unwrap(),
        "--state-base",
        state.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    (aigenora(home, &args), state)
}

#[test]
fn a_mental_poker_spec_without_the_engines_fields_is_refused_before_loading_hooks() {
    let home = tempfile::tempdir().unwrap();
    let protocol = home.path().join("poker");
    std::fs::create_dir(&protocol).unwrap();
    let spec_path = protocol.join("spec.json");
    std::fs::write(&spec_path, bare_mental_poker_spec().to_string()).unwrap();
    // Hooks that leave a mark if anything ever loads them.
    let marker = protocol.join("hooks-were-loaded");
    std::fs::write(
        protocol.join("hooks.py"),
        format!(
            "open({:?}, 'w').close()\nraise SystemExit('hooks.py must not load')\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
    let spec = spec_path.to_str().unwrap();

    let validated = aigenora(home.path(), &["validate", spec]);
    let report = String::from_utf8_lossy(&validated.stdout);
    assert_eq!(validated.status.code(), Some(1), "{report}");
    assert!(
        report.contains("mental_poker: the engine sends field 'rsa_pub', which is not declared"),
        "{report}"
    );

    let (tested, state) = protocol_test(home.path(), &protocol, &[]);
    let stderr = String::from_utf8_lossy(&tested.stderr);
    assert_eq!(tested.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: invalid spec: "), "{stderr}");
    assert!(tested.stdout.is_empty());
    assert!(!marker.exists(), "hooks.py was loaded");
    assert!(!state.exists(), "no side was started");

    // Hosting and dialing stop at the same gate: no key, server or ticket is ever needed.
    let dir = protocol.to_str().unwrap();
    let ticket = "nodeaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    for args in [
        vec![
            "host",
            "--protocol-dir",
            dir,
            "--server",
            "http://127.0.0.1:9",
        ],
        vec!["host", "--direct", "--protocol-dir", dir],
        vec!["guest", "--protocol-dir", dir, "--iroh-ticket", ticket],
    ] {
        let refused = aigenora(home.path(), &args);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains("invalid spec"), "{args:?}: {stderr}");
        assert!(!marker.exists(), "hooks.py was loaded by {args:?}");
        assert!(
            !home.path().join("sessions").exists(),
            "{args:?} started a session"
        );
    }
}

/// Hooks for a mental_poker spec written from a session_loop skeleton (what `protocol
/// scaffold` generated for this mode before it had its own), plus `mp_hooks` of the mode's own.
fn hooks_without_mp(mp_hooks: &[&str]) -> String {
    let mut text = String::from(
        "from aigenora.proto.hooks import HookResult, ProtocolHooks\n\n\
         class Hooks(ProtocolHooks):\n\
         \x20   def proto_host_handle_join(self, msg):\n\
         \x20       return HookResult({'action': 'ready'})\n\n\
         \x20   def proto_guest_join_message(self):\n\
         \x20       return {'action': 'join'}\n",
    );
    for hook in mp_hooks {
        text.push_str(&format!(
            "\n    def {hook}(self, state):\n        return None\n"
        ));
    }
    text
}

/// Thirty-One's spec with a rule of its own (so it is no built-in) in `dir`, with `hooks`.
fn thirty_one_copy(dir: &Path, hooks: &str) -> String {
    let mut spec: Value =
        serde_json::from_str(aigenora::protocols::find("thirty-one").unwrap().spec_json).unwrap();
    spec["rules"]["copy"] = json!("A copy of the built-in, to be no built-in.");
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("spec.json"), spec.to_string()).unwrap();
    std::fs::write(dir.join("hooks.py"), hooks).unwrap();
    aigenora::spec::Spec::from_value(spec)
        .unwrap()
        .protocol_id()
}

#[test]
fn scaffolding_a_mental_poker_spec_asks_for_the_mp_hooks() {
    let home = tempfile::tempdir().unwrap();
    let spec = home.path().join("spec.json");
    std::fs::write(
        &spec,
        aigenora::protocols::find("thirty-one").unwrap().spec_json,
    )
    .unwrap();
    let protocol = home.path().join("poker");
    let scaffold = aigenora(
        home.path(),
        &[
            "protocol",
            "scaffold",
            spec.to_str().unwrap(),
            protocol.to_str().unwrap(),
        ],
    );
    assert!(scaffold.status.success(), "{scaffold:?}");
    let hooks = std::fs::read_to_string(protocol.join("hooks.py")).unwrap();
    assert!(!hooks.contains("proto_host_handle"), "{hooks}");
    assert!(
        hooks.contains("return super().proto_mp_validate_play(state, who, play_msg)"),
        "{hooks}"
    );
    let tested = aigenora(
        home.path(),
        &["protocol", "test", protocol.to_str().unwrap()],
    );
    let stderr = String::from_utf8_lossy(&tested.stderr);
    assert_eq!(tested.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "unimplemented hooks: proto_mp_check_winner, proto_mp_choose_action, \
             proto_mp_deck_universe, proto_mp_initial_deal"
        ),
        "{stderr}"
    );
    // Filled in, the skeleton's hooks are all the engine needs (its optional hooks keep the
    // SDK's defaults): a whole game of its own deck plays and both audits pass.
    let filled = hooks
        .lines()
        .filter(|line| !line.starts_with("AIGENORA_SKELETON"))
        .collect::<Vec<_>>()
        .join("\n")
        .replace(
            "raise NotImplementedError(\"AIGENORA_SKELETON_NOT_IMPLEMENTED: proto_mp_deck_universe\")",
            "return [(rank, suit) for rank in range(10) for suit in range(4)]",
        )
        .replace(
            "raise NotImplementedError(\"AIGENORA_SKELETON_NOT_IMPLEMENTED: proto_mp_initial_deal\")",
            "return {'host': 2, 'guest': 2}",
        )
        .replace(
            "raise NotImplementedError(\"AIGENORA_SKELETON_NOT_IMPLEMENTED: proto_mp_choose_action\")",
            "hand = sorted(state['_mp_hand'])\n        return {'kind': 'play', 'id_b': hand[0]} if hand else {'kind': 'pass'}",
        )
        .replace(
            "raise NotImplementedError(\"AIGENORA_SKELETON_NOT_IMPLEMENTED: proto_mp_check_winner\")",
            "view = state['_mp_deck_view']\n        \
             return next((who for who in ('host', 'guest') if not view.hand_of(who)), None)",
        );
    std::fs::write(protocol.join("hooks.py"), filled).unwrap();
    let (played, _) = protocol_test(home.path(), &protocol, &["--json"]);
    let report: Value = serde_json::from_slice(&played.stdout).unwrap_or_else(|_| {
        panic!("{}", String::from_utf8_lossy(&played.stderr));
    });
    assert_eq!(report["passed"], true, "{report}");
    assert_eq!(report["host"]["winner"], "host", "{report}");
}

#[test]
fn hooks_missing_an_mp_hook_are_refused_before_anything_runs_is_published_or_dialed() {
    let home = tempfile::tempdir().unwrap();
    let protocol = home.path().join("poker");
    thirty_one_copy(&protocol, &hooks_without_mp(&[]));
    let (tested, state) = protocol_test(home.path(), &protocol, &[]);
    let stderr = String::from_utf8_lossy(&tested.stderr);
    assert_eq!(tested.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(
            "does not implement proto_mp_deck_universe, proto_mp_initial_deal, \
             proto_mp_choose_action, proto_mp_check_winner (flow mode mental_poker needs"
        ),
        "{stderr}"
    );
    assert!(!state.exists(), "no side was started");

    // `host --direct` refuses before it shows a ticket.
    let mut direct = Command::new(env!("CARGO_BIN_EXE_aigenora"));
    direct
        .arg("--data-dir")
        .arg(home.path())
        .args([
            "host",
            "--direct",
            "--protocol-dir",
            protocol.to_str().unwrap(),
        ])
        .env("AIGENORA_RELAY", "disabled");
    let direct = crate::support::process::Proc::spawn("host --direct", direct)
        .finish(std::time::Duration::from_secs(60));
    let stderr = &direct.stderr;
    assert_eq!(direct.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("does not implement proto_mp_deck_universe"),
        "{stderr}"
    );
    assert!(!direct.stdout.contains("ticket:"), "{}", direct.stdout);

    // Only proto_mp_deck_universe missing: `host` refuses before it publishes.
    let net = crate::support::net::Net::start();
    let host = net.agent("host");
    let bad = hooks_without_mp(&[
        "proto_mp_initial_deal",
        "proto_mp_choose_action",
        "proto_mp_check_winner",
    ]);
    let bad_dir = host.dir.join("bad-poker");
    thirty_one_copy(&bad_dir, &bad);
    let spec = bad_dir.join("spec.json");
    host.ok(&["protocol", "register", spec.to_str().unwrap()]);
    let refused = host
        .command(&["host", "--protocol-dir", bad_dir.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("does not implement proto_mp_deck_universe (flow mode mental_poker"),
        "{stderr}"
    );
    assert_eq!(
        host.ok(&["browse", "--oneline"]),
        "",
        "nothing was published"
    );

    // `join` with such hooks in its library refuses before it dials a good host.
    let good_dir = host.dir.join("good-poker");
    let good = aigenora::protocols::find("thirty-one").unwrap().hooks_py;
    let protocol_id = thirty_one_copy(&good_dir, good);
    let (mut hosting, post_id) = host.host(good_dir.to_str().unwrap(), &[]);
    let guest = net.agent("guest");
    let library = aigenora::layout::DataDir::new(&guest.dir).protocol_dir(&protocol_id);
    assert_eq!(thirty_one_copy(&library, &bad), protocol_id);
    let joined = guest.command(&["join", &post_id]).output().unwrap();
    let stderr = String::from_utf8_lossy(&joined.stderr);
    assert_eq!(joined.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("does not implement proto_mp_deck_universe (flow mode mental_poker"),
        "{stderr}"
    );
    let hosted = crate::support::net::SessionFiles::read(host.session_dirs("host").last().unwrap());
    assert!(
        hosted.events_of("peer_connected").is_empty(),
        "the guest dialed the host"
    );
    hosting.kill_and_reap();
}

/// The reference's Tank Battle (realtime) and Community Room: `validate` passes them, while
/// `host --direct` and `guest` (and, for realtime, `host` and `protocol test`) refuse them in
/// one line naming the mode, before the hooks load and before any session starts.
#[test]
fn realtime_and_room_contracts_validate_and_are_refused_by_every_runner_in_one_line() {
    for (alias, mode) in [
        ("tank-battle-v1", "authoritative_realtime"),
        ("community-room-v1", "authoritative_group"),
    ] {
        let home = tempfile::tempdir().unwrap();
        let protocol = home.path().join(alias);
        std::fs::create_dir(&protocol).unwrap();
        let contract = crate::support::reference::reference_contract(alias);
        std::fs::copy(&contract.spec, protocol.join("spec.json")).unwrap();
        let marker = protocol.join("hooks-were-loaded");
        std::fs::write(
            protocol.join("hooks.py"),
            format!("open({:?}, 'w').close()\n", marker.display().to_string()),
        )
        .unwrap();
        let spec = protocol.join("spec.json");
        let validated = aigenora(home.path(), &["validate", spec.to_str().unwrap()]);
        assert_eq!(validated.status.code(), Some(0), "{alias}");

        let dir = protocol.to_str().unwrap();
        let ticket = "nodeaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        let state = home.path().join("state");
        let mut runners = vec![
            vec!["host", "--direct", "--protocol-dir", dir],
            vec!["guest", "--protocol-dir", dir, "--iroh-ticket", ticket],
        ];
        if mode == "authoritative_realtime" {
            // A room is hosted through a server (tests/interop/groups.rs) and its protocol
            // test plays it in one process (tests/spec/room_test.rs).
            runners.push(vec![
                "host",
                "--protocol-dir",
                dir,
                "--server",
                "http://127.0.0.1:9",
            ]);
            runners.push(vec![
                "protocol",
                "test",
                dir,
                "--state-base",
                state.to_str().unwrap(),
            ]);
        }
        for args in runners {
            let refused = aigenora(home.path(), &args);
            let stderr = String::from_utf8_lossy(&refused.stderr);
            assert_eq!(refused.status.code(), Some(1), "{alias} {args:?}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{alias} {args:?}: {stderr}");
            assert!(
                stderr.starts_with(&format!("error: this build does not run flow mode {mode}")),
                "{alias} {args:?}: {stderr}"
            );
            assert!(!marker.exists(), "hooks.py was loaded by {args:?}");
            assert!(
                !state.exists() && !home.path().join("sessions").exists(),
                "{args:?} started"
            );
        }
    }
}

//! Steering a running session from the command line without naming it: `session snapshot`
//! (once, `--json`, `--follow`), `session strategy --merge/--set` and `session decide` act
//! on the newest session of the data dir — newest by time, not by role — and `snapshot
//! --follow` stops when the session ends or its process is killed. Their `--json` output
//! escapes what a terminal would obey.

use std::path::PathBuf;
use std::time::Duration;

use aigenora::control::Target;
use aigenora::layout::DataDir;
use aigenora::records::{SessionRecord, SessionStatus};
use aigenora::session::SessionRecorder;
use aigenora::spec::Role;
use serde_json::{Value, json};

use crate::control::open_window;
use crate::support::control::run_decide;
use crate::support::net::{Agent, Net, SESSION_LIMIT, wait_until};
use crate::support::process::Proc;

/// An earlier session of `agent` as a host, already over: its dir name (`host-…`) sorts
/// after any `guest-…` one, so picking "the newest" by name would pick it.
fn an_older_hosted_session(agent: &Agent) -> PathBuf {
    let older = SessionRecorder::create(&DataDir::new(&agent.dir), Role::Host).unwrap();
    older.record_start(Role::Host, SessionRecord::default());
    older
        .update(|record| record.status = Some(SessionStatus::Closed))
        .unwrap();
    std::thread::sleep(Duration::from_millis(5));
    older.root().to_path_buf()
}

/// `aigenora session ARGS --json` in `agent`'s data dir, no `--state-dir`: its JSON answer.
fn session_json(agent: &Agent, args: &[&str]) -> Value {
    let mut full = vec!["session"];
    full.extend_from_slice(args);
    full.push("--json");
    serde_json::from_str(agent.ok(&full).trim()).unwrap()
}

/// A view printed by `snapshot --json`, without its clock.
fn without_clock(line: &str) -> Value {
    let mut view: Value = serde_json::from_str(line).unwrap();
    view.as_object_mut().unwrap().remove("now");
    view
}

/// A human guest steered only through commands that find its session by themselves:
/// the snapshot shows the open window with its legal moves and the score, strategy merges
/// and replacements land in strategy.json and are logged, decisions are played, and a
/// `snapshot --follow` started mid-game prints each change once and ends with the session.
#[test]
fn the_newest_session_is_steered_without_naming_it() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let older = an_older_hosted_session(&bob);
    assert!(
        older
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("host-")
    );
    let options = r#"{"best_of": 2, "termination": "fixed_rounds", "moves": "rock"}"#;
    let (host, post_id) = alice.host(
        "rock-paper-scissors",
        &["--control-mode", "autonomous", "--options", options],
    );
    let guest = bob.join(&post_id, &["--control-mode", "human"]);
    let (dir, _) = wait_until(SESSION_LIMIT, || open_window(&bob.dir, "guest")).expect("a window");
    let follow = Proc::spawn(
        "snapshot --follow",
        bob.command(&["session", "snapshot", "--follow", "--json"]),
    );

    let view = session_json(&bob, &["snapshot"]);
    assert_eq!(
        (&view["role"], &view["status"], &view["control_mode"]),
        (&json!("guest"), &json!("running"), &json!("human")),
        "the newest session, not the older host one: {view}"
    );
    let window = &view["window"];
    assert_eq!(
        (
            &window["match_key"],
            &window["match_value"],
            &window["value_field"]
        ),
        (&json!("round"), &json!(0), &json!("choice")),
        "{view}"
    );
    assert_eq!(
        window["choices"],
        json!({"kind": "one_of", "values": ["rock", "paper", "scissors"]})
    );
    assert!(window["deadline_at"].as_f64().unwrap() > view["now"].as_f64().unwrap());
    assert_eq!(view["snapshot"]["score"], json!({"host": 0, "guest": 0}));
    let text = bob.ok(&["session", "snapshot"]);
    assert!(
        text.contains("status running  role guest  control human"),
        "{text}"
    );
    assert!(
        text.contains("waiting for a decision: round 0 (choice rock, paper or scissors,"),
        "{text}"
    );

    let engine = Target::at(&dir).unwrap().engine_dir().unwrap();
    let before = session_json(&bob, &["strategy"]);
    let first = session_json(
        &bob,
        &["strategy", "--merge", r#"{"notes": {"a": 1, "b": 2}}"#],
    );
    assert_eq!(first["notes"], json!({"a": 1, "b": 2}));
    let merged = session_json(&bob, &["strategy", "--merge", r#"{"notes": {"b": 3}}"#]);
    let mut expected = before.clone();
    expected["notes"] = json!({"a": 1, "b": 3});
    assert_eq!(merged, expected, "a merge keeps what was there");
    let set = session_json(&bob, &["strategy", "--set", r#"{"fixed": "scissors"}"#]);
    assert_eq!(set, json!({"fixed": "scissors"}));
    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(engine.strategy_file()).unwrap()).unwrap();
    assert_eq!(on_disk, json!({"fixed": "scissors"}));
    let logged: Vec<Value> = std::fs::read_to_string(engine.strategy_events_file())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let ops: Vec<&Value> = logged.iter().map(|line| &line["op"]).collect();
    assert_eq!(ops, ["merge", "merge", "set"]);
    assert_eq!(logged[0]["before"], before);
    assert_eq!(logged[2]["before"], expected);
    assert_eq!(logged[2]["after"], json!({"fixed": "scissors"}));

    let decide = |value: &str| run_decide(bob.command(&["session", "decide", value, "--json"]));
    let (taken, played) = decide("paper");
    assert!(taken, "{played}");
    assert_eq!(
        (&played["status"], &played["match_value"]),
        (&json!("played"), &json!(0))
    );
    wait_until(SESSION_LIMIT, || {
        open_window(&bob.dir, "guest").filter(|(_, w)| w.match_value == 1)
    })
    .expect("the second window");
    // The follower polls; the second window is answered only once it has shown it.
    follow.wait_for_line(
        r#""window":{"seq":2,"match_key":"round","match_value":1,"#,
        SESSION_LIMIT,
    );
    let (taken, played) = decide("scissors");
    assert!(taken, "{played}");
    assert_eq!(played["match_value"], 1);
    assert!(guest.finish(SESSION_LIMIT).status.success());
    assert!(host.finish(SESSION_LIMIT).status.success());

    let followed = follow.succeed(Duration::from_secs(20)).stdout;
    let views: Vec<Value> = followed.lines().map(without_clock).collect();
    assert_eq!(views[0]["window"]["match_value"], 0, "{followed}");
    assert!(
        views.iter().any(|v| v["window"]["match_value"] == 1),
        "{followed}"
    );
    let last = views.last().unwrap();
    assert_eq!(last["status"], "closed", "{followed}");
    assert_eq!(last["window"], Value::Null);
    assert_eq!(last["snapshot"]["score"], json!({"host": 1, "guest": 1}));
    assert!(
        views.windows(2).all(|pair| pair[0] != pair[1]),
        "each change printed once: {followed}"
    );
}

/// `snapshot --follow` on a session whose process is killed (it records no end) stops
/// within a second or so and says why, instead of following forever.
#[test]
fn snapshot_follow_stops_when_the_session_process_is_killed() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, post_id) = alice.host("rock-paper-scissors", &["--control-mode", "autonomous"]);
    let mut guest = bob.join(&post_id, &["--control-mode", "human"]);
    wait_until(SESSION_LIMIT, || open_window(&bob.dir, "guest")).expect("a window");
    let follow = Proc::spawn(
        "snapshot --follow",
        bob.command(&["session", "snapshot", "--follow"]),
    );
    follow.wait_for_line("waiting for a decision: round 0", SESSION_LIMIT);
    guest.kill_and_reap();
    let followed = follow.succeed(Duration::from_secs(10));
    assert!(
        followed
            .stderr
            .contains("is gone without recording an end (killed?); stopped following"),
        "{}",
        followed.stderr
    );
    assert!(
        !followed.stdout.contains("status closed"),
        "{}",
        followed.stdout
    );
    let _ = host.finish(SESSION_LIMIT);
}

/// What `session list|events|snapshot --json` print is exact JSON with nothing a terminal
/// would obey: a peer's chat line or a post id carrying a C1 control or a bidi override comes
/// out as `\uXXXX` (C0 controls serde_json escapes already).
#[test]
fn session_json_output_escapes_what_a_terminal_would_obey() {
    let net = Net::start();
    let bob = net.agent("bob");
    let hostile = "rock\u{202e}kcor\u{9b}2J\u{7f}";
    let dir = SessionRecorder::create(&DataDir::new(&bob.dir), Role::Guest).unwrap();
    dir.record_start(
        Role::Guest,
        SessionRecord {
            post_id: Some(hostile.to_string()),
            ..SessionRecord::default()
        },
    );
    let event = json!({"ts": "2026-12-01T12:00:00+00:00", "type": "protocol_message",
        "summary": hostile, "data": {"msg": {"text": hostile}}});
    std::fs::write(dir.root().join("events.jsonl"), format!("{event}\n")).unwrap();
    let outputs = [
        bob.ok(&["session", "list", "--json"]),
        bob.ok(&["session", "events", "--json"]),
        bob.ok(&["session", "snapshot", "--json"]),
        bob.ok(&["session", "events"]),
    ];
    for output in &outputs {
        assert!(
            !output.contains(['\u{202e}', '\u{9b}', '\u{7f}']),
            "raw controls in {output:?}"
        );
    }
    let listed: Value = serde_json::from_str(outputs[0].trim()).unwrap();
    assert_eq!(listed[0]["post_id"], hostile, "the JSON means the same");
    let recorded: Value = serde_json::from_str(outputs[1].trim()).unwrap();
    assert_eq!(recorded["data"]["msg"]["text"], hostile);
    assert!(
        outputs[3].contains("rock\\u{202e}kcor\\u{9b}2J\\x7f"),
        "{}",
        outputs[3]
    );
}

/// A session whose process died long ago, its pid since taken by an unrelated process:
/// `abort` signals nothing and says why; `events --follow` ends at once.
#[test]
fn a_dead_sessions_reused_pid_is_never_signalled() {
    let data = tempfile::tempdir().unwrap();
    let dir = SessionRecorder::create(&DataDir::new(data.path()), Role::Host).unwrap();
    // The unrelated process starts after the session did.
    let an_hour_ago = (chrono::Utc::now() - chrono::Duration::hours(1)).to_rfc3339();
    let mut bystander = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    dir.update(|record| {
        record.role = Some(Role::Host);
        record.status = Some(SessionStatus::Running);
        record.pid = Some(bystander.id());
        record.started_at = Some(an_hour_ago);
    })
    .unwrap();
    let state_dir = dir.root().to_str().unwrap();
    let output = crate::support::cli::aigenora()
        .args(["session", "abort", "--state-dir", state_dir])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("now belongs to another process"),
        "{stderr}"
    );
    assert!(
        bystander.try_wait().unwrap().is_none(),
        "the unrelated process was not signalled"
    );
    let mut events = crate::support::cli::aigenora();
    events.args(["session", "events", "--state-dir", state_dir, "--follow"]);
    let follow = Proc::spawn("events --follow", events);
    let ended = follow.finish(SESSION_LIMIT);
    assert!(ended.status.success());
    assert!(
        ended.stderr.contains("is gone without recording an end"),
        "{}",
        ended.stderr
    );
    bystander.kill().unwrap();
    bystander.wait().unwrap();
}

/// Concurrent `session strategy --merge` calls each see the one before: no key is lost.
#[test]
fn concurrent_strategy_merges_keep_every_key() {
    let data = tempfile::tempdir().unwrap();
    let dir = SessionRecorder::create(&DataDir::new(data.path()), Role::Guest).unwrap();
    let engine = dir.claim_engine_dir(Role::Guest).unwrap();
    std::fs::write(engine.snapshot_file(), "{}").unwrap();
    dir.update(|record| {
        record.role = Some(Role::Guest);
        record.status = Some(SessionStatus::Running);
        record.state_dir = Some(engine.root().to_path_buf());
    })
    .unwrap();
    let state_dir = dir.root().to_str().unwrap().to_string();
    let merges: Vec<_> = (0..24)
        .map(|n| {
            let patch = json!({ format!("key{n}"): n }).to_string();
            crate::support::cli::aigenora()
                .args([
                    "session",
                    "strategy",
                    "--state-dir",
                    &state_dir,
                    "--merge",
                    &patch,
                ])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut merge in merges {
        assert!(merge.wait().unwrap().success());
    }
    let strategy: Value =
        serde_json::from_str(&std::fs::read_to_string(engine.strategy_file()).unwrap()).unwrap();
    assert_eq!(strategy.as_object().unwrap().len(), 24, "{strategy}");
    let audited = std::fs::read_to_string(engine.strategy_events_file()).unwrap();
    assert_eq!(audited.lines().count(), 24);
}

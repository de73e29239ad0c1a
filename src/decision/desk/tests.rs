//! The desk on its own, with the built-in RPS contract: refusals that keep a window open,
//! hybrid overrides and priorities, quiet windows, deadlines and their timeout actions, late
//! decisions, and no window after the end.

use std::time::Duration;

use serde_json::json;

use super::*;
use crate::records::read_lines;

fn rps_desk(dir: &std::path::Path, times: WindowTimes) -> Arc<Desk> {
    let spec = crate::protocols::find("rock-paper-scissors")
        .unwrap()
        .spec();
    Desk::new(
        &crate::layout::EngineDir::open(dir),
        (spec, Role::Guest),
        times,
        EventLog::to_file(dir.join("events.jsonl")),
    )
}

fn times(human: u64, hybrid: u64, action: TimeoutAction) -> WindowTimes {
    WindowTimes {
        human: Duration::from_millis(human),
        hybrid: Duration::from_millis(hybrid),
        timeout_action: action,
    }
}

fn open(desk: &Desk, mode: WindowMode, round: u64, intended: Option<&str>) -> Window {
    desk.open_for_hooks(
        mode,
        ("round".into(), json!(round)),
        "choice",
        &HooksChoices::default(),
        None,
        intended.map(|m| json!(m)),
    )
    .unwrap()
}

fn append(dir: &std::path::Path, line: serde_json::Value) {
    std::fs::create_dir_all(dir.join("decision")).unwrap();
    super::append_line(&dir.join("decision/decisions.jsonl"), &line);
}

#[test]
fn a_human_window_refuses_a_bad_move_and_plays_a_good_one() {
    let dir = tempfile::tempdir().unwrap();
    let desk = rps_desk(dir.path(), times(5_000, 0, TimeoutAction::Abort));
    let window = open(&desk, WindowMode::Human, 0, None);
    assert!(window.open);
    let written = desk.files().window().unwrap();
    assert_eq!((written.key(), written.open), (window.key(), true));
    assert_eq!(
        desk.submit(window.seq, json!("banana"), "test"),
        Submitted::Refused("choice must be rock, paper or scissors".into())
    );
    append(
        dir.path(),
        json!({"round": 0, "choice": "lizard", "_meta": {"decision_id": "dec_bad"}}),
    );
    let waiter = {
        let desk = desk.clone();
        std::thread::spawn(move || desk.wait())
    };
    std::thread::sleep(Duration::from_millis(60));
    assert!(matches!(
        desk.submit(window.seq, json!("paper"), "test"),
        Submitted::Accepted(_)
    ));
    let WindowResult::Decided(played) = waiter.join().unwrap() else {
        panic!("decided")
    };
    assert_eq!(
        (played["round"].clone(), played["choice"].clone()),
        (json!(0), json!("paper"))
    );
    let outcomes: Vec<crate::records::DecisionOutcome> = read_lines(&desk.files().outcomes());
    assert_eq!(outcomes[0].status, DecisionStatus::Refused);
    assert_eq!(outcomes[1].status, DecisionStatus::Played);
    assert!(!desk.files().window().unwrap().open);
    assert!(desk.files().is_finalized("round:0"));
    append(
        dir.path(),
        json!({"round": 0, "choice": "rock", "_meta": {"decision_id": "dec_late"}}),
    );
    let _ = open(&desk, WindowMode::Human, 1, None);
    desk.cancel("test over");
    assert_eq!(desk.wait(), WindowResult::Cancelled);
    let outcomes: Vec<crate::records::DecisionOutcome> = read_lines(&desk.files().outcomes());
    assert_eq!(outcomes.last().unwrap().status, DecisionStatus::Late);
}

#[test]
fn a_hybrid_window_plays_a_submitted_override_or_the_agents_move() {
    let dir = tempfile::tempdir().unwrap();
    let desk = rps_desk(dir.path(), times(5_000, 0, TimeoutAction::Fallback));
    let _ = open(&desk, WindowMode::Hybrid, 0, Some("rock"));
    assert_eq!(desk.wait(), WindowResult::AgentMove);
    assert!(
        !desk.files().state().exists(),
        "a quiet window leaves no trace"
    );
    append(
        dir.path(),
        json!({"round": 1, "choice": "scissors", "_meta": {"origin": "cli", "decision_id": "dec_1"}}),
    );
    append(
        dir.path(),
        json!({"round": 1, "choice": "paper", "_meta": {"origin": "policy_runner", "decision_id": "dec_2"}}),
    );
    let _ = open(&desk, WindowMode::Hybrid, 1, Some("rock"));
    let WindowResult::Decided(played) = desk.wait() else {
        panic!("decided")
    };
    assert_eq!(played["choice"], "scissors");
    let consumed = std::fs::read_to_string(desk.files().consumed()).unwrap();
    assert!(consumed.contains("superseded") && consumed.contains("consumed"));
}

#[test]
fn a_human_deadline_applies_the_timeout_action() {
    let dir = tempfile::tempdir().unwrap();
    let desk = rps_desk(dir.path(), times(50, 0, TimeoutAction::Fallback));
    let _ = open(&desk, WindowMode::Human, 0, None);
    let WindowResult::Decided(played) = desk.wait() else {
        panic!("fallback plays a legal move")
    };
    assert!(["rock", "paper", "scissors"].contains(&played["choice"].as_str().unwrap()));
    let desk = rps_desk(dir.path(), times(50, 0, TimeoutAction::Forfeit));
    let _ = open(&desk, WindowMode::Human, 1, None);
    assert_eq!(desk.wait(), WindowResult::TimedOut(TimeoutAction::Forfeit));
    assert!(matches!(
        desk.take_stop(),
        Some(WindowStop::TimedOut {
            action: TimeoutAction::Forfeit,
            ..
        })
    ));
    desk.finish();
    assert!(
        desk.open_for_hooks(
            WindowMode::Human,
            ("round".into(), json!(2)),
            "choice",
            &HooksChoices::default(),
            None,
            None
        )
        .is_none()
    );
}

#[test]
fn a_window_keyed_by_any_field_takes_a_submitted_move() {
    use crate::decision::submit::{Answer, DecisionInput, Submitter, submit};
    let dir = tempfile::tempdir().unwrap();
    let desk = rps_desk(dir.path(), times(5_000, 0, TimeoutAction::Abort));
    let window = desk
        .open_for_hooks(
            WindowMode::Human,
            ("task_id".into(), json!("t1")),
            "summary",
            &HooksChoices::default(),
            None,
            None,
        )
        .unwrap();
    assert!(window.open);
    let waiter = {
        let desk = desk.clone();
        std::thread::spawn(move || desk.wait())
    };
    let submitter = Submitter {
        origin: "cli".into(),
        ..Submitter::default()
    };
    let answer = submit(
        &crate::layout::EngineDir::open(dir.path()),
        Some(crate::spec::ControlMode::Human),
        DecisionInput::Move(json!("done it")),
        &submitter,
        Duration::from_secs(5),
    );
    assert!(
        matches!(&answer, Answer::Played { match_key, .. } if match_key == "task_id"),
        "{answer:?}"
    );
    let WindowResult::Decided(played) = waiter.join().unwrap() else {
        panic!("decided")
    };
    assert_eq!(
        (played["task_id"].clone(), played["summary"].clone()),
        (json!("t1"), json!("done it"))
    );
}

#[test]
fn unreadable_lines_are_skipped_with_an_event_and_never_silence_later_decisions() {
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events.jsonl");
    let desk = rps_desk(dir.path(), times(5_000, 0, TimeoutAction::Abort));
    let window = open(&desk, WindowMode::Human, 0, None);
    let decisions = dir.path().join("decision/decisions.jsonl");
    let mut bytes = b"{\"round\": 0, \"choice\": \"\xff\xfe\"}\n[1, 2]\nnot json\n".to_vec();
    bytes.extend_from_slice(&vec![b'x'; super::MAX_DECISION_LINE + 1]);
    bytes.extend_from_slice(b"\n{\"round\": 0, \"choice\": \"pap");
    std::fs::write(&decisions, bytes).unwrap();
    // The torn last line is left torn: the next decision is a line of its own.
    append(
        dir.path(),
        json!({"round": 0, "choice": "paper", "_meta": {"decision_id": "dec_ok", "window_seq": window.seq}}),
    );
    let WindowResult::Decided(played) = desk.wait() else {
        panic!("decided")
    };
    assert_eq!(played["choice"], "paper");
    let skipped = crate::records::read_events(&events)
        .into_iter()
        .filter(|e| e.name == "decision_line_skipped")
        .count();
    assert_eq!(
        skipped, 5,
        "not UTF-8, not an object, not JSON, too long, torn"
    );
}

#[test]
fn an_answer_to_a_closed_window_is_too_late_never_played_in_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let desk = rps_desk(dir.path(), times(5_000, 0, TimeoutAction::Abort));
    let first = open(&desk, WindowMode::Human, 0, None);
    assert!(matches!(
        desk.submit(first.seq, json!("rock"), "test"),
        Submitted::Accepted(_)
    ));
    assert!(matches!(desk.wait(), WindowResult::Decided(_)));
    // A window with the same name opens again (hooks may reuse a key).
    let second = open(&desk, WindowMode::Human, 0, None);
    assert_eq!(second.seq, first.seq + 1);
    assert_eq!(
        desk.submit(first.seq, json!("paper"), "test"),
        Submitted::NoWindow
    );
    append(
        dir.path(),
        json!({"round": 0, "choice": "scissors", "_meta": {"decision_id": "dec_stale", "window_seq": first.seq}}),
    );
    append(
        dir.path(),
        json!({"round": 0, "choice": "paper", "_meta": {"decision_id": "dec_now", "window_seq": second.seq}}),
    );
    let WindowResult::Decided(played) = desk.wait() else {
        panic!("decided")
    };
    assert_eq!(played["choice"], "paper");
    let outcomes: Vec<crate::records::DecisionOutcome> = read_lines(&desk.files().outcomes());
    let status = |id: &str| {
        outcomes
            .iter()
            .find(|o| o.decision_id == id)
            .unwrap()
            .status
    };
    assert_eq!(status("dec_stale"), DecisionStatus::Late);
    assert_eq!(status("dec_now"), DecisionStatus::Played);
}

#[test]
fn decisions_waiting_for_future_windows_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let desk = rps_desk(dir.path(), times(5_000, 0, TimeoutAction::Abort));
    for round in 1..=100 {
        append(
            dir.path(),
            json!({"round": round, "choice": "rock", "_meta": {"decision_id": format!("dec_{round}")}}),
        );
    }
    let _ = open(&desk, WindowMode::Human, 0, None);
    desk.cancel("test over");
    assert_eq!(desk.wait(), WindowResult::Cancelled);
    let outcomes: Vec<crate::records::DecisionOutcome> = read_lines(&desk.files().outcomes());
    let refused = outcomes
        .iter()
        .filter(|o| o.status == DecisionStatus::Refused)
        .count();
    assert_eq!(refused, 100 - super::MAX_QUEUED);
    assert!(outcomes.iter().all(|o| {
        o.reason
            .as_deref()
            .is_some_and(|r| r.starts_with("too_many_queued"))
    }));
}

/// A table's window whose question went stale is withdrawn: it closes as cancelled at once
/// (long before its deadline), and the desk opens the next window as usual.
#[test]
fn a_withdrawn_window_closes_as_cancelled_and_the_next_one_opens() {
    let dir = tempfile::tempdir().unwrap();
    let desk = rps_desk(dir.path(), times(60_000, 0, TimeoutAction::Abort));
    let window = open(&desk, WindowMode::Human, 0, None);
    let waiting = {
        let desk = desk.clone();
        std::thread::spawn(move || desk.wait())
    };
    desk.withdraw(window.seq);
    assert_eq!(waiting.join().unwrap(), WindowResult::Cancelled);
    assert!(!desk.files().window().unwrap().open);
    assert!(!desk.is_over());
    let next = open(&desk, WindowMode::Human, 1, None);
    assert_eq!(next.seq, window.seq + 1);
    assert!(matches!(
        desk.submit(next.seq, json!("rock"), "test"),
        Submitted::Accepted(_)
    ));
    match desk.wait() {
        WindowResult::Decided(played) => assert_eq!(played["choice"], "rock"),
        other => panic!("the next window plays its decision: {other:?}"),
    }
}

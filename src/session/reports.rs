//! The end of a session, told to the server (status and winner together) and written to
//! session.json. Reporting never changes the outcome: failures become events and warnings.

use super::{SessionEnd, SessionError, SessionRecorder};
use crate::api::session::SessionStatus as ServerStatus;
use crate::client::RestClient;
use crate::records::{Event, SessionStatus, iso_now};
use crate::terminal::escape_control;

/// Reports the end: status (`closed` when completed, else `failed`) and, for a completed
/// session with a winner, that winner, in one request the server writes in one
/// transaction. The second party to report finds the session ended (409 `session_ended`,
/// expected) and then reports its winner alone.
pub(crate) async fn report_to_server(client: &RestClient, end: &SessionEnd, dir: &SessionRecorder) {
    if end.session_id.is_empty() {
        return;
    }
    let status = if end.completed() {
        ServerStatus::Closed
    } else {
        ServerStatus::Failed
    };
    let winner = end
        .result
        .as_ref()
        .ok()
        .filter(|o| o.completed)
        .and_then(|o| o.winner);
    let ended = client
        .set_session_status(&end.session_id, status, winner)
        .await;
    let second = matches!(&ended, Err(error) if error.code() == Some("session_ended"));
    if let Err(error) = ended
        && !second
    {
        dir.events().emit(Event::SessionCloseFailed {
            error: error.to_string(),
        });
        eprintln!("warning: {}", escape_control(&error.to_string()));
    }
    if second
        && let Some(winner) = winner
        && let Err(error) = client.report_result(&end.session_id, winner).await
    {
        dir.events().emit(Event::SessionResultFailed {
            error: error.to_string(),
        });
        eprintln!("warning: {}", escape_control(&error.to_string()));
    }
}

/// Writes the final status into session.json: `closed`, `aborted` (ended without
/// completing) or `crashed` (an error stopped this side), after the closing event
/// ([`announce_end`]).
pub(crate) fn record_end(end: &SessionEnd, dir: &SessionRecorder) {
    announce_end(end, dir);
    dir.record_outcome(&end.result);
}

/// A completed session's closing `session_ended {"completed": true}`, which the reference's
/// host and join emit after the engine and before they report to the server (the engine's
/// own is missing when the last message needed no answer, e.g. the guess-number guest
/// receiving `game_over`). [`conclude`](super::pipeline) writes it before reporting, and the
/// status that marks the end in session.json after.
pub(crate) fn announce_end(end: &SessionEnd, dir: &SessionRecorder) {
    if end.completed() {
        dir.events().emit(Event::SessionEnded {
            completed: Some(true),
            reason: None,
            peer_reason: None,
            error: None,
            detail: None,
        });
    }
}

/// Runs one side from its start to its end: when it fails before the game (`Err`), why is
/// recorded in `dir` once (the one wrapper of every entry point: host, join, direct).
pub(crate) async fn recording_failed_start(
    dir: &SessionRecorder,
    side: impl std::future::Future<Output = Result<SessionEnd, SessionError>>,
) -> Result<SessionEnd, SessionError> {
    side.await
        .inspect_err(|error| record_failed_start(dir, error))
}

/// Records why this side never got to play (the invitation, the protocol, the connection or
/// the handshake): one `start_failed` or `handshake_failed` event and session.json `failed`,
/// unless an end is recorded already (an abort got there first).
fn record_failed_start(dir: &SessionRecorder, error: &SessionError) {
    if dir.read().ended_at.is_some() {
        return;
    }
    let text = error.to_string();
    dir.events().emit(if error.is_handshake() {
        Event::HandshakeFailed {
            error: text.clone(),
        }
    } else {
        Event::StartFailed {
            error: text.clone(),
        }
    });
    let _ = dir.update(|record| {
        record.status = Some(SessionStatus::Failed);
        record.end_reason = Some(text);
        record.ended_at = Some(iso_now());
    });
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::client::stub::{Answer, Stub};
    use crate::engine::Outcome;
    use crate::identity::Identity;
    use crate::spec::Role;

    /// Reports a completed session won by the host, against a server answering `/status`
    /// with `status_answer` and everything else with the session; returns what it received.
    async fn report_a_win(status_answer: Answer) -> Vec<(String, Value)> {
        let session = json!({"session_id": "s1", "status": "closed", "protocol_id": "p",
            "post_id": "post", "host_public_key": "h", "guest_public_key": "g"});
        let stub = Stub::start(move |path, _| {
            if path.ends_with("/status") {
                status_answer.clone()
            } else {
                (200, None, session.clone())
            }
        })
        .await;
        let client = RestClient::new(&stub.url, Identity::generate()).unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let dir = SessionRecorder::create_in(scratch.path(), Role::Host).unwrap();
        let end = SessionEnd {
            session_dir: dir.root().to_path_buf(),
            session_id: "s1".into(),
            post_id: "post".into(),
            result: Ok(Outcome {
                completed: true,
                winner: Some(crate::spec::Winner::Host),
                reason: None,
                metadata: None,
            }),
        };
        report_to_server(&client, &end, &dir).await;
        stub.seen()
    }

    #[tokio::test]
    async fn the_first_to_report_sends_status_and_winner_in_one_request() {
        let session = json!({"session_id": "s1", "status": "closed", "protocol_id": "p",
            "post_id": "post", "host_public_key": "h", "guest_public_key": "g"});
        let seen = report_a_win((200, None, session)).await;
        assert_eq!(
            seen,
            [(
                "/api/v1/sessions/s1/status".to_string(),
                json!({"status": "closed", "winner": "host"})
            )]
        );
    }

    #[tokio::test]
    async fn the_second_to_report_finds_the_session_ended_and_reports_its_winner_alone() {
        let ended = json!({"error": "session_ended", "message": "the session has already ended"});
        let seen = report_a_win((409, None, ended)).await;
        assert_eq!(
            seen,
            [
                (
                    "/api/v1/sessions/s1/status".to_string(),
                    json!({"status": "closed", "winner": "host"})
                ),
                (
                    "/api/v1/sessions/s1/result".to_string(),
                    json!({"winner": "host"})
                ),
            ]
        );
    }
}

//! The end of a session, told to the server (status, then the winner) and written to
//! session.json. Reporting never changes the outcome: failures become events and warnings.

use serde_json::json;

use super::{SessionDir, SessionEnd, patch};
use crate::api::session::{SessionStatus, Winner};
use crate::client::RestClient;
use crate::engine::iso_now;

/// Reports status (`closed` when completed, else `failed`; the second reporter's 409 is
/// expected) and, for a completed session with a winner, the result.
pub(crate) async fn report_to_server(client: &RestClient, end: &SessionEnd, dir: &SessionDir) {
    if end.session_id.is_empty() {
        return;
    }
    let status = if end.completed() {
        SessionStatus::Closed
    } else {
        SessionStatus::Failed
    };
    if let Err(error) = client.set_session_status(&end.session_id, status).await
        && error.status() != Some(409)
    {
        dir.events().emit(
            "session_close_failed",
            json!({"error": error.to_string()}),
            None,
        );
        eprintln!("warning: {error}");
    }
    let winner = end
        .result
        .as_ref()
        .ok()
        .filter(|o| o.completed)
        .and_then(|o| o.winner.as_deref())
        .and_then(Winner::parse);
    if let Some(winner) = winner
        && let Err(error) = client.report_result(&end.session_id, winner).await
    {
        dir.events().emit(
            "session_result_failed",
            json!({"error": error.to_string()}),
            None,
        );
        eprintln!("warning: {error}");
    }
}

/// Writes the final status into session.json: `closed`, `aborted` (ended without
/// completing) or `crashed` (an error stopped this side). A completed session also gets the
/// closing `session_ended {"completed": true}` the reference's host and join emit after the
/// engine (the engine's own is missing when the last message needed no answer, e.g. the
/// guess-number guest receiving `game_over`), written before the status that marks the end.
pub(crate) fn record_end(end: &SessionEnd, dir: &SessionDir) {
    if end.completed() {
        dir.events()
            .emit("session_ended", json!({"completed": true}), None);
    }
    let (status, completed, reason) = match &end.result {
        Ok(outcome) if outcome.completed => ("closed", true, outcome.reason.clone()),
        Ok(outcome) => ("aborted", false, outcome.reason.clone()),
        Err(error) => ("crashed", false, Some(error.clone())),
    };
    let winner = end.result.as_ref().ok().and_then(|o| o.winner.clone());
    let _ = dir.update(patch(json!({
        "status": status,
        "completed": completed,
        "winner": winner,
        "ended_at": iso_now(),
        "end_reason": reason,
    })));
}

/// Records why this side never got to play (the invitation, the protocol, the connection or
/// the handshake): `event {"error"}` and session.json `failed`, unless an end is recorded
/// already.
pub(crate) fn record_failed_start(dir: &SessionDir, event: &str, error: &str) {
    if dir.read().contains_key("ended_at") {
        return;
    }
    dir.events().emit(event, json!({"error": error}), None);
    let _ = dir.update(patch(
        json!({"status": "failed", "end_reason": error, "ended_at": iso_now()}),
    ));
}

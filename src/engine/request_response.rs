//! request_response: after join/ready, exactly one guest request and one host response;
//! the session then ends whatever the hooks' flags say.

use serde_json::json;

use super::session::Session;
use super::{EngineError, Outcome};
use crate::spec::Role;

pub(crate) fn run(session: &mut Session) -> Result<Outcome, EngineError> {
    match session.role() {
        Role::Host => host(session),
        Role::Guest => guest(session),
    }
}

fn host(session: &mut Session) -> Result<Outcome, EngineError> {
    let outbound = session.outbound();
    session.host_handshake()?;
    let request = session.recv()?;
    let result = session.hooks.host_handle(&request)?;
    let Some(response) = result.response else {
        session.emit(
            "session_ended",
            json!({"completed": false, "reason": "abort"}),
        );
        session.phase("aborted", "Host did not return a response", json!({}))?;
        return Ok(Outcome::ended(false, Some("abort")));
    };
    session.send_as("proto_host_handle", &response, outbound)?;
    session.finish(
        true,
        "request_response_complete",
        "game_over",
        "Request-response completed",
    )?;
    Ok(Outcome::ended(true, None).with_winner(&[Some(&response)]))
}

fn guest(session: &mut Session) -> Result<Outcome, EngineError> {
    let outbound = session.outbound();
    session.guest_handshake()?;
    let request = session
        .hooks
        .guest_first_action()?
        .filter(|r| r.as_object().is_none_or(|m| !m.is_empty()));
    let Some(request) = request.filter(|r| !r.is_null()) else {
        session.emit(
            "session_ended",
            json!({"completed": false, "reason": "abort"}),
        );
        session.phase("aborted", "Guest did not send a request", json!({}))?;
        return Ok(Outcome::ended(false, Some("abort")));
    };
    session.send_as("proto_guest_first_action", &request, outbound)?;
    let response = session.recv()?;
    session.hooks.guest_handle(&response)?;
    session.finish(
        true,
        "request_response_complete",
        "game_over",
        "Request-response completed",
    )?;
    Ok(Outcome::ended(true, None).with_winner(&[Some(&response)]))
}

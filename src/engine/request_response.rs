//! request_response: after join/ready, exactly one guest request and one host response;
//! the session then ends whatever the hooks' flags say.

use serde_json::{Value, json};

use super::session::Session;
use super::{EngineError, Outcome};
use crate::hooks::is_message;
use crate::records::Event;
use crate::spec::Role;

pub(crate) fn run(session: &mut Session) -> Result<Outcome, EngineError> {
    match session.role() {
        Role::Host => host(session),
        Role::Guest => guest(session),
    }
}

/// The one exchange happened: the session ends whatever the hooks' flags said.
fn complete(session: &mut Session, response: &Value) -> Result<Outcome, EngineError> {
    session.finish(
        true,
        "request_response_complete",
        "game_over",
        "Request-response completed",
    )?;
    Ok(Outcome::ended(true, None).with_winner(&[Some(response)]))
}

/// A side whose hook produced nothing ends the exchange as aborted.
fn abort(session: &mut Session, summary: &str) -> Result<Outcome, EngineError> {
    session.emit(Event::ended(false, "abort"));
    session.phase("aborted", summary, json!({}))?;
    Ok(Outcome::ended(false, Some("abort")))
}

fn host(session: &mut Session) -> Result<Outcome, EngineError> {
    let outbound = session.outbound();
    session.host_handshake()?;
    let request = session.recv()?;
    let result = session.hooks.host_handle(&request)?;
    let Some(response) = result.response else {
        return abort(session, "Host did not return a response");
    };
    session.send_as("proto_host_handle", &response, outbound)?;
    complete(session, &response)
}

fn guest(session: &mut Session) -> Result<Outcome, EngineError> {
    let outbound = session.outbound();
    session.guest_handshake()?;
    let Some(request) = session.hooks.guest_first_action()?.filter(is_message) else {
        return abort(session, "Guest did not send a request");
    };
    session.send_as("proto_guest_first_action", &request, outbound)?;
    let response = session.recv()?;
    session.hooks.guest_handle(&response)?;
    complete(session, &response)
}

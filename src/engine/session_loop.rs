//! session_loop: ping-pong. The guest joins, the host answers ready, then each side answers
//! the other's message through its hook until a hook ends the session.

use serde_json::{Value, json};

use super::session::Session;
use super::{EngineError, Outcome, end_reason};
use crate::hooks::{HookResult, is_message};
use crate::spec::Role;

pub(crate) fn run(session: &mut Session) -> Result<Outcome, EngineError> {
    match session.role() {
        Role::Host => host(session),
        Role::Guest => guest(session),
    }
}

fn host(session: &mut Session) -> Result<Outcome, EngineError> {
    let ready = session.host_handshake()?;
    if ready.ends() {
        session.finish(
            true,
            end_reason(&ready),
            phase_of(&ready),
            "Session ended during handshake",
        )?;
        return Ok(Outcome::ended(ready.completed, None).with_winner(&[ready.message()]));
    }
    loop {
        let message = session.recv()?;
        let result = session.hooks.host_handle(&message)?;
        if let Some(outcome) = respond(session, "proto_host_handle", &result, &message)? {
            return Ok(outcome);
        }
    }
}

fn guest(session: &mut Session) -> Result<Outcome, EngineError> {
    let outbound = session.outbound();
    session.guest_handshake()?;
    let first = session.hooks.guest_first_action()?;
    let Some(first) = first.filter(is_message) else {
        session.phase("game_over", "Guest ended after handshake", json!({}))?;
        return Ok(Outcome::ended(false, None));
    };
    session.send_as("proto_guest_first_action", &first, outbound)?;
    loop {
        let message = session.recv()?;
        let result = session.hooks.guest_handle(&message)?;
        if let Some(outcome) = respond(session, "proto_guest_handle", &result, &message)? {
            return Ok(outcome);
        }
    }
}

/// Sends a hook's answer; `Some(outcome)` when the session is over.
fn respond(
    session: &mut Session,
    hook: &str,
    result: &HookResult,
    received: &Value,
) -> Result<Option<Outcome>, EngineError> {
    // The host's outcome comes from its own answer; the guest also looks at what it received.
    let received = (session.role() == Role::Guest).then_some(received);
    let Some(response) = result.message().cloned() else {
        session.phase("game_over", "Session completed", json!({}))?;
        return Ok(Some(
            Outcome::ended(result.completed, None).with_winner(&[received]),
        ));
    };
    if result.ends() {
        session.send_as(hook, &response, session.outbound())?;
        session.finish(true, end_reason(result), phase_of(result), "Session ended")?;
        let outcome = Outcome::ended(result.completed, result.abort.then_some("abort"));
        return Ok(Some(outcome.with_winner(&[Some(&response), received])));
    }
    session.pace();
    session.send_as(hook, &response, session.outbound())?;
    Ok(None)
}

fn phase_of(result: &HookResult) -> &'static str {
    if result.abort { "aborted" } else { "game_over" }
}

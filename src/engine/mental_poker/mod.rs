//! mental_poker: two strangers play cards with no dealer they must trust. Both encrypt and
//! shuffle the deck, each takes its cards by oblivious transfer (the other side never learns
//! which), plays show both keys of a card, and after the game both open everything and audit
//! the whole game before signing its transcript.
//!
//! Wire-compatible with the reference client, and fair where it is not: the host shuffles
//! its layer too, every value from the peer is checked for its exact size and range, plays
//! are bound to the keys opened in the audit, transfers are refused when they cannot be
//! lawful, and every abort is a typed [`Reason`]. Secrets (layer keys, RSA keys, tokens,
//! blinding factors) never leave memory. See `docs/mental-poker.md`.

mod abort;
mod audit;
mod codec;
mod deck;
mod finish;
mod ledger;
mod ot;
mod own;
mod player;
mod rng;
mod rsa;
mod setup;
mod table;
mod threads;
mod transcript;
mod turns;
mod wire;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod vectors;

use serde_json::json;

pub(crate) use abort::{Abort, Reason};

use super::session::Session;
use super::{EngineError, Outcome};
use crate::records::Event;
use player::{Player, Stop};

/// Plays one side to the end: setup, deal, turns, then opening, audit and receipts.
pub(crate) fn run(session: &mut Session) -> Result<Outcome, EngineError> {
    let played = setup::run(session).and_then(|(table, own)| {
        let mut player = Player::new(session, table, own);
        let winner = turns::run(&mut player)?;
        finish::run(&mut player, winner)
    });
    match played {
        Ok(outcome) => Ok(outcome),
        Err(Stop::Engine(error)) => Err(*error),
        Err(Stop::Abort(abort)) => stop(session, abort),
    }
}

/// Ends the game early: the event, an `error` frame to the peer where the spec declares one
/// for this reason (or the reference's coarser reason), and the end of the session.
fn stop(session: &mut Session, abort: Abort) -> Result<Outcome, EngineError> {
    let reason = abort.reason.as_str();
    session.emit(Event::MentalPokerAborted {
        reason: reason.into(),
        detail: abort.detail.clone(),
    });
    let peer_reason = if abort.reason == Reason::PeerError {
        Some(abort.detail.clone())
    } else {
        tell_peer(session, abort.reason);
        None
    };
    let outcome_reason = match &peer_reason {
        Some(theirs) => format!("peer_error: {theirs}"),
        None => reason.to_string(),
    };
    session.emit(Event::SessionEnded {
        completed: Some(false),
        reason: Some(reason.into()),
        peer_reason,
        error: None,
        detail: Some(abort.detail.clone()),
    });
    session.phase(
        "aborted",
        &format!("Mental poker stopped: {abort}"),
        json!({"reason": reason}),
    )?;
    Ok(Outcome::ended(false, Some(&outcome_reason)))
}

/// `{"action":"error","reason"}` with our reason if the spec takes it, else with the
/// reference's coarser one, else nothing (the peer then sees us leave). Best effort.
fn tell_peer(session: &mut Session, reason: Reason) {
    let outbound = session.outbound();
    let candidates = [Some(reason.as_str()), reason.reference_reason()];
    let frame = candidates.into_iter().flatten().find_map(|reason| {
        let frame = json!({"action": "error", "reason": reason});
        crate::spec::validate_message(session.spec.value(), &frame, Some(outbound), None)
            .is_ok()
            .then_some(frame)
    });
    if let Some(frame) = frame {
        let _ = session.send_as("the engine (error)", &frame, outbound);
    }
}

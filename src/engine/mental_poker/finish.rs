//! After the last turn: both sides open their tables and keys, then their witnesses, each
//! audits the whole game, and only a side whose audit passed signs the transcript root.
//! A receipt is accepted when it covers our root, is signed by the key the peer proved in
//! the handshake, and says `passed` (the reference ignores that field).

use serde_json::json;

use super::abort::{Abort, Reason};
use super::audit::audit;
use super::ot::Layer;
use super::player::{Player, Stop};
use super::wire::{self, Opening, Witness, parse_witnesses, sorted, witness_frame};
use crate::engine::{EngineError, Outcome};
use crate::identity::verify_hex;
use crate::records::Event;
use crate::spec::Role;


pub(crate) fn run(player: &mut Player, winner: Option<String>) -> Result<Outcome, Stop> {
    let role = player.role;
    let mine = player.own.opening();
    #[cfg(test)]
    let mine = super::tests::cheats::opening(mine, player.table.key_of(role));
    player.send(&mine.frame())?;
    let frame = receive_final(player, "mp_opening")?;
    let theirs = Opening::parse(&frame, Layer::of(role.peer()))?;
    let (host, guest) = by_role(role, &mine, &theirs);
    player.table.record_openings(host, guest);

    let my_witnesses = sorted(player.own.witnesses.clone());
    #[cfg(not(test))]
    let sent = witness_frame(&my_witnesses);
    #[cfg(test)]
    let sent = witness_frame(&super::tests::cheats::witnesses(
        my_witnesses.clone(),
        player.table.key_of(role.peer()),
    ));
    player.send(&sent)?;
    let frame = receive_final(player, "mp_witness")?;
    let their_witnesses = sorted(parse_witnesses(&frame, role.peer())?);
    let (host_w, guest_w) = by_role(role, &my_witnesses, &their_witnesses);
    player.table.record_witnesses(host_w, guest_w);

    player.session.emit(Event::AuditStarted {});
    let universe = player.hooks()?.mp_deck_universe()?;
    let witnesses: Vec<Witness> = my_witnesses.into_iter().chain(their_witnesses).collect();
    let own = Some(Layer::of(role));
    if let Err(failure) = audit(&player.table, host, guest, &witnesses, &universe, own) {
        player.session.emit(Event::AuditFailed {
            reason: failure.reason.as_str().into(),
            evidence: failure.evidence.clone(),
        });
        return Err(Abort::new(failure.reason, failure.evidence.to_string()).into());
    }
    player.session.emit(Event::AuditPassed {});
    let receipt = exchange_receipts(player)?;
    player.session.emit(Event::GameOver {
        outcome: winner.clone(),
        audit_status: "passed".into(),
    });
    let (ended, reason, summary) = match receipt {
        Receipt::Exchanged => (
            "completed",
            None,
            "Mental poker session completed".to_string(),
        ),
        Receipt::Missing(why) => (
            why,
            Some(format!("{why}: the peer never sent its terminal receipt")),
            "Mental poker session completed; the peer's receipt never came".to_string(),
        ),
    };
    player.session.finish(true, ended, "game_over", &summary)?;
    let mut outcome = Outcome::ended(true, reason.as_deref());
    outcome.winner = winner.as_deref().and_then(crate::spec::Winner::parse);
    Ok(outcome)
}

/// (host's, guest's) of a pair of this side's and the peer's.
fn by_role<'a, T: ?Sized>(role: Role, mine: &'a T, theirs: &'a T) -> (&'a T, &'a T) {
    match role {
        Role::Host => (mine, theirs),
        Role::Guest => (theirs, mine),
    }
}

/// A closing frame; anything but it (or an `error`) means the peer refuses the audit.
fn receive_final(player: &mut Player, action: &str) -> Result<serde_json::Value, Stop> {
    player.receive(&[action]).map_err(|stop| match stop {
        Stop::Abort(abort) if abort.reason == Reason::UnexpectedMessage => {
            Abort::new(Reason::AuditRefused, abort.detail).into()
        }
        other => other,
    })
}

/// How the receipts went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Receipt {
    /// Both signed; the peer's verified.
    Exchanged,
    /// Ours went out; the peer's never came: it stayed silent past our deadline
    /// (`peer_timeout`) or left (`peer_disconnected`).
    Missing(&'static str),
}

/// Signs our root, sends it, and checks the peer's receipt; writes both to the state dir.
fn exchange_receipts(player: &mut Player) -> Result<Receipt, Stop> {
    let root = player.table.root();
    let hash = hex::encode(root);
    let binding = &player.session.config.binding;
    let mine = wire::Receipt {
        transcript_hash: hash.clone(),
        signature: binding.identity.sign_hex(&root),
        audit_status: "passed".into(),
        public_key: binding.identity.public_key().to_string(),
    };
    let peer_key = binding.peer_public_key.clone();
    #[cfg(test)]
    let mine = super::tests::cheats::receipt(mine, &root);
    player.send(&mine.frame())?;
    player.session.emit(Event::MpTerminalReceiptSigned {
        transcript_hash: hash.clone(),
    });
    let frame = match receive_final(player, "mp_terminal_receipt") {
        Ok(frame) => frame,
        Err(Stop::Engine(error)) => {
            let why = match *error {
                EngineError::PeerTimeout(_) => "peer_timeout",
                EngineError::Channel(crate::transport::ChannelError::Closed(_)) => {
                    "peer_disconnected"
                }
                other => return Err(other.into()),
            };
            player.session.emit(Event::MpTerminalReceiptMissing {
                transcript_hash: hash,
                reason: why.into(),
            });
            return Ok(Receipt::Missing(why));
        }
        Err(stop) => return Err(stop),
    };
    let theirs = wire::Receipt::parse(&frame);
    let refused = |reason: Reason, detail: &str| -> Result<Receipt, Stop> {
        Err(Abort::new(reason, detail.to_string()).into())
    };
    if theirs.transcript_hash != hash {
        return refused(
            Reason::ReceiptHashMismatch,
            "the peer signed another transcript",
        );
    }
    if peer_key.is_some_and(|key| key != theirs.public_key) {
        return refused(
            Reason::ReceiptKeyMismatch,
            "the receipt is signed by a key other than the handshake's",
        );
    }
    if theirs.audit_status != "passed" {
        return refused(
            Reason::ReceiptNotPassed,
            &format!("the peer's audit status is {:?}", theirs.audit_status),
        );
    }
    if verify_hex(&theirs.public_key, &root, &theirs.signature).is_err() {
        return refused(
            Reason::ReceiptSignatureInvalid,
            "the receipt's signature does not verify",
        );
    }
    player.session.emit(Event::MpTerminalReceiptVerified {
        transcript_hash: hash.clone(),
        peer_signature_ok: true,
    });
    let file = json!({
        "transcript_hash": hash,
        "signature": mine.signature,
        "peer_signature": theirs.signature,
        "audit_status": "passed",
    });
    let path = player.session.config.state_dir.receipt_file();
    crate::layout::write_atomic(&path, file.to_string().as_bytes()).map_err(|error| {
        EngineError::Protocol(format!("cannot write {}: {error}", path.display()))
    })?;
    Ok(Receipt::Exchanged)
}

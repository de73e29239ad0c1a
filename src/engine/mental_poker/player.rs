//! One side during the game: the session it talks through, the public table, its own
//! secrets, and the steps every phase shares — receiving the frame that is due, both halves
//! of an oblivious transfer, and showing the table to the hooks.

use serde_json::Value;

use super::abort::{Abort, Reason};
use super::deck::{open_blob, open_card};
use super::ot::{OtId, Request};
use super::own::{Held, Own};
use super::table::Table;
use super::wire::{self, Witness};
use crate::engine::EngineError;
use crate::engine::session::Session;
use crate::hooks::{HookError, MentalPokerHooks, TableView};
use crate::records::Event;
use crate::spec::Role;

/// Why a phase stops: the peer (or its material) failed a check, or this side cannot go on.
pub(crate) enum Stop {
    Abort(Abort),
    Engine(Box<EngineError>),
}

impl From<Abort> for Stop {
    fn from(abort: Abort) -> Stop {
        Stop::Abort(abort)
    }
}

impl From<EngineError> for Stop {
    fn from(error: EngineError) -> Stop {
        Stop::Engine(Box::new(error))
    }
}

impl From<HookError> for Stop {
    fn from(error: HookError) -> Stop {
        Stop::from(EngineError::Hook(error))
    }
}

/// The mental_poker hooks of this side (hooks without them cannot play this mode).
pub(crate) fn hooks<'a>(session: &'a mut Session) -> Result<&'a mut dyn MentalPokerHooks, Stop> {
    session.hooks.mental_poker().ok_or_else(|| {
        Stop::from(EngineError::Protocol(
            "these hooks do not implement the mental_poker hooks".into(),
        ))
    })
}

/// Sends a frame the engine made (validated against the spec like any other).
pub(crate) fn send(session: &mut Session, frame: &Value) -> Result<(), Stop> {
    let action = frame["action"].as_str().unwrap_or("frame");
    session.send_as(&format!("the engine ({action})"), frame, session.outbound())?;
    Ok(())
}

/// The next frame, which must be one of `actions`. A frame that fails the spec, an `error`
/// from the peer, or any other action ends the game with its reason.
pub(crate) fn receive(session: &mut Session, actions: &[&str]) -> Result<Value, Stop> {
    let frame = match session.recv() {
        Ok(frame) => frame,
        Err(EngineError::InvalidInbound {
            direction,
            error,
            frame,
        }) => {
            session.emit(Event::message_rejected(
                direction.as_str(),
                &error.0,
                &frame,
            ));
            return Err(Abort::new(Reason::InvalidFrame, error.0).into());
        }
        Err(other) => return Err(other.into()),
    };
    let action = frame["action"].as_str().unwrap_or_default();
    if actions.contains(&action) {
        return Ok(frame);
    }
    if action == "error" {
        let theirs = frame["reason"].as_str().unwrap_or("unspecified");
        return Err(Abort::new(Reason::PeerError, theirs).into());
    }
    let detail = format!("{action} where {} was due", actions.join(" or "));
    Err(Abort::new(Reason::UnexpectedMessage, detail).into())
}

pub(crate) struct Player<'s, 'a> {
    pub session: &'s mut Session<'a>,
    pub role: Role,
    pub table: Table,
    pub own: Own,
    /// Both sides passed in a row.
    pub stalled: bool,
}

impl<'s, 'a> Player<'s, 'a> {
    pub fn new(session: &'s mut Session<'a>, table: Table, own: Own) -> Player<'s, 'a> {
        Player {
            role: session.role(),
            session,
            table,
            own,
            stalled: false,
        }
    }

    pub fn hooks(&mut self) -> Result<&mut dyn MentalPokerHooks, Stop> {
        hooks(self.session)
    }

    pub fn send(&mut self, frame: &Value) -> Result<(), Stop> {
        send(self.session, frame)
    }

    pub fn receive(&mut self, actions: &[&str]) -> Result<Value, Stop> {
        receive(self.session, actions)
    }

    /// Takes the next stock card by oblivious transfer from the peer's table, and opens it.
    /// Returns the transfer and the card.
    pub fn take(&mut self) -> Result<(OtId, usize), Stop> {
        let card = self.table.ledger.next_stock().ok_or_else(|| {
            EngineError::Protocol("a card was to be taken from an empty stock".into())
        })?;
        let wanted = card;
        #[cfg(test)]
        let wanted = super::tests::cheats::peek(wanted);
        let label = self.own.label_for(wanted);
        let key = self.table.key_of(self.role.peer()).clone();
        let request = Request::new(&self.table.binding, &key, label);
        let id = self.table.next_ot_id(self.role);
        self.send(&wire::ot_request(id, &request.z))?;
        self.table
            .open_ot(self.role, &id.to_string(), request.z, card)?;
        let answer = self.receive(&["mp_ot_response"])?;
        let (echo, y) = wire::parse_ot(&answer, "y")?;
        self.table.close_ot(&echo, y)?;
        let token = request.token(&key, &y);
        let context = self.table.binding.context(label);
        let key = self
            .table
            .sealed(label)
            .open(&token, &context)
            .ok_or_else(|| {
                Abort::new(
                    Reason::OtOpenFailed,
                    format!("the answer to {id} does not open {label}"),
                )
            })?;
        let unopened = || Abort::new(Reason::CardOpenFailed, format!("card {card} does not open"));
        let blob_b = &self.table.outer.blobs[wanted];
        let held = match self.role {
            Role::Guest => {
                let k_outer = self.own.layer_keys[wanted].clone();
                let blob_a = open_blob(&k_outer, blob_b).ok_or_else(unopened)?;
                let face = open_card(&key, &blob_a).ok_or_else(unopened)?;
                Held {
                    card: face,
                    k_inner: key,
                    k_outer,
                }
            }
            Role::Host => {
                let blob_a = open_blob(&key, blob_b).ok_or_else(unopened)?;
                let id_a = self.table.id_a_of(&blob_a).ok_or_else(|| {
                    Abort::new(
                        Reason::UnknownBlob,
                        format!("card {card} does not wrap a blob of our setup"),
                    )
                })?;
                let k_inner = self.own.layer_keys[id_a].clone();
                let face = open_card(&k_inner, &blob_a).ok_or_else(unopened)?;
                Held {
                    card: face,
                    k_inner,
                    k_outer: key,
                }
            }
        };
        #[cfg(test)]
        let label = super::tests::cheats::witness_label(label, self.own.label_for(card));
        self.own.witnesses.push(Witness {
            ot_id: id,
            label,
            r: request.r,
        });
        self.own.hand.insert(card, held);
        Ok((id, card))
    }

    /// Answers the peer's transfer request for the next stock card — only once its id is
    /// the one due, the stock has that card and `z` is in range — without learning which
    /// label it asked for.
    pub fn answer(&mut self, request: &Value) -> Result<(OtId, usize), Stop> {
        let (id, z) = wire::parse_ot(request, "z")?;
        let card = self.table.ledger.next_stock().ok_or_else(|| {
            Abort::new(
                Reason::EmptyStock,
                format!("transfer {id} asked for a card of an empty stock"),
            )
        })?;
        let ot_id = self.table.open_ot(self.role.peer(), &id, z, card)?;
        let y = self
            .own
            .key
            .private_op(&z)
            .map_err(|error| Abort::new(Reason::RsaFault, error.to_string()))?;
        self.send(&wire::ot_response(&id, &y))?;
        self.table.close_ot(&id, y)?;
        Ok((ot_id, card))
    }

    /// Installs the current table view into the hooks' state.
    pub fn show_table(&mut self) -> Result<(), Stop> {
        let ledger = &self.table.ledger;
        let names = |ids: Vec<usize>| ids.into_iter().map(|id| id.to_string()).collect();
        let view = TableView {
            role: self.role,
            hand: self
                .own
                .hand
                .iter()
                .map(|(id, held)| (id.to_string(), held.card))
                .collect(),
            host_hand: names(ledger.at(super::ledger::Place::Hand(Role::Host))),
            guest_hand: names(ledger.at(super::ledger::Place::Hand(Role::Guest))),
            stock: names(ledger.at(super::ledger::Place::Stock)),
            played: names(ledger.played()),
            stalled: self.stalled,
        };
        self.hooks()?.mp_show_table(&view)?;
        Ok(())
    }
}

//! The deal and the turns. The host acts on even turns, the guest on odd ones; an action is a
//! play, a draw (one transfer, which takes the whole turn) or a pass. The other side checks
//! a play before its hooks see it: the ledger (the card is in the player's hand, not played
//! before), the key of its own layer (it must be the key this side made), the blob opening
//! under both keys, and the face. The game ends when the hooks name a winner, after two
//! passes in a row, or when both hands are empty.

use serde_json::{Value, json};

use super::abort::{Abort, Reason};
use super::deck::{open_blob, open_card};
use super::ot::canonical_index;
use super::player::{Player, Stop};
use super::wire::Play;
use crate::engine::EngineError;
use crate::hooks::LocalAction;
use crate::records::Event;
use crate::spec::Role;

/// Deals, then plays turns until the game is over; the hooks' winner comes out.
pub(crate) fn run(player: &mut Player) -> Result<Option<String>, Stop> {
    let plan = player.hooks()?.mp_initial_deal()?;
    for taker in player.table.deal_plan(plan)? {
        if taker == player.role {
            player.take()?;
        } else {
            let request = player.receive(&["mp_ot_request"])?;
            player.answer(&request)?;
        }
    }
    let mut action_seq = 0;
    let mut passes = 0;
    for turn in 0u64.. {
        let actor = if turn % 2 == 0 {
            Role::Host
        } else {
            Role::Guest
        };
        let passed = if actor == player.role {
            own_turn(player, &mut action_seq)?
        } else {
            peer_turn(player)?
        };
        passes = if passed { passes + 1 } else { 0 };
        player.stalled |= passes >= 2;
        player.show_table()?;
        let winner = player.hooks()?.mp_check_winner()?;
        let ledger = &player.table.ledger;
        let hands_empty = ledger.hand_size(Role::Host) == 0 && ledger.hand_size(Role::Guest) == 0;
        if winner.is_some() || player.stalled || hands_empty {
            return Ok(winner);
        }
    }
    unreachable!("turns are unbounded")
}

/// This side's turn; true when it passed.
fn own_turn(player: &mut Player, action_seq: &mut u64) -> Result<bool, Stop> {
    player.show_table()?;
    let action = player.hooks()?.mp_choose_action(*action_seq)?;
    *action_seq += 1;
    let role = player.role;
    match action {
        LocalAction::Play { id_b, call_suit } => {
            let held = canonical_index(&id_b)
                .and_then(|id| player.own.hand.get(&id).map(|held| (id, held)));
            let Some((id, held)) = held else {
                let error = format!(
                    "proto_mp_choose_action played {id_b:?}, which is not in this side's hand"
                );
                return Err(EngineError::Protocol(error).into());
            };
            let play = Play {
                id_b: id,
                card: held.card,
                call_suit,
                k_inner: held.k_inner.clone(),
                k_outer: held.k_outer.clone(),
            };
            player.send(&play.frame())?;
            player.table.record_play(role, play);
            player.own.hand.remove(&id);
            player.session.emit(Event::PlayVerified { who: role, id_b });
            Ok(false)
        }
        LocalAction::Draw => {
            if player.table.ledger.next_stock().is_none() {
                #[cfg(test)]
                if super::tests::cheats::active(super::tests::cheats::Cheat::IgnoreEmptyStock) {
                    return super::tests::cheats::draw_from_empty(player).map(|()| false);
                }
                let error = "proto_mp_choose_action chose to draw from an empty stock";
                return Err(EngineError::Protocol(error.into()).into());
            }
            let (ot, card) = player.take()?;
            player.table.record_draw(ot);
            let id_b = card.to_string();
            player
                .session
                .emit(Event::DrawCompleted { who: role, id_b });
            Ok(false)
        }
        LocalAction::Pass => {
            player.send(&json!({"action": "mp_pass"}))?;
            player.table.record_pass(role);
            player.session.emit(Event::PassExchanged { who: role });
            Ok(true)
        }
    }
}

/// The peer's turn; true when it passed.
fn peer_turn(player: &mut Player) -> Result<bool, Stop> {
    let peer = player.role.peer();
    let frame = player.receive(&["mp_play", "mp_ot_request", "mp_pass"])?;
    match frame["action"].as_str() {
        Some("mp_play") => {
            let play = verify_play(player, &frame).inspect_err(|stop| {
                if let Stop::Abort(abort) = stop {
                    let reason = match abort.reason {
                        Reason::RuleRejected => abort.detail.clone(),
                        other => other.as_str().to_string(),
                    };
                    player
                        .session
                        .emit(Event::PlayRejected { who: peer, reason });
                }
            })?;
            let id_b = play.id_b.to_string();
            player.table.record_play(peer, play);
            player.session.emit(Event::PlayVerified { who: peer, id_b });
            Ok(false)
        }
        Some("mp_ot_request") => {
            let (ot, card) = player.answer(&frame)?;
            player.table.record_draw(ot);
            let id_b = card.to_string();
            player
                .session
                .emit(Event::DrawCompleted { who: peer, id_b });
            Ok(false)
        }
        _ => {
            player.table.record_pass(peer);
            player.session.emit(Event::PassExchanged { who: peer });
            Ok(true)
        }
    }
}

/// The peer's play, checked by the ledger, the keys, the face and then the game's rules.
fn verify_play(player: &mut Player, frame: &Value) -> Result<Play, Stop> {
    let peer = player.role.peer();
    let play = Play::parse(frame, player.table.deck_size())?;
    player.table.check_play(peer, &play)?;
    check_keys(player, &play)?;
    player.show_table()?;
    let verdict = player.hooks()?.mp_validate_play(peer, frame)?;
    if !verdict.ok {
        let reason = verdict
            .reason
            .unwrap_or_else(|| "refused by the rules".into());
        return Err(Abort::new(Reason::RuleRejected, reason).into());
    }
    Ok(play)
}

/// The play's keys open its card to the declared face, and the key of our own layer is the
/// one we made (so the audit can hold the player to the keys it opens later).
fn check_keys(player: &Player, play: &Play) -> Result<(), Abort> {
    let (table, own) = (&player.table, &player.own);
    let card = play.id_b;
    let blob_b = &table.outer.blobs[card];
    let unopened = || {
        Abort::new(
            Reason::InvalidKeysOrBlob,
            format!("card {card} does not open under the keys played"),
        )
    };
    let not_ours = || {
        Abort::new(
            Reason::OwnLayerKeyMismatch,
            format!("card {card} was played with a key of our layer we never made"),
        )
    };
    let blob_a = match player.role {
        Role::Guest => {
            if play.k_outer != own.layer_keys[card] {
                return Err(not_ours());
            }
            open_blob(&play.k_outer, blob_b).ok_or_else(unopened)?
        }
        Role::Host => {
            let blob_a = open_blob(&play.k_outer, blob_b).ok_or_else(unopened)?;
            let id_a = table.id_a_of(&blob_a).ok_or_else(unopened)?;
            if play.k_inner != own.layer_keys[id_a] {
                return Err(not_ours());
            }
            blob_a
        }
    };
    let face = open_card(&play.k_inner, &blob_a).ok_or_else(unopened)?;
    if face != play.card {
        let detail = format!(
            "card {card} is ({}, {}), not the declared ({}, {})",
            face.rank, face.suit, play.card.rank, play.card.suit
        );
        return Err(Abort::new(Reason::CardFaceMismatch, detail));
    }
    Ok(())
}

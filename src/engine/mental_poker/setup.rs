//! The setup: join and ready, then the host's layer (`mp_setup_a`) and the guest's
//! (`mp_setup_b`). Each side shuffles before it seals — the host its deck, the guest the
//! host's blobs — draws a fresh key per card, and publishes its OT key and sealed table.
//! (The reference host does not shuffle, which hands the guest every face; see the docs.)
//!
//! The RSA key and the sealed table need no frame from the peer, so both are built in the
//! background from the start: the host's from its deck, the guest's from the deck size its
//! spec fixes (when it fixes one) — so the two sides build at once.

use serde_json::{Value, json};

use super::deck::{BlobA, BlobB, LayerKey, seal_blob, seal_card};
use super::ot::{Layer, OtBinding, SenderTable, build_table};
use super::own::Own;
use super::player::{Stop, hooks, receive, send};
use super::rsa::{OtPrivateKey, PrivateOpError};
use super::table::Table;
use super::threads::Background;
use super::wire::Setup;
use super::{Abort, Reason, rng};
use crate::engine::session::Session;
use crate::records::Event;
use crate::spec::Role;

/// A side's layer keys, RSA key and sealed table.
struct Sealed {
    keys: Vec<LayerKey>,
    key: OtPrivateKey,
    table: SenderTable,
}

type Sealing = Background<Result<Sealed, PrivateOpError>>;

/// The guest's layer before the host's setup arrives: under way when the spec fixes the deck
/// size, else only its RSA key.
enum Early {
    Sealing(Sealing),
    Key(Background<OtPrivateKey>),
}

/// This side's RSA key, generated in the background.
#[cfg(test)]
fn spy_layer_keys(keys: &[super::deck::LayerKey]) {
    let keys = keys.iter().map(super::deck::LayerKey::to_hex).collect();
    super::tests::cheats::spy(|spy| spy.layer_keys = Some(keys));
}

fn generate_key() -> Background<OtPrivateKey> {
    #[cfg(test)]
    if super::tests::cheats::active(super::tests::cheats::Cheat::FixedKey) {
        return Background::start(super::rsa::tests::vector_key);
    }
    Background::start(OtPrivateKey::generate)
}

/// Seals `size` fresh layer keys under the key `key` brings, in the background.
fn seal_layer(
    key: impl FnOnce() -> OtPrivateKey + Send + 'static,
    binding: &OtBinding,
    layer: Layer,
    size: usize,
) -> Sealing {
    let binding = binding.clone();
    Background::start(move || {
        let keys: Vec<LayerKey> = (0..size).map(|_| LayerKey::random()).collect();
        let key = key();
        let table = build_table(&key, &binding, layer, &keys)?;
        Ok(Sealed { keys, key, table })
    })
}

/// What the transfers are bound to: the spec's `protocol_id` field, else its name (what the
/// reference uses), and the session id (`mp-session` without one).
fn binding(session: &Session) -> OtBinding {
    let spec = session.spec.value();
    let text = |key: &str| {
        spec.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let session_id = &session.config.binding.session_id;
    OtBinding {
        protocol_id: text("protocol_id")
            .or_else(|| text("name"))
            .unwrap_or("mental-poker")
            .to_string(),
        session_id: if session_id.is_empty() {
            "mp-session".into()
        } else {
            session_id.clone()
        },
    }
}

/// The deck size the spec fixes for the guest's setup (`blobs` with equal min and max items).
fn fixed_size(session: &Session) -> Option<usize> {
    let messages = session.spec.value().get("messages")?.as_array()?;
    let setup_b = messages.iter().find(|m| m["name"] == "mp_setup_b")?;
    let blobs = &setup_b["fields"]["blobs"];
    let (min, max) = (blobs["min_items"].as_u64()?, blobs["max_items"].as_u64()?);
    (min == max).then(|| usize::try_from(min).ok()).flatten()
}

/// Runs this side's setup; the table and this side's secrets come out.
pub(crate) fn run(session: &mut Session) -> Result<(Table, Own), Stop> {
    let binding = binding(session);
    let (table, own) = match session.role() {
        Role::Host => host(session, binding)?,
        Role::Guest => guest(session, binding)?,
    };
    session.emit(Event::MpSetupCompleted {
        role: session.role(),
        deck_size: table.deck_size(),
    });
    Ok((table, own))
}

fn host(session: &mut Session, binding: OtBinding) -> Result<(Table, Own), Stop> {
    let mut deck = hooks(session)?.mp_deck_universe()?;
    let key = generate_key();
    let sealing = seal_layer(move || key.wait(), &binding, Layer::Inner, deck.len());
    receive(session, &["join"])?;
    send(session, &json!({"action": "ready"}))?;
    if deck.is_empty() {
        return Err(Abort::new(Reason::SetupSizeMismatch, "the deck universe is empty").into());
    }
    shuffle_deck(&mut deck);
    #[cfg(test)]
    super::tests::cheats::spy(|spy| spy.host_deck = Some(deck.clone()));
    let Sealed {
        keys,
        key,
        table: sender,
    } = sealing.wait().map_err(rsa_fault)?;
    #[cfg(test)]
    spy_layer_keys(&keys);
    let blobs: Vec<BlobA> = deck
        .iter()
        .zip(&keys)
        .map(|(card, key)| seal_card(key, *card))
        .collect();
    let entries = sender.entries.clone();
    #[cfg(test)]
    let entries = super::tests::cheats::poisoned(entries);
    let setup_a = Setup {
        key: key.public().clone(),
        blobs,
        sealed: entries,
    };
    send(session, &setup_a.frame())?;
    let size = deck.len();
    let frame = receive(session, &["mp_setup_b"])?;
    let setup_b = Setup::<BlobB>::parse(&frame, Some(size))?;
    let table = Table::new(binding, setup_a, setup_b)?;
    Ok((table, Own::new(Role::Host, key, sender, keys, Vec::new())))
}

fn guest(session: &mut Session, binding: OtBinding) -> Result<(Table, Own), Stop> {
    let key = generate_key();
    let early = match fixed_size(session) {
        Some(size) => Early::Sealing(seal_layer(move || key.wait(), &binding, Layer::Outer, size)),
        None => Early::Key(key),
    };
    send(session, &json!({"action": "join"}))?;
    receive(session, &["ready"])?;
    let frame = receive(session, &["mp_setup_a"])?;
    let setup_a = Setup::<BlobA>::parse(&frame, None)?;
    let size = setup_a.blobs.len();
    let sealed = match early {
        Early::Sealing(sealing) => sealing.wait().map_err(rsa_fault)?,
        Early::Key(key) => seal_layer(move || key.wait(), &binding, Layer::Outer, size)
            .wait()
            .map_err(rsa_fault)?,
    };
    let Sealed {
        keys,
        key,
        table: sender,
    } = if sealed.keys.len() == size {
        sealed
    } else {
        // The host's deck is not the size the spec fixes (its own spec differs): start over.
        let key = sealed.key;
        seal_layer(move || key, &binding, Layer::Outer, size)
            .wait()
            .map_err(rsa_fault)?
    };
    // order[id_b]: which of the host's blobs the guest's card id_b wraps.
    let mut order: Vec<usize> = (0..size).collect();
    rng::shuffle(&mut order);
    #[cfg(test)]
    super::tests::cheats::spy(|spy| spy.guest_order = Some(order.clone()));
    #[cfg(test)]
    spy_layer_keys(&keys);
    let blobs: Vec<BlobB> = order
        .iter()
        .zip(&keys)
        .map(|(&id_a, key)| seal_blob(key, &setup_a.blobs[id_a]))
        .collect();
    let entries = sender.entries.clone();
    #[cfg(test)]
    let entries = super::tests::cheats::poisoned(entries);
    let setup_b = Setup {
        key: key.public().clone(),
        blobs,
        sealed: entries,
    };
    let frame = setup_b.frame();
    let table = Table::new(binding, setup_a, setup_b)?;
    send(session, &frame)?;
    Ok((table, Own::new(Role::Guest, key, sender, keys, order)))
}

fn rsa_fault(error: PrivateOpError) -> Abort {
    Abort::new(Reason::RsaFault, error.to_string())
}

/// The host's secret shuffle of its deck (a test switch can turn it off, to show what the
/// reference's unshuffled layer gives away).
fn shuffle_deck<T>(deck: &mut [T]) {
    #[cfg(test)]
    if super::tests::cheats::active(super::tests::cheats::Cheat::HostSkipsShuffle) {
        return;
    }
    rng::shuffle(deck);
}

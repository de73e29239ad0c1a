//! The setup: join and ready, then the host's layer (`mp_setup_a`) and the guest's
//! (`mp_setup_b`). Each side shuffles before it seals — the host its deck, the guest the
//! host's blobs — draws a fresh key per card, and publishes its OT key and sealed table.
//! (The reference host does not shuffle, which hands the guest every face; see the docs.)

use std::thread::{self, JoinHandle};

use serde_json::{Value, json};

use super::deck::{BlobA, BlobB, LayerKey, seal_blob, seal_card};
use super::ot::{Layer, OtBinding, build_table};
use super::own::Own;
use super::player::{Stop, hooks, receive, send};
use super::rsa::OtPrivateKey;
use super::table::Table;
use super::wire::Setup;
use super::{Abort, Reason, rng};
use crate::engine::session::Session;
use crate::records::Event;
use crate::spec::Role;

/// This side's RSA key, generated on its own thread while the handshake frames go by.
struct KeyGen(JoinHandle<OtPrivateKey>);

impl KeyGen {
    fn start() -> KeyGen {
        #[cfg(test)]
        if super::tests::cheats::active(super::tests::cheats::Cheat::FixedKey) {
            return KeyGen(thread::spawn(super::rsa::tests::vector_key));
        }
        KeyGen(thread::spawn(OtPrivateKey::generate))
    }

    fn wait(self) -> OtPrivateKey {
        self.0.join().expect("RSA key generation does not panic")
    }
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

/// Runs this side's setup; the table and this side's secrets come out.
pub(crate) fn run(session: &mut Session) -> Result<(Table, Own), Stop> {
    let keygen = KeyGen::start();
    let binding = binding(session);
    let (table, own) = match session.role() {
        Role::Host => host(session, binding, keygen)?,
        Role::Guest => guest(session, binding, keygen)?,
    };
    session.emit(Event::MpSetupCompleted {
        role: session.role(),
        deck_size: table.deck_size(),
    });
    Ok((table, own))
}

fn host(session: &mut Session, binding: OtBinding, keygen: KeyGen) -> Result<(Table, Own), Stop> {
    receive(session, &["join"])?;
    send(session, &json!({"action": "ready"}))?;
    let mut deck = hooks(session)?.mp_deck_universe()?;
    if deck.is_empty() {
        return Err(Abort::new(Reason::SetupSizeMismatch, "the deck universe is empty").into());
    }
    shuffle_deck(&mut deck);
    #[cfg(test)]
    super::tests::cheats::spy(|spy| spy.host_deck = Some(deck.clone()));
    let layer_keys: Vec<LayerKey> = deck.iter().map(|_| LayerKey::random()).collect();
    let blobs: Vec<BlobA> = deck
        .iter()
        .zip(&layer_keys)
        .map(|(card, key)| seal_card(key, *card))
        .collect();
    let key = keygen.wait();
    let sealed = build_table(&key, &binding, Layer::Inner, &layer_keys).map_err(rsa_fault)?;
    let entries = sealed.entries.clone();
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
    let own = Own::new(Role::Host, key, sealed, layer_keys, Vec::new());
    Ok((table, own))
}

fn guest(session: &mut Session, binding: OtBinding, keygen: KeyGen) -> Result<(Table, Own), Stop> {
    send(session, &json!({"action": "join"}))?;
    receive(session, &["ready"])?;
    let frame = receive(session, &["mp_setup_a"])?;
    let setup_a = Setup::<BlobA>::parse(&frame, None)?;
    let size = setup_a.blobs.len();
    // id_a_of[id_b]: which of the host's blobs the guest's card id_b wraps.
    let mut order: Vec<usize> = (0..size).collect();
    rng::shuffle(&mut order);
    #[cfg(test)]
    super::tests::cheats::spy(|spy| spy.guest_order = Some(order.clone()));
    let layer_keys: Vec<LayerKey> = order.iter().map(|_| LayerKey::random()).collect();
    let blobs: Vec<BlobB> = order
        .iter()
        .zip(&layer_keys)
        .map(|(&id_a, key)| seal_blob(key, &setup_a.blobs[id_a]))
        .collect();
    let key = keygen.wait();
    let sealed = build_table(&key, &binding, Layer::Outer, &layer_keys).map_err(rsa_fault)?;
    let entries = sealed.entries.clone();
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
    Ok((table, Own::new(Role::Guest, key, sealed, layer_keys, order)))
}

fn rsa_fault(error: super::rsa::PrivateOpError) -> Abort {
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

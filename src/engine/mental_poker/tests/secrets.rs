//! Secrets stay in memory: whatever files two sides leave behind — events, the engine's
//! state dir, the receipt — hold neither side's RSA primes or private exponent (in hex or
//! decimal), nor any layer key the game did not open.

use std::collections::BTreeSet;
use std::path::Path;

use crypto_bigint::{NonZero, U2048};
use serde_json::Value;

use super::game::{Ended, Side, Strategy, play, spec};
use super::tampering::{first, hooks, tampering};
use crate::engine::mental_poker::vectors::primitives;

/// Every file under `dir`, as text (bytes that are not UTF-8 replaced).
fn files_under(dir: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            files.push((path.display().to_string(), text));
        }
    }
    files
}

/// The files under `dir` that hold any of `secrets`, with the secret found.
fn leaks(dir: &Path, secrets: &[String]) -> Vec<(String, String)> {
    let files = files_under(dir);
    assert!(files.len() >= 2, "both sides' events at least: {files:?}");
    let mut found = Vec::new();
    for (path, text) in &files {
        for secret in secrets {
            if text.contains(secret.as_str()) {
                found.push((path.clone(), secret.clone()));
            }
        }
    }
    found
}

/// The test sides' RSA key (both use the vectors' key): p, q, d and the CRT exponents
/// d mod (p-1), d mod (q-1), each in lowercase and upper-case hex (as is and zero-padded to
/// 512 digits) and in decimal.
fn rsa_secrets() -> Vec<String> {
    let rsa = &primitives()["rsa"];
    let number =
        |name: &str| U2048::from_str_radix_vartime(rsa[name].as_str().unwrap(), 16).unwrap();
    let (p, q, d) = (number("p"), number("q"), number("d"));
    let crt = |prime: U2048| d.rem_vartime(&NonZero::new(prime.wrapping_sub(&U2048::ONE)).unwrap());
    let mut secrets = Vec::new();
    for value in [p, q, d, crt(p), crt(q)] {
        let padded = hex::encode(value.to_be_bytes());
        let hex = padded.trim_start_matches('0').to_string();
        secrets.extend([
            hex.to_uppercase(),
            hex,
            padded.to_uppercase(),
            padded,
            value.to_string_radix_vartime(10),
        ]);
    }
    secrets
}

/// The hex keys of every `mp_play` either side sent: a played card's keys are public.
fn played_keys(side: &Ended) -> BTreeSet<String> {
    side.events_named("protocol_message")
        .into_iter()
        .filter(|m| m["msg"]["action"] == "mp_play")
        .flat_map(|m| ["k_inner", "k_outer"].map(|k| m["msg"][k].as_str().unwrap().to_string()))
        .collect()
}

fn layer_keys(side: &Ended) -> Vec<String> {
    side.spy.layer_keys.clone().expect("the side's layer keys")
}

#[test]
fn a_whole_game_writes_no_rsa_secret() {
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = play(
        &spec(),
        Side::honest(hooks(Strategy::PlayLowest)),
        Side::honest(hooks(Strategy::PlayLowest)),
        dir.path(),
    );
    for side in [&host, &guest] {
        assert!(side.result.as_ref().unwrap().completed, "{:?}", side.result);
    }
    assert_eq!(leaks(dir.path(), &rsa_secrets()), Vec::new());
    // The scan sees what is public: the modulus, and (opened at the end) the layer keys.
    let n = primitives()["rsa"]["n"].as_str().unwrap().to_string();
    let opened = [layer_keys(&host)[0].clone(), layer_keys(&guest)[0].clone()];
    assert_eq!(leaks(dir.path(), &[n]).len(), 2, "n in both event logs");
    assert!(leaks(dir.path(), &opened).len() >= 2);
}

#[test]
fn a_game_stopped_before_the_opening_writes_no_unopened_layer_key() {
    // The guest lies about the face of its first play: the host stops the game there.
    let guest = tampering(
        hooks(Strategy::PlayLowest),
        first("mp_play", |frame: &mut Value| {
            frame["suit"] = ((frame["suit"].as_u64().unwrap() + 1) % 4).into()
        }),
    );
    let dir = tempfile::tempdir().unwrap();
    let (host, guest) = play(
        &spec(),
        Side::honest(hooks(Strategy::PlayLowest)),
        guest,
        dir.path(),
    );
    assert_eq!(host.reason(), Some("card_face_mismatch"));
    let public: BTreeSet<String> = played_keys(&host)
        .union(&played_keys(&guest))
        .cloned()
        .collect();
    assert_eq!(public.len(), 4, "one play of each side: {public:?}");
    let unopened: Vec<String> = layer_keys(&host)
        .into_iter()
        .chain(layer_keys(&guest))
        .filter(|key| !public.contains(key))
        .collect();
    assert_eq!(unopened.len(), 2 * 12 - 4);
    let mut secrets = rsa_secrets();
    secrets.extend(
        unopened
            .iter()
            .flat_map(|key| [key.clone(), key.to_uppercase()]),
    );
    assert_eq!(leaks(dir.path(), &secrets), Vec::new());
    assert!(!leaks(dir.path(), &public.into_iter().collect::<Vec<_>>()).is_empty());
}

//! Interop: the reference client (`aigenora==0.1.4`, unchanged) against OUR community
//! server, side by side with our client. Never skips: the reference is installed if needed.

use std::path::Path;
use std::process::{Command, Output};

use aigenora::api::invitation::{BrowseFilter, NewInvitation};
use aigenora::identity::{self, load_key_file};
use serde_json::Value;

use crate::support::cli::aigenora;
use crate::support::reference::{reference_cli, reference_python};
use crate::support::server::{TestServer, fake_ticket, test_spec};

/// Creates an invitation with the reference's own RestClient and crypto helpers, the way
/// its `host` does after starting iroh (which this test does not need).
const REFERENCE_HOST: &str = r#"
import json, sys
from aigenora.engine.config import get_server
from aigenora.engine.keys import load_keys, sign_raw
from aigenora.engine.rest import RestClient
from aigenora.engine.crypto import transport_binding_canonical
data_dir, protocol_id, ticket = sys.argv[1:4]
kp = load_keys(data_dir)
binding = transport_binding_canonical(kp.public_key, "iroh", ticket, protocol_id)
body = {"message": "Écho ✓", "tags": ["game", "greet"], "iroh_ticket": ticket, "transport": "iroh",
        "transport_info": {"version": 1, "endpoint_id": kp.public_key, "ticket": ticket},
        "transport_binding_signature": sign_raw(kp.private_key, binding.encode("utf-8")),
        "protocol_id": protocol_id, "host_control_mode": "hybrid", "type": "supply",
        "options": {"best_of": 3}}
print(json.dumps(RestClient(get_server(None), kp).json("POST", "/api/v1/invitations", body, expected={201})))
"#;

/// Registers a session as the reference's `join` does after the P2P proof.
const REFERENCE_GUEST: &str = r#"
import json, sys
from aigenora.engine.config import get_server
from aigenora.engine.keys import load_keys, sign_raw
from aigenora.engine.rest import RestClient
from aigenora.engine.crypto import session_canonical, session_id
data_dir, post_id, host_pk, protocol_id, nonce, host_signature = sys.argv[1:7]
kp = load_keys(data_dir)
canonical = session_canonical(post_id, host_pk, kp.public_key, protocol_id, nonce)
body = {"post_id": post_id, "host_public_key": host_pk, "guest_public_key": kp.public_key,
        "protocol_id": protocol_id, "session_nonce": nonce, "host_signature": host_signature,
        "guest_signature": sign_raw(kp.private_key, canonical.encode("utf-8"))}
data = RestClient(get_server(None), kp).json("POST", "/api/v1/sessions", body, expected={201})
assert data["session_id"] == session_id(post_id, host_pk, kp.public_key, protocol_id, nonce), data
print(json.dumps(data))
"#;

struct Reference<'a> {
    server: &'a str,
}

impl Reference<'_> {
    fn command(&self, mut command: Command) -> Output {
        command
            .env("P2P_SERVER", self.server)
            .env_remove("AIGENORA_CONFIG")
            .env_remove("P2P_DATA_DIR");
        command.output().unwrap()
    }

    /// `python -m aigenora ARGS --data-dir DIR`
    fn cli(&self, dir: &Path, args: &[&str]) -> Output {
        let mut command = reference_cli();
        command.args(args).arg("--data-dir").arg(dir);
        self.command(command)
    }

    fn script(&self, code: &str, args: &[&str]) -> Output {
        let mut command = Command::new(reference_python());
        command.arg("-c").arg(code).args(args);
        self.command(command)
    }
}

fn ok(output: Output) -> String {
    let (out, err) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "reference failed:\n{out}\n{err}");
    out.into_owned()
}

fn ours(dir: &Path, server: &str, args: &[&str]) -> Output {
    aigenora()
        .arg("--data-dir")
        .arg(dir)
        .args(["--server", server])
        .args(args)
        .output()
        .unwrap()
}

/// The reference solves the proof of work of our default difficulty (whole zero bytes, as
/// it reads `difficulty` with `int()`): ~2^24 SHA-256 in pure Python, ~15 s on average.
#[test]
fn the_reference_registers_at_the_default_difficulty() {
    let difficulty = aigenora::server::DEFAULT_POW_DIFFICULTY.to_string();
    let server = TestServer::start(&["--pow-difficulty", &difficulty]);
    let reference = Reference {
        server: &server.url,
    };
    let work = tempfile::tempdir().unwrap();
    ok(reference.cli(work.path(), &["init"]));
    let registered = ok(reference.cli(work.path(), &["register", "--nickname", "slowpoke"]));
    assert!(
        registered.contains("'nickname': 'slowpoke'"),
        "{registered}"
    );
}

#[test]
fn the_reference_client_works_unchanged_against_our_server() {
    let server = TestServer::start(&[]);
    let reference = Reference {
        server: &server.url,
    };
    let work = tempfile::tempdir().unwrap();
    let (alice, bob, carol) = (
        work.path().join("alice"),
        work.path().join("bob"),
        work.path().join("carol"),
    );

    // Identity and registration (alice and bob by the reference; carol's key made by us).
    ok(reference.cli(&alice, &["init"]));
    ok(reference.cli(&bob, &["init"]));
    assert!(ours(&carol, &server.url, &["init"]).status.success());
    let registered = ok(reference.cli(&alice, &["register", "--nickname", "alice", "--bio", "hi"]));
    assert!(registered.contains("'nickname': 'alice'"), "{registered}");
    ok(reference.cli(&alice, &["register", "--nickname", "alice"]));
    ok(reference.cli(&bob, &["register", "--nickname", "bob"]));
    ok(reference.cli(&carol, &["register", "--nickname", "carol"]));

    // Protocols: the reference registers our spec; both clients fetch it.
    let spec_path = work.path().join("spec.json");
    std::fs::write(
        &spec_path,
        serde_json::to_string_pretty(&test_spec("Interop", 1)).unwrap(),
    )
    .unwrap();
    let protocol_id = aigenora::spec::Spec::from_value(test_spec("Interop", 1))
        .unwrap()
        .protocol_id();
    assert!(
        ok(reference.cli(
            &alice,
            &["protocol", "register", spec_path.to_str().unwrap()]
        ))
        .contains(&protocol_id)
    );
    ok(reference.cli(
        &alice,
        &["protocol", "register", spec_path.to_str().unwrap()],
    ));
    assert_eq!(
        ok(reference.cli(&bob, &["protocol", "fetch", &protocol_id]))
            .lines()
            .next(),
        Some(protocol_id.as_str())
    );
    let fetched = bob
        .join("protocols")
        .join(&protocol_id[..8])
        .join(&protocol_id[8..])
        .join("spec.json");
    assert_eq!(identity_hash(&fetched), protocol_id);
    assert!(
        ours(&carol, &server.url, &["protocol", "fetch", &protocol_id])
            .status
            .success()
    );
    assert!(ok(reference.cli(&bob, &["protocol", "discover"])).contains("Interop"));
    let ours_path = work.path().join("ours.json");
    std::fs::write(
        &ours_path,
        serde_json::to_string(&test_spec("Ours", 2)).unwrap(),
    )
    .unwrap();
    assert!(
        ours(
            &carol,
            &server.url,
            &["protocol", "register", ours_path.to_str().unwrap()]
        )
        .status
        .success()
    );
    let ours_id = aigenora::spec::Spec::from_value(test_spec("Ours", 2))
        .unwrap()
        .protocol_id();
    ok(reference.cli(&bob, &["protocol", "fetch", &ours_id]));

    // An invitation posted by the reference: browsed and verified by both clients.
    let posted: Value = serde_json::from_str(&ok(reference.script(
        REFERENCE_HOST,
        &[alice.to_str().unwrap(), &protocol_id, &fake_ticket(1)],
    )))
    .unwrap();
    let post_id = posted["post_id"].as_str().unwrap().to_string();
    let line = ok(reference.cli(
        &bob,
        &[
            "browse",
            "--oneline",
            "--tags",
            "game,greet",
            "--type",
            "supply",
            "--limit",
            "5",
        ],
    ));
    assert!(
        line.starts_with(&format!(
            "{post_id}\t{protocol_id}\tsupply\tÉcho ✓\tgame,greet\t"
        )),
        "{line}"
    );
    assert!(line.contains("\ttrue\talice\t1\t"), "{line}");
    let detail = ok(reference.cli(&bob, &["browse", "--post-id", &post_id]));
    assert!(detail.contains("options: best_of=3"), "{detail}");
    let carol_key = load_key_file(&aigenora::layout::DataDir::new(&carol)).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let carol_client = server.client(&carol_key);
    let invitation = runtime.block_on(carol_client.invitation(&post_id)).unwrap();
    assert_eq!(
        invitation.verified_ticket().unwrap(),
        fake_ticket(1),
        "our guest accepts the reference's binding"
    );
    let listed = runtime
        .block_on(carol_client.browse(&BrowseFilter::default()))
        .unwrap();
    assert_eq!(listed.results[0].message, "Écho ✓");

    // Cancel: not by others, then by the owner (204).
    let refused = reference.cli(&bob, &["cancel", &post_id]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("HTTP 403"));
    assert_eq!(
        ok(reference.cli(&alice, &["cancel", &post_id])).trim(),
        "[OK] invitation cancelled"
    );
    assert!(ok(reference.cli(&bob, &["browse"])).starts_with("Total: 0"));

    // A session: our host (carol) offers, the reference guest (bob) registers the match.
    let offer = NewInvitation::signed(&carol_key, &protocol_id, &fake_ticket(2));
    let post_id = runtime
        .block_on(carol_client.create_invitation(&offer))
        .unwrap()
        .post_id;
    let bob_key = load_key_file(&aigenora::layout::DataDir::new(&bob)).unwrap();
    let nonce = identity::new_session_nonce();
    let canonical = identity::session_canonical(
        &post_id,
        carol_key.public_key(),
        bob_key.public_key(),
        &protocol_id,
        &nonce,
    );
    let host_signature = carol_key.sign_hex(canonical.as_bytes());
    let created: Value = serde_json::from_str(&ok(reference.script(
        REFERENCE_GUEST,
        &[
            bob.to_str().unwrap(),
            &post_id,
            carol_key.public_key(),
            &protocol_id,
            &nonce,
            &host_signature,
        ],
    )))
    .unwrap();
    let session_id = created["session_id"].as_str().unwrap().to_string();
    assert_eq!(session_id, identity::session_id(&canonical));
    assert!(ok(reference.cli(&bob, &["session", "get", &session_id])).contains("status: matched"));
    ok(reference.cli(
        &bob,
        &["session", "status", &session_id, "--status", "closed"],
    ));
    let second = ours(
        &carol,
        &server.url,
        &["session", "status", &session_id, "closed"],
    );
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("HTTP 409"),
        "the second close is refused"
    );
}

/// protocol_id of a spec file, computed by our `protocol hash`.
fn identity_hash(path: &Path) -> String {
    let output = aigenora()
        .args(["protocol", "hash"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// Every test above once more against our server on PostgreSQL (they start theirs on
/// SQLite unless `AIGENORA_TEST_BACKEND` says otherwise).
#[test]
fn the_reference_client_passes_these_tests_on_postgres() {
    crate::support::postgres::rerun_on_postgres(
        "community::",
        "the_reference_client_passes_these_tests_on_postgres",
    );
}

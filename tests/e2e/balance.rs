//! Hero Duel between two processes: a custom balance table travels in the invitation and the
//! guest's shadow judge agrees with the host round after round; an invitation whose balance
//! does not fit the spec is refused by the guest before it dials anyone.

use serde_json::{Value, json};

use crate::support::fake::FakeHost;
use crate::support::net::{Net, SESSION_LIMIT};

fn hero_duel() -> String {
    aigenora::protocols::find("hero-duel")
        .unwrap()
        .spec()
        .protocol_id()
}

#[test]
fn a_preset_balance_plays_over_iroh_under_the_shadow_judge() {
    let net = Net::start();
    let (alice, bob) = (net.agent("alice"), net.agent("bob"));
    let (host, post_id) = alice.host("hero-duel", &["--options", r#"{"preset": "glass-cannon"}"#]);
    let invitation: Value =
        serde_json::from_str(&bob.ok(&["browse", "--post-id", &post_id, "--json"])).unwrap();
    assert!(
        invitation["options"]["balance"].is_object(),
        "the host advertises the resolved table: {invitation}"
    );
    let guest = bob.join(&post_id, &[]);
    let (host, guest) = (host.finish(SESSION_LIMIT), guest.finish(SESSION_LIMIT));
    assert!(
        host.status.success() && guest.status.success(),
        "{}\n{}",
        host.stderr,
        guest.stderr
    );
    let (host_end, guest_end) = (alice.session("host"), bob.session("guest"));
    assert_eq!(
        (host_end.status(), guest_end.status()),
        ("closed", "closed")
    );
    assert_eq!(host_end.field("winner"), guest_end.field("winner"));
    assert!(guest_end.events_of("balance_mismatch_detected").is_empty());
}

#[test]
fn a_balance_that_does_not_fit_the_spec_is_refused_before_dialing() {
    let net = Net::start();
    let bob = net.agent("bob");
    let bad = json!({"balance": {"imp": {"hp": -5}}});
    let fake = FakeHost::publish_with_options(&net, &hero_duel(), bad.as_object().unwrap().clone());
    let guest = bob.join(&fake.post_id, &[]).finish(SESSION_LIMIT);
    assert!(!guest.status.success());
    assert!(
        guest.stderr.contains(&format!(
            "the host's options do not fit protocol {}: balance.imp",
            hero_duel()
        )),
        "{}",
        guest.stderr
    );
    assert!(
        guest
            .stderr
            .contains("balance.imp.hp: below min 1 (got -5)"),
        "{}",
        guest.stderr
    );
}

//! Our hooks for the network's well-known contracts (the reference client's sample
//! protocols), shipped in the binary and keyed by protocol_id. Only the hooks are ours: the
//! spec always comes from the community server (hash checked), and a well-known id then
//! gets these hooks instead of a skeleton. The two card games run on the mental_poker engine
//! (their shared Python is the SDK's `aigenora.proto.cards`); the two rooms
//! (`community-room-v1`, `meeting-room-v1`) and the four-seat tables (`texas-holdem-v1`,
//! `contract-bridge-v1`, `four-player-landlord-v1` and `upgrade-tractor-v1`: their deck in the
//! SDK's `aigenora.proto.deck`, Hold'em's hand ranking in `poker_hands`, Bridge's trick rules
//! in `tricks`, Landlord's combinations in `climbing`, Upgrade's trumps, pairs and tractors in
//! `trump_tricks`) on the authoritative_group engine, where the leader runs them.
//! `aether-sigil-v1`, a four-seat card battle over one shared pile, deals from `deck` too.
//! Classical Mahjong (`classical-mahjong-v1`) is one more such table, its tiles in `tiles`.
//! All six four-seat tables deal through the SDK's `fair_deal` (docs/fair-deals.md).

mod install;
mod talk;

pub use install::{Installed, ProvidedHooks, install, provide_hooks};
pub use talk::Talk;

/// Our hooks for one contract of the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WellKnown {
    /// The network's name for the contract (the alias in the reference's index), e.g.
    /// `connect4-v1`; also the directory of its hooks in `src/protocols/well_known/`.
    pub alias: &'static str,
    /// The contract's display name.
    pub name: &'static str,
    /// The contract's protocol_id: what the hooks are for.
    pub protocol_id: &'static str,
    /// Our `hooks.py` for it.
    pub hooks_py: &'static str,
    /// A room contract's text action, when it is conversational (a typed line becomes it).
    pub talk: Option<Talk>,
}

/// Declares a contract whose hooks live in `src/protocols/well_known/<alias>/hooks.py`.
macro_rules! well_known {
    ($alias:literal, $name:literal, $protocol_id:literal) => {
        well_known!($alias, $name, $protocol_id, None)
    };
    ($alias:literal, $name:literal, $protocol_id:literal, $talk:expr) => {
        WellKnown {
            alias: $alias,
            name: $name,
            protocol_id: $protocol_id,
            hooks_py: include_str!(concat!($alias, "/hooks.py")),
            talk: $talk,
        }
    };
}

/// Every well-known contract this build can play, in listing order.
pub const WELL_KNOWN: &[WellKnown] = &[
    well_known!(
        "rps-v1",
        "Rock-Paper-Scissors",
        "43a806481a8e8cd00bc89f4676756c9be9081c0dd8392bee8e3534da41daa55f"
    ),
    well_known!(
        "coin-flip-v1",
        "Coin Flip",
        "9e5df77c31b613dd16b015ed802d4d063d446c4e381382885683c89b7f5ee48f"
    ),
    well_known!(
        "guess-number-v1",
        "Guess Number",
        "166570eff5c0864d31ccafb9d04ea5154184542085dfa401a9c3590f6831e8c8"
    ),
    well_known!(
        "weak-wins-all",
        "Weak Wins All",
        "83ae1cd79f397624990fd280667864667143cdf5c80e8a8923b364dbba710396"
    ),
    well_known!(
        "hero-duel-v1",
        "Hero Duel",
        "df2d0709aa159798680cfcb7106d4d3b0a8eee002b5644044dc0ed0b8d06092a"
    ),
    well_known!(
        "connect4-v1",
        "Connect Four",
        "5cd50a30977f690c81073e861c9fec9323b3bf359e703c886ff9b0153c1cb209"
    ),
    well_known!(
        "gomoku-v1",
        "Gomoku (Five-in-a-Row)",
        "6fdb1053bf4b3c2eb280d0f48215042ce2a330bef4d14113fdab3c4f997a0827"
    ),
    well_known!(
        "reversi-v1",
        "Reversi (Othello)",
        "5358130e14885f61ff210d2dd44c58a15ca4140bd89558f41f3eb867bc188e8f"
    ),
    well_known!(
        "crazy-eights-v1",
        "Crazy Eights",
        "3a3c352ac09a83a3c0877a5585fcd8c03fa4b85b873601f2fe3ba734474a64ae"
    ),
    well_known!(
        "briscola-v1",
        "Briscola",
        "f508d605c7dc9c8aeffd7bf1441e283ebe9ed83c768e36c05d02e056cdd51867"
    ),
    well_known!(
        "human-chat-v1",
        "Human Chat",
        "59da01bc80d2ac385e0c9c642ad578ffa83b8fe273c4df21d80b2555437b8a31"
    ),
    well_known!(
        "trusted-agent-task-v1",
        "Trusted Agent Task",
        "8cd35f96dd028318b7da11e0ac579953e0e13016deef85bc9aacc1636ab50dec"
    ),
    well_known!(
        "community-room-v1",
        "Community Room",
        "9a8a512873c4ad083b2692c06221b789002ce3fd813da2c8dd71501eb8b054ec",
        // `{"kind": "send", "text"}`: 1-2000 bytes of text.
        Some(Talk {
            kind: "send",
            field: "text",
            max_bytes: 2000
        })
    ),
    well_known!(
        "meeting-room-v1",
        "Meeting Room",
        "182ceaf26c288909862ad2f753c1e03858daac7e2550a18d2a856adfac02b58d"
    ),
    well_known!(
        "texas-holdem-v1",
        "Four-seat No-limit Texas Hold'em",
        "ba17afdceb178d206e7f3ba614b29751f36ec749f3039fa471995707f6fd66c7"
    ),
    well_known!(
        "contract-bridge-v1",
        "Contract Bridge",
        "5d69cf0e7ff90b2b60191fb43ab2448d0bf9153555b827199c1d77bc3ea78f3e"
    ),
    well_known!(
        "four-player-landlord-v1",
        "Four-player Landlord",
        "bbc0d9890d6481c3cd269fbfb466a3b7830e9d102638a14f2b7ddbae9da70d36"
    ),
    well_known!(
        "upgrade-tractor-v1",
        "Upgrade (Tractor)",
        "acdf987218b5382bbf5f4c0008d6766e97ca6c1ae12f3cf2becd2afa9ad6f88e"
    ),
    well_known!(
        "aether-sigil-v1",
        "Aether Sigil",
        "cbdb124e0db9be540099dbb7f7229bd9075251b5d6838f1ea943083d631570c5"
    ),
    well_known!(
        "classical-mahjong-v1",
        "Classical Mahjong Core",
        "b4b52ae592fb2fe9808c0bc4976eaee7ca1ce9fdb4638dc72bd88f18403def01"
    ),
];

/// Our hooks for a protocol_id, if it is a well-known contract.
pub fn by_id(protocol_id: &str) -> Option<&'static WellKnown> {
    WELL_KNOWN
        .iter()
        .find(|entry| entry.protocol_id == protocol_id)
}

/// A contract named by its protocol_id or its network alias.
pub fn find(id_or_alias: &str) -> Option<&'static WellKnown> {
    WELL_KNOWN
        .iter()
        .find(|entry| entry.protocol_id == id_or_alias || entry.alias == id_or_alias)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_aliases_are_unique_and_well_formed() {
        for (index, entry) in WELL_KNOWN.iter().enumerate() {
            assert!(
                crate::identity::is_lower_hex_64(entry.protocol_id),
                "{}",
                entry.alias
            );
            assert!(entry.hooks_py.contains("class Hooks("), "{}", entry.alias);
            for other in &WELL_KNOWN[index + 1..] {
                assert_ne!(entry.protocol_id, other.protocol_id);
                assert_ne!(entry.alias, other.alias);
            }
            assert!(
                crate::protocols::find(entry.alias).is_none(),
                "{}",
                entry.alias
            );
        }
        assert_eq!(find("connect4-v1").map(|e| e.name), Some("Connect Four"));
        assert_eq!(
            find(WELL_KNOWN[0].protocol_id).map(|e| e.alias),
            Some("rps-v1")
        );
        assert!(by_id("0".repeat(64).as_str()).is_none());
    }
}

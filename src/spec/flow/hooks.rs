//! The hooks each flow mode calls, as data: what a skeleton for the mode asks for (with the
//! text that explains each hook), and which of them the mode cannot run without (the engine
//! calls them and the SDK's `ProtocolHooks` only raises).

/// How much a mode needs one of its hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookNeed {
    /// The engine calls it and the SDK only raises: hooks.py must define it (checked when the
    /// hooks load, before anything is published or dialed).
    Required,
    /// A skeleton asks for it, though the SDK has a default.
    Asked,
    /// A skeleton shows it calling the SDK's default, to change if the game needs to.
    Optional,
}

/// One hook a mode calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookStub {
    pub name: &'static str,
    /// Its Python parameters (`self, msg`).
    pub params: &'static str,
    /// What it does, for a skeleton's docstring.
    pub doc: &'static str,
    pub need: HookNeed,
}

impl HookStub {
    const fn required(name: &'static str, params: &'static str, doc: &'static str) -> HookStub {
        HookStub {
            name,
            params,
            doc,
            need: HookNeed::Required,
        }
    }
    const fn asked(name: &'static str, params: &'static str, doc: &'static str) -> HookStub {
        HookStub {
            name,
            params,
            doc,
            need: HookNeed::Asked,
        }
    }
    const fn optional(name: &'static str, params: &'static str, doc: &'static str) -> HookStub {
        HookStub {
            name,
            params,
            doc,
            need: HookNeed::Optional,
        }
    }
}

/// The turn-taking modes (session_loop, request_response): the join, ready and reply hooks.
pub const TURNS: &[HookStub] = &[
    HookStub::asked(
        "proto_host_handle_join",
        "self, msg",
        "Host: the guest's join message. Return HookResult(ready_message).",
    ),
    HookStub::asked(
        "proto_host_handle",
        "self, msg",
        "Host: a guest message. Return HookResult(reply, completed=..., abort=...);\n        a result without a reply ends the session.",
    ),
    HookStub::asked(
        "proto_guest_join_message",
        "self",
        "Guest: the join message to send first (a dict).",
    ),
    HookStub::asked(
        "proto_guest_handle_ready",
        "self, msg",
        "Guest: the host's ready message (the return value is ignored).",
    ),
    HookStub::asked(
        "proto_guest_first_action",
        "self",
        "Guest: the first message after ready, or None to end.",
    ),
    HookStub::asked(
        "proto_guest_handle",
        "self, msg",
        "Guest: a host message. Return HookResult(reply, completed=..., abort=...).",
    ),
];

/// simultaneous_round: each side's secret value, and the host's judgement of a round.
pub const ROUND: &[HookStub] = &[
    HookStub::required(
        "proto_round_value",
        "self, round_index, state",
        "Both sides: this round's secret value (str, int or bool). The engine commits\n        to it, reveals it after the peer committed, and checks the peer's reveal.",
    ),
    HookStub::required(
        "proto_round_judge",
        "self, round_index, host_value, guest_value, state",
        "Host: judge the round. Return HookResult(round_result_message, completed=game_over).\n        The engine sends {\"action\": \"end\"} after a completed result.",
    ),
];

/// authoritative_group: the room's state, each action, each member's view; the rest has
/// defaults in the SDK.
pub const GROUP: &[HookStub] = &[
    HookStub::required(
        "proto_group_initial_state",
        "self, members",
        "Leader: the state of a new room (a dict) for its first members, each\n        {member_id, public_key, seat, status}.",
    ),
    HookStub::required(
        "proto_group_handle",
        "self, state, actor, action",
        "Leader: one member's action. Return {\"state\": ..., \"events\": [...], \"direct\":\n        {public_key: ...}, \"completed\": bool, \"outcome\": str|None}; raise ValueError\n        to refuse it (the text becomes the receipt's reason).",
    ),
    HookStub::optional(
        "proto_group_view",
        "self, state, viewer",
        "Leader: what one member may see of the state (default: all of it).",
    ),
    HookStub::optional(
        "proto_group_autoplay",
        "self, view, member",
        "A seat that plays by itself (and protocol test): the action this member takes\n        seen from its view, or None for nothing to do.",
    ),
];

/// mental_poker: the deck, the deal, each turn's action and the winner.
pub const MENTAL_POKER: &[HookStub] = &[
    HookStub::required(
        "proto_mp_deck_universe",
        "self",
        "Both sides: the whole deck, a list of (rank, suit) pairs (each 0..255). The host\n        seals it; both sides compare the opened deck with it in the audit.",
    ),
    HookStub::required(
        "proto_mp_initial_deal",
        "self, state",
        "Both sides: cards dealt to each side, e.g. {\"host\": 5, \"guest\": 5}.",
    ),
    HookStub::required(
        "proto_mp_choose_action",
        "self, state",
        "This side's turn: {\"kind\": \"play\", \"id_b\": <a card of state[\"_mp_hand\"]>},\n        {\"kind\": \"draw\"} or {\"kind\": \"pass\"}. state[\"_mp_hand_cards\"] maps id_b to\n        (rank, suit); state[\"_mp_deck_view\"] shows both hands' sizes, the stock and the plays.",
    ),
    HookStub::required(
        "proto_mp_check_winner",
        "self, state",
        "Both sides, after every turn: \"host\", \"guest\", \"draw\" or None (game goes on).\n        state.get(\"_mp_stalled\") is true after two passes in a row.",
    ),
    HookStub::optional(
        "proto_mp_validate_play",
        "self, state, who, play_msg",
        "Optional: the rules check of a peer's play (the engine already proved the card\n        was in its hand). Return ValidationResult(ok, reason); the default accepts all.",
    ),
    HookStub::optional(
        "proto_mp_legal_actions",
        "self, state",
        "Optional: this side's legal actions, shown to a person (human and hybrid control).",
    ),
    HookStub::optional(
        "proto_mp_coerce_action",
        "self, state, decision",
        "Optional: a person's decision checked and turned into an action.",
    ),
    HookStub::optional(
        "proto_mp_apply_local_action",
        "self, state, action",
        "Optional: bookkeeping for an action a person chose.",
    ),
];

/// free: the chat's message and end hooks.
pub const CHAT: &[HookStub] = &[
    HookStub::asked(
        "proto_on_message",
        "self, msg",
        "Both sides: a validated chat message from the peer ({action, text, seq}).",
    ),
    HookStub::asked(
        "proto_on_end",
        "self",
        "Both sides: the chat ended (either side sent /quit).",
    ),
];

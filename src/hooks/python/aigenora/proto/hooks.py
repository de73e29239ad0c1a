"""The hooks contract: HookResult, and ProtocolHooks, the base class every protocol's
`Hooks` extends, with the default for every hook the flow engines call."""
from __future__ import annotations

from abc import ABC
from pathlib import Path

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any, Callable

from aigenora.control import ensure_control_mode_supported
from aigenora.proto.decision_windows import DecisionWindows, InvalidHumanDecisionError
from aigenora.proto.sdk import DecisionBus, DetailLog, SnapshotBus, StrategyStore

__all__ = ["HookResult", "InvalidHumanDecisionError", "ProtocolHooks"]


class HookResult:
    """What a hook hands back: a message to send (or None), and whether the session ends.
    (Written out rather than a dataclass: importing dataclasses costs every process ~5 ms.)"""

    __match_args__ = ("response", "completed", "abort")

    def __init__(self, response: dict[str, Any] | None = None, completed: bool = False,
                 abort: bool = False):
        self.response, self.completed, self.abort = response, completed, abort

    def __repr__(self) -> str:
        return (f"HookResult(response={self.response!r}, completed={self.completed!r}, "
                f"abort={self.abort!r})")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.response, self.completed, self.abort) == (other.response, other.completed, other.abort)

    __hash__ = None  # mutable, like the dataclass it replaces


def displays_only(*actions: str) -> Callable[[Callable], Callable]:
    """Marks a `proto_display` that returns None for every message whose action is not one of
    `actions`: the engine then calls it only for those (an extension; a subclass that
    overrides the method without the mark gets every message again)."""

    def mark(method: Callable) -> Callable:
        method.displays_only = frozenset(actions)
        return method

    return mark


def _control_mode_of(decision_config: dict[str, Any] | None) -> str:
    if not decision_config:
        return "autonomous"
    explicit = decision_config.get("control_mode")
    if explicit:
        return explicit
    return "human" if decision_config.get("mode") == "manual" else "hybrid"


class ProtocolHooks(DecisionWindows, ABC):
    """Base of every protocol's `Hooks`; subclasses override what their flow mode needs."""

    bus: Any
    snapshot: Any
    details: Any
    strategy: Any

    # Aliases per choice for whisper parsing, e.g. {"rock": ["rock", "r"]}; None = no parsing.
    CHOICE_KEYWORDS: dict[str, list[str]] | None = None
    # Kept for hooks that still set it; parsing follows DECISION_SCHEMA instead.
    WHISPER_NUMERIC: bool = False
    # How decisions look: match_key, value_field, choices, strategy_field, policy_family, ...
    DECISION_SCHEMA: dict[str, Any] | None = None
    # A protocol adds "human" only when every local move can come from an explicit decision.
    SUPPORTED_CONTROL_MODES: tuple[str, ...] = ("autonomous", "hybrid")

    def proto_init(
        self,
        options: dict[str, Any],
        role: str,
        args: list[str],
        state_dir: Path,
        decision_config: dict[str, Any] | None = None,
    ) -> None:
        """Bind the session: options, role, extra args, state dir, and the decision channel
        (a DecisionBus when a decision config is given and no legacy args suppress it)."""
        self.options = options
        self.role = role
        self.args = args
        self.state_dir = Path(state_dir)
        self.snapshot = SnapshotBus(self.state_dir)
        self.details = DetailLog(self.state_dir)
        self.strategy = StrategyStore(self.state_dir)
        self.timing = None
        self.bus = None
        self.decision_mode = None
        self.control_mode = _control_mode_of(decision_config)
        ensure_control_mode_supported(self, self.control_mode)
        self.snapshot.update(control_mode=self.control_mode)
        if not decision_config or (args and self.control_mode != "human"):
            return
        mode = decision_config.get("mode")
        if mode in ("manual", "auto"):
            self.bus = DecisionBus(
                self.state_dir,
                timeout=decision_config.get("timeout_seconds", 120),
                timeout_action=decision_config.get("timeout_action", "forfeit"),
                fallback_value=decision_config.get("fallback_value"),
                require_explicit=bool(decision_config.get("require_explicit", False)),
            )
            self.decision_mode = mode

    def supported_control_modes(self) -> tuple[str, ...]:
        return self.SUPPORTED_CONTROL_MODES

    def proto_host_metadata(self) -> tuple[str, str, str, dict[str, Any]]:
        """(display name, comma-separated tags, invite type, default options)."""
        return ("Game", "game", "supply", {})

    # -- handshake and turn-based loop (session_loop, request_response) ----------------------

    def proto_host_handle_join(self, msg: dict[str, Any]) -> HookResult:
        return HookResult({"action": "ready"})

    def proto_host_handle(self, msg: dict[str, Any]) -> HookResult:
        return HookResult(abort=True)

    def proto_guest_join_message(self) -> dict[str, Any]:
        return {"action": "join"}

    def proto_guest_handle_ready(self, msg: dict[str, Any]) -> None:
        return None

    def proto_guest_first_action(self) -> dict[str, Any] | None:
        return None

    def proto_guest_handle(self, msg: dict[str, Any]) -> HookResult:
        return HookResult(abort=True)

    def proto_display(self, msg: dict[str, Any], direction: str) -> str | None:
        """Text to print for a message `sent` or `received`; None prints nothing."""
        return None

    # -- free mode --------------------------------------------------------------------------

    def proto_on_message(self, msg: dict[str, Any]) -> None:
        """A peer's chat frame arrived."""

    def proto_on_send(self, msg: dict[str, Any]) -> None:
        """A local chat frame was sent."""

    def proto_on_end(self) -> None:
        """The chat is over (either side quit)."""

    # -- simultaneous_round -------------------------------------------------------------------

    def proto_round_value(self, round_index: int, state: dict) -> str | int | bool:
        """This side's secret value for round `round_index` (0-based); the engine commits to it."""
        raise NotImplementedError("proto_round_value must be overridden for simultaneous_round")

    def proto_round_judge(self, round_index: int, host_value: str | int | bool,
                          guest_value: str | int | bool, state: dict) -> HookResult:
        """Host only: the round_result for two revealed values."""
        raise NotImplementedError("proto_round_judge must be overridden for simultaneous_round")

    # -- whispers -----------------------------------------------------------------------------

    def proto_parse_whisper_intent(self, text: str, context: dict[str, Any] | None = None
                                   ) -> dict[str, Any] | None:
        """Protocol-specific whisper parsing (deterministic, no side effects); None = generic."""
        return None

    # -- authoritative_realtime ---------------------------------------------------------------

    def proto_realtime_initial_state(self) -> dict[str, Any]:
        raise NotImplementedError(
            "proto_realtime_initial_state must be overridden for authoritative_realtime"
        )

    def proto_realtime_commands(self, state: dict[str, Any], target_tick: int) -> list[dict[str, Any]]:
        return []

    def proto_realtime_validate_commands(self, side: str, commands: list[dict[str, Any]],
                                         state: dict[str, Any], target_tick: int
                                         ) -> list[dict[str, Any]]:
        """Normalise a side's commands; raise ValueError to reject the frame."""
        return commands

    def proto_realtime_step(self, state: dict[str, Any], tick: int,
                            commands: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        """Host only: {state, events, outcome (none|host|guest|draw)} after one tick."""
        raise NotImplementedError("proto_realtime_step must be overridden for authoritative_realtime")

    def proto_realtime_snapshot(self, state: dict[str, Any], frame: dict[str, Any]) -> dict[str, Any]:
        return {"world": state}

    def proto_realtime_audit_outcome(self, frame: dict[str, Any]) -> dict[str, Any] | None:
        return None

    def proto_realtime_transport_update(self, profile: dict[str, Any]) -> None:
        """Observed RTT/jitter advice; must never influence the simulation rules."""

    # -- authoritative_group -------------------------------------------------------------------

    def proto_group_initial_state(self, members: list[dict[str, Any]]) -> dict[str, Any]:
        raise NotImplementedError("proto_group_initial_state must be overridden for authoritative_group")

    def proto_group_member_joined(self, state: dict[str, Any], member: dict[str, Any]) -> dict[str, Any]:
        return {"state": state, "events": [{"kind": "member_joined", "member": member}]}

    def proto_group_member_left(self, state: dict[str, Any], member: dict[str, Any],
                                reason: str) -> dict[str, Any]:
        return {"state": state,
                "events": [{"kind": "member_left", "member": member, "reason": reason[:64]}]}

    def proto_group_handle(self, state: dict[str, Any], actor: dict[str, Any],
                           action: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError("proto_group_handle must be overridden for authoritative_group")

    def proto_group_view(self, state: dict[str, Any], viewer: dict[str, Any]) -> dict[str, Any]:
        return state

    def proto_group_autoplay(self, view: dict[str, Any], member: dict[str, Any]
                             ) -> dict[str, Any] | None:
        """The action a seat that plays by itself takes, seen from its view; None: nothing."""
        return None

    def proto_group_peer_routes(self, state: dict[str, Any], viewer: dict[str, Any]
                                ) -> dict[str, list[str]]:
        return {}

    def proto_group_recovery_snapshot(self, state: dict[str, Any]) -> dict[str, Any]:
        return state

    def proto_group_restore(self, checkpoint: dict[str, Any], members: list[dict[str, Any]],
                            new_epoch: int) -> dict[str, Any]:
        return checkpoint

    def proto_group_on_leader_changed(self, state: dict[str, Any], old_leader: str,
                                      new_leader: str) -> dict[str, Any]:
        return {"state": state, "events": [
            {"kind": "leader_changed", "old_leader": old_leader, "new_leader": new_leader},
        ]}

    # -- mental_poker ----------------------------------------------------------------------------

    def proto_mp_deck_universe(self) -> list[tuple[int, int]]:
        """The full deck as (rank, suit) pairs."""
        raise NotImplementedError("proto_mp_deck_universe must be overridden for mental_poker")

    def proto_mp_initial_deal(self, state: dict) -> dict:
        """Cards dealt per side, e.g. {"host": 5, "guest": 5}."""
        raise NotImplementedError("proto_mp_initial_deal must be overridden for mental_poker")

    def proto_mp_choose_action(self, state: dict) -> dict:
        """{kind: play, id_b} | {kind: draw} | {kind: pass} (optionally call_suit)."""
        raise NotImplementedError("proto_mp_choose_action must be overridden for mental_poker")

    def proto_mp_legal_actions(self, state: dict) -> list[dict[str, Any]]:
        return []

    def proto_mp_coerce_action(self, state: dict, decision: dict[str, Any]) -> dict[str, Any]:
        """Check an explicit decision and turn it into an action."""
        if not isinstance(decision, dict):
            raise ValueError("action decision must be an object")
        kind = decision.get("kind")
        if kind not in ("play", "draw", "pass"):
            raise ValueError("kind must be play, draw, or pass")
        if kind != "play":
            return {"kind": kind}
        id_b = decision.get("id_b")
        if not isinstance(id_b, str) or id_b not in (state.get("_mp_hand") or set()):
            raise ValueError("id_b is not a card in the local hand")
        action: dict[str, Any] = {"kind": kind, "id_b": id_b}
        if decision.get("call_suit") is not None:
            action["call_suit"] = int(decision["call_suit"])
        return action

    def proto_mp_apply_local_action(self, state: dict, action: dict[str, Any]) -> None:
        """Business bookkeeping for an explicit (not auto-chosen) local action."""
        return None

    def proto_mp_check_winner(self, state: dict) -> str | None:
        """"host" / "guest" once decided (also when `_mp_stalled`), else None."""
        raise NotImplementedError("proto_mp_check_winner must be overridden for mental_poker")

    def proto_mp_validate_play(self, state: dict, who: str, play_msg: dict[str, Any]
                               ) -> mental_poker.ValidationResult:
        """Rules check of a verified peer play; accepts everything by default."""
        from aigenora.proto import mental_poker

        return mental_poker.ValidationResult(True)

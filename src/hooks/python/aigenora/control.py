"""Local control modes (autonomous / hybrid / human): parsing and the hooks capability check."""
from __future__ import annotations

TYPE_CHECKING = False  # typing costs every process ~2 ms to import; annotations are strings
if TYPE_CHECKING:
    from typing import Any, Iterable

AUTONOMOUS = "autonomous"
HYBRID = "hybrid"
HUMAN = "human"

CONTROL_MODES: tuple[str, ...] = (AUTONOMOUS, HYBRID, HUMAN)
DEFAULT_CONTROL_MODE = HYBRID


class ControlModeError(ValueError):
    """A control mode that is unknown, conflicting, or not supported by the hooks."""


def normalize_control_mode(value: Any) -> str | None:
    """Canonical spelling of a mode name; None stays None (meaning "not given")."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ControlModeError("control mode must be a string")
    mode = value.strip().lower()
    if mode not in CONTROL_MODES:
        raise ControlModeError("control mode must be one of: " + ", ".join(CONTROL_MODES))
    return mode


def resolve_control_mode(control_mode: Any = None, *, coach: bool = False) -> str:
    """The effective mode; the legacy `coach` flag means human and conflicts with the others."""
    explicit = normalize_control_mode(control_mode)
    if not coach:
        return explicit or DEFAULT_CONTROL_MODE
    if explicit not in (None, HUMAN):
        raise ControlModeError(
            "--coach is an alias for --control-mode human and conflicts with "
            f"--control-mode {explicit}"
        )
    return HUMAN


def control_mode_from_args(args: Any) -> str:
    """Resolve the mode from an argparse-like namespace (`control_mode`, `coach`)."""
    return resolve_control_mode(
        getattr(args, "control_mode", None), coach=bool(getattr(args, "coach", False))
    )


def declared_control_modes(hooks: Any) -> tuple[str, ...]:
    """The modes a hooks object declares, normalised and without duplicates."""
    declared = getattr(hooks, "supported_control_modes", None)
    if callable(declared):
        raw: Iterable[Any] = declared()
    else:
        raw = getattr(hooks, "SUPPORTED_CONTROL_MODES", (AUTONOMOUS, HYBRID))
    modes: list[str] = []
    for item in raw or ():
        mode = normalize_control_mode(item)
        if mode is not None and mode not in modes:
            modes.append(mode)
    return tuple(modes)


def ensure_control_mode_supported(hooks: Any, control_mode: str) -> None:
    """Raise ControlModeError unless the hooks declare `control_mode`."""
    supported = declared_control_modes(hooks)
    if control_mode in supported:
        return
    listed = ", ".join(supported) if supported else "none"
    raise ControlModeError(
        f"protocol hooks {type(hooks).__name__} do not support control mode "
        f"{control_mode!r}; supported modes: {listed}"
    )

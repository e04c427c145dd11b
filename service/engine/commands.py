"""Reading a command: its fields, checked, and the turn and phase it needs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from .cards import CARD_INDEX, CardError, check_card
from .errors import CommandError, IllegalMoveError
from .state import SEATS, State


def command_field(command: Mapping[str, Any], name: str) -> Any:
    if name not in command:
        raise CommandError(f"{command.get('type')!r} command needs a {name!r} field", "missing_field")
    return command[name]


def card_field(command: Mapping[str, Any], name: str = "card") -> str:
    value = command_field(command, name)
    if isinstance(value, str) and value in CARD_INDEX:
        return value
    try:
        check_card(value)
    except CardError as exc:
        raise CommandError(str(exc), "invalid_card") from None
    raise AssertionError("unreachable")


def seat_of(command: Mapping[str, Any]) -> int:
    seat = command.get("seat")
    if seat not in SEATS or isinstance(seat, bool):
        raise CommandError(f"seat must be 0 or 1, got {seat!r}", "invalid_seat")
    return cast(int, seat)  # 0 or 1, checked above


def summary(state: State) -> str:
    return f"(hand {state.hand_number}, phase {state.phase}, turn of seat {state.turn})"


def require_turn(state: State, seat: int, *phases: str) -> None:
    if state.phase not in phases:
        raise IllegalMoveError(
            "wrong_phase",
            f"cannot do that in phase {state.phase!r}; allowed in {', '.join(phases)} {summary(state)}",
        )
    if state.turn != seat:
        raise IllegalMoveError("not_your_turn", f"it is seat {state.turn}'s turn, not seat {seat}'s {summary(state)}")

"""Hints: whether a match allows them, when a seat may be given one, and the
``hint`` command that records one shown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .commands import seat_of, summary
from .errors import CommandError, IllegalMoveError
from .legal import plays
from .state import DISCARD, DRAW, MATCH_OVER, UPCARD_OFFER, Event, State


def default_hints(seats: Sequence[Mapping[str, Any]]) -> bool:
    """Hints, unless set: on against the computer and for two people on one device; off
    when a seat waits for a player to join, or the two seats are held by two players."""
    if any(seat["kind"] == "open" for seat in seats):
        return False
    held = [seat["player"] for seat in seats if "player" in seat]
    return not (len(held) == 2 and held[0] != held[1])


def hints_allowed(state: State) -> bool:
    """Whether a seat may ask for hints.  A match made before the ``hints`` parameter
    existed allows them against the computer only."""
    if state.rules is None:
        return False
    if state.rules.hints is not None:
        return state.rules.hints
    return any(seat["kind"] == "computer" for seat in state.seats)


#: The phases whose plays a hint may suggest (not the defense: the best one is listed).
HINT_PHASES = (UPCARD_OFFER, DRAW, DISCARD)


def check_hint(state: State, seat: int) -> None:
    """Raise IllegalMoveError unless ``seat`` may be given a hint now: hints allowed,
    and its turn to take or pass the upcard, draw or discard."""
    if state.phase == MATCH_OVER:
        raise IllegalMoveError("match_over", "the match is over")
    if not hints_allowed(state):
        raise IllegalMoveError("hints_off", "this match is played without hints (rules: hints false)")
    if state.turn != seat or state.phase not in HINT_PHASES:
        raise IllegalMoveError("not_your_turn", f"a hint is for the seat to play: seat {seat} has no play to make now {summary(state)}")


#: The longest reason a hint may give.
HINT_REASON_LENGTH = 300


def hint(state: State, command: Mapping[str, Any]) -> list[Event]:
    """A hint shown to the seat to act: one of its legal plays and why.  It changes
    nothing in the play; the event says that help was used (a hinted match is not rated)."""
    seat = seat_of(command)
    check_hint(state, seat)
    action = command.get("action")
    if action not in plays(state, seat):
        raise IllegalMoveError("hint_not_legal", f"a hint names one of the seat's legal plays, not {action!r}")
    reason = command.get("reason")
    if not isinstance(reason, str) or not 0 < len(reason) <= HINT_REASON_LENGTH or not reason.isprintable():
        raise CommandError(f"a hint's reason is printable text of 1 to {HINT_REASON_LENGTH} characters", "invalid_hint")
    return [Event("hint_shown", {"seat": seat, "action": dict(action), "reason": reason})]

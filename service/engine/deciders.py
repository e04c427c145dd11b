"""``decide(state, command) -> events``: every command type and its decider, and
``execute``, which decides and folds in one step."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .clock import stamped
from .errors import CommandError, IllegalMoveError
from .evolvers import fold
from .hints import hint
from .match import abort, claim_timeout, deal, join, resign, start_match
from .state import MATCH_OVER, WAITING, Event, State
from .turns import big_gin, defend, discard, draw, knock_or_gin, pass_upcard

DECIDERS = {
    "start_match": start_match,
    "join": join,
    "abort": abort,
    "resign": resign,
    "claim_timeout": claim_timeout,
    "deal": deal,
    "pass": pass_upcard,
    "draw": draw,
    "discard": discard,
    "knock": knock_or_gin,
    "gin": knock_or_gin,
    "big_gin": big_gin,
    "defend": defend,
    "hint": hint,
}

#: The commands that play the cards (the others end the match).
PLAY_COMMANDS = ("draw", "pass", "discard", "knock", "gin", "big_gin", "defend")


def decide(state: State, command: Mapping[str, Any]) -> list[Event]:
    """The events a command causes, or ``CommandError`` / ``IllegalMoveError``."""
    if not isinstance(command, (dict, Mapping)):
        raise CommandError("a command is a JSON object with a 'type'", "invalid_command")
    ctype = command.get("type")
    decider = DECIDERS.get(ctype) if isinstance(ctype, str) else None
    if decider is None:
        raise CommandError(
            f"unknown command type {ctype!r}; the types are {', '.join(DECIDERS)}", "unknown_command"
        )
    if state.phase == MATCH_OVER:
        raise IllegalMoveError("match_over", "the match is over")
    if state.phase == WAITING and ctype in PLAY_COMMANDS:
        raise IllegalMoveError("waiting_for_players", "the match waits for a player to take the open seat")
    return stamped(state, command, decider(state, command))


def execute(state: State, command: Mapping[str, Any]) -> tuple[State, list[Event]]:
    """Decide and fold in one step: the new state and the events."""
    events = decide(state, command)
    return fold(events, state), events

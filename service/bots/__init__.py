"""The computer opponent: three levels, each a function from what a seat may know to an action.

``choose_action(view, history, level, rng)`` takes the seat view the API serves (the
same JSON a front end gets), the seat's redacted events of the current hand, a level
from ``LEVELS`` and a seeded ``random.Random``; it returns one of
``view["legal_actions"]``.  Nothing else reaches a bot, so it cannot see a hidden card.

One liberty: a knock or Gin action (listed without melds, which lets the engine lay out
the best of the least-deadwood arrangements) may come back with ``melds`` of its own,
always a legal arrangement of the same cards: of the least deadwood, or under
``knocker_arranges`` any within the knock limit (``hard`` names one of more deadwood
when it expects that to leave fewer layoffs).  Type and card are always those of a
listed action.

Every level plays the hand's knock limit (under Oklahoma the first upcard's value: an
ace allows Gin only; 0 under Straight Gin), and goes Gin the better way when it may:
Big Gin (all eleven cards down, no discard) when ``big_gin_bonus`` is at least the Gin
bonus, else Gin with a discard.

- ``easy`` plays like a beginner: it keeps picture cards too long, grabs discards that
  merely pair up, and knocks only with a very low count (until late, when it knocks
  with anything and never fears an undercut).
- ``medium`` follows the seeds' advice: throw high deadwood early, keep two-way cards
  with live partners, take the upcard only when it melds, do not feed the opponent's
  pickups, knock as soon as it may, and knock only lower as the hand grows late.
- ``hard`` plays for points: see ``service.bots.hard``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from service.engine import State, seat_view

from . import easy, hard, medium
from .knowledge import read

LEVELS = ("easy", "medium", "hard")

#: The version of the computer's decisions.  Any change to what a level plays in some
#: position must change it (tests/bots/test_bots_version.py fails until it does): a
#: record names the version its computer moves were made by, and an import with the
#: same version checks every one of them by making it again.
BOTS_VERSION = "2026.12.3"

_PLAYERS = {"easy": easy.play, "medium": medium.play, "hard": hard.play}


def choose_action(
    view: Mapping[str, Any], history: Sequence[Mapping[str, Any]], level: str, rng: random.Random
) -> dict:
    """One of ``view["legal_actions"]`` for the seat of ``view`` at ``level``."""
    if level not in _PLAYERS:
        raise ValueError(f"unknown level {level!r}; the levels are {', '.join(LEVELS)}")
    actions = view["legal_actions"]
    if not actions:
        raise ValueError(f"seat {view.get('seat')} has no legal action in phase {view.get('phase')!r}: not its turn")
    if len(actions) == 1:
        return actions[0]
    return _PLAYERS[level](view, read(view, history), rng)


def computer_decision(state: State, history: Sequence[Mapping[str, Any]]) -> dict:
    """The computer's action for the seat whose turn it is: a pure function of the match
    (its state, and the seat's redacted events of the hand: ``hand_history``), so that an
    imported record's computer moves can be checked by making them again (BOTS_VERSION).
    Its generator is seeded by the seat's seed and the match's version."""
    seat = state.turn
    assert seat is not None, "the computer decides on its turn"
    info = state.seats[seat]
    rng = random.Random(f"{info['seed']}:{state.version}")
    return choose_action(seat_view(state, seat), history, info["level"], rng)

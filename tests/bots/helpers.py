"""Shared checks for the bot tests."""

from __future__ import annotations

import uuid

from service.application.views import view_for
from service.engine import DECK, State, check_arrangement, deadwood, decide, fold, redact_event

MATCH_ID = uuid.UUID(int=7)

SEATS = [
    {"name": "North", "kind": "computer", "level": "medium", "seed": 1},
    {"name": "South", "kind": "computer", "level": "medium", "seed": 2},
]


def assert_legal(view: dict, action: dict) -> None:
    """``action`` is one of the view's legal actions, or a listed knock or Gin with its
    own legal arrangement: within the knock limit, and of the least deadwood unless the
    knocker may arrange."""
    legal = view["legal_actions"]
    if action in legal:
        return
    assert action["type"] in ("knock", "gin"), (action, legal)
    same = [a for a in legal if a["type"] == action["type"] and a["card"] == action["card"]]
    assert same and set(action) == set(same[0]) | {"melds"}, (action, legal)
    rest = [c for c in view["hand"] if c != action["card"]]
    arranged = check_arrangement(rest, action["melds"])
    assert arranged.deadwood <= view.get("knock_limit", view["rules"]["knock_limit"])  # the hand's limit
    assert view["rules"]["knocker_arranges"] or arranged.deadwood == deadwood(rest), (action, legal)
    assert (arranged.deadwood == 0) == (action["type"] == "gin")


def stacked_deck(starter: list[str], other: list[str], upcard: str, stock_top: list[str] = ()) -> list[str]:
    """A deck dealing ``starter`` and ``other`` their hands, ``upcard`` face up, then ``stock_top``."""
    head = list(starter) + list(other) + [upcard] + list(stock_top)
    assert len(starter) == 10 and len(other) == 10 and len(set(head)) == len(head), head
    return head + [c for c in DECK if c not in head]


def position(
    starter: list[str],
    other: list[str],
    upcard: str,
    stock_top: list[str] = (),
    moves: list[dict] = (),
    rules: dict | None = None,
) -> tuple[dict, list[dict]]:
    """The view and hand history of the seat to act after dealing and ``moves`` (seat 0 starts)."""
    state = State()
    events: list[dict] = []
    commands = [
        {"type": "start_match", "rules": rules or {"preset": "classic"}, "seats": SEATS},
        {"type": "deal", "deck": stacked_deck(starter, other, upcard, stock_top), "salt": "00"},
        *moves,
    ]
    for command in commands:
        new = decide(state, command)
        for event in new:
            events.append({"seq": len(events) + 1, "type": event.type, "data": event.data})
        state = fold(new, state)
    seat = state.turn
    history = [redact_event(e, seat) for e in events[state.hand_start_version :]]
    return view_for(state, seat, MATCH_ID), history

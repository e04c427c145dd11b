"""The commands a seat may send now: its plays of the cards, and those that end the
match."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .cards import CARD_INDEX, CARD_VALUE
from .clock import deadline
from .layoffs import best_defense
from .melds import deadwood_of_mask
from .state import DEFENSE, DISCARD, DRAW, PLAYING, UPCARD_OFFER, WAITING, State


def legal_actions(state: State, seat: int, now: datetime | None = None) -> list[dict[str, Any]]:
    """Every command the seat may send now, each complete as it could be posted: its
    plays when it is its turn, then those that end the match (``resign``, while it is
    played; ``abort``, while it waits for players; ``claim_timeout``, once the other
    seat's deadline is past ``now``, when given).

    In the defense step only the suggested best defense is listed; any other legal
    arrangement may be sent in the same shape.  A knock or Gin is listed without melds
    (the best layout is laid out); the knocker may add its own.
    """
    actions = _plays(state, seat) if state.turn == seat else []
    if state.seats and state.seats[seat]["kind"] == "human":
        if state.phase == WAITING:
            actions.append({"type": "abort"})
        elif state.phase in PLAYING:
            actions.append({"type": "resign"})
            if now is not None and state.turn == 1 - seat:
                due = deadline(state)
                if due is not None and now >= due and state.seats[1 - seat]["kind"] == "human":
                    actions.append({"type": "claim_timeout"})
    return actions


def plays(state: State, seat: int) -> list[dict[str, Any]]:
    """The seat's legal plays of the cards (no resign, abort or timeout claim)."""
    return _plays(state, seat) if state.turn == seat else []


def _plays(state: State, seat: int) -> list[dict[str, Any]]:
    phase = state.phase
    if phase == UPCARD_OFFER:
        return [{"type": "draw", "source": "discard"}, {"type": "pass"}]
    if phase == DRAW:
        if state.stock_only:
            return [{"type": "draw", "source": "stock"}]
        return [{"type": "draw", "source": "stock"}, {"type": "draw", "source": "discard"}]
    if phase == DISCARD:
        return _discard_actions(state, seat)
    if phase == DEFENSE:
        assert state.knock is not None  # the defense step follows a knock
        suggestion = best_defense(state.knock["melds"], state.hands[seat]).to_json()
        return [{"type": "defend", "melds": suggestion["melds"], "layoffs": suggestion["layoffs"]}]
    return []


def _discard_actions(state: State, seat: int) -> list[dict[str, Any]]:
    hand = state.hands[seat]
    assert state.rules is not None  # a hand was dealt: the match has started
    limit = state.knock_limit
    taken = state.taken_from_discard
    ordered = sorted(hand, key=CARD_INDEX.__getitem__)
    actions = [{"type": "discard", "card": card} for card in ordered if card != taken]
    mask = 0
    for card in hand:
        mask |= 1 << CARD_INDEX[card]
    # Discarding c leaves at least deadwood(all 11) - value(c): adding c back as
    # deadwood to the best 10-card arrangement gives an 11-card one.  So most hands
    # are ruled out of knocking by one search instead of eleven.
    eleven = deadwood_of_mask(mask)
    if eleven - 10 > limit:
        return actions
    big_gin = eleven == 0 and state.rules.big_gin_bonus is not None
    for card in ordered:
        if card == taken or eleven - CARD_VALUE[card] > limit:
            continue
        left = deadwood_of_mask(mask & ~(1 << CARD_INDEX[card]))
        if left <= limit:
            # Without melds: the knock lays out the best layout against the defender's
            # hand, which no suggestion listed here could know.
            actions.append({"type": "gin" if left == 0 else "knock", "card": card})
    if big_gin:
        actions.append({"type": "big_gin"})
    return actions

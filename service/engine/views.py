"""What one seat may see: its view of the table and its redacted events.

A seat sees its own hand, the whole discard pile, the cards the opponent took from
the discard pile (while the opponent still holds them), counts of everything else,
the knocker's laid-out melds, scores and its legal actions.  It never sees the
stock order, a card the opponent drew from the stock, or the opponent's hand
before the hand is over; ``hand_ended`` then reveals the deck and the salt.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from .cards import CARD_INDEX
from .game import DEFENSE, DISCARD, State, deadline, legal_actions
from .melds import best_melds, discard_deadwoods
from .rules import doubled


def seat_view(state: State, seat: int, now: datetime | None = None) -> dict[str, Any]:
    """The JSON view of ``state`` for ``seat`` (0 or 1).  ``now``, when given, is the
    time a timeout claim is judged against (see ``legal_actions``)."""
    opponent = 1 - seat
    hand = sorted(state.hands[seat], key=CARD_INDEX.__getitem__)
    arrangement = best_melds(hand)
    playing = state.phase in (DISCARD, DEFENSE) or state.turn is not None
    return {
        "seat": seat,
        "version": state.version,
        "phase": state.phase,
        "turn": state.turn,
        "hand_number": state.hand_number,
        "starter": state.starter,
        "rules": state.rules.to_json(complete=True) if state.rules else None,
        "scores": list(state.scores),
        # This hand's knock limit (under Oklahoma its first upcard's value), and whether
        # its score is doubled (Oklahoma's spade upcard).
        "knock_limit": state.knock_limit if state.rules else None,
        "doubled": bool(state.rules and doubled(state.rules, state.upcard)),
        "hands_won": list(state.hands_won),
        # Under Hollywood scoring: its three games so far.
        "games": list(state.games) if state.games else None,
        # A match won on the scores under match bonuses: each game's totals.
        "settlement": state.settlement,
        "winner": state.winner,
        "end_reason": state.end_reason,
        # Under a clock: when the seat to act runs out of time (both seats see it).
        "deadline": due.isoformat(timespec="milliseconds") if (due := deadline(state)) is not None else None,
        "hand": hand,
        "melds": [list(m) for m in arrangement.melds],
        "deadwood_cards": list(arrangement.unmelded),
        "deadwood": arrangement.deadwood,
        "discard_pile": list(state.discard_pile),
        "stock_count": state.stock_count,
        # The card this seat took from the discard pile this turn: it may not go back.
        "no_return": state.taken_from_discard if state.turn == seat and playing else None,
        "opponent": {
            "card_count": len(state.hands[opponent]),
            "known_cards": sorted(state.known[opponent], key=CARD_INDEX.__getitem__),
        },
        # In the seat's discard step: the deadwood left by each possible discard.
        "discard_deadwood": discard_deadwoods(state.hands[seat]) if state.phase == DISCARD and state.turn == seat else None,
        "commitment": state.commitment,
        "knock": state.knock if state.phase == DEFENSE else None,
        "last_hand": state.last_hand,
        "legal_actions": legal_actions(state, seat, now),
    }


def redact_event(event: Mapping[str, Any], seat: int | None) -> dict[str, Any]:
    """An event as ``seat`` may see it; ``seat=None`` (the operator) sees all.  A seat
    sees neither the deck nor the other seat's stock draws, nor a computer's seed, nor
    what a hint shown to the other seat said.

    ``event`` is ``{"type", "data", ...}``; other keys (seq, recorded_at) pass through.
    """
    if seat is None:
        return dict(event)
    etype, data = event["type"], event["data"]
    if etype == "hand_dealt":
        deck = data["deck"]
        own = deck[0:10] if data["starter"] == seat else deck[10:20]
        data = {
            "hand": data["hand"],
            "starter": data["starter"],
            "commitment": data["commitment"],
            "cards": list(own),
            "upcard": deck[20],
        }
    elif etype == "card_drawn" and data["source"] == "stock" and data["seat"] != seat:
        data = {k: v for k, v in data.items() if k != "card"}
    elif etype == "hint_shown" and data["seat"] != seat:
        # The hint would tell the other seat about the hand it was given for.
        data = {"seat": data["seat"]}
    elif etype == "match_started" and any("seed" in s for s in data["seats"]):
        # A computer's seed would let its opponent foresee its random choices; the
        # record of a finished match holds it, for checking the computer's moves.
        data = {**data, "seats": [{k: v for k, v in s.items() if k != "seed"} for s in data["seats"]]}
    else:
        return dict(event)
    return {**event, "data": data}


def hand_history(events: Iterable[Mapping[str, Any]], state: State, seat: int) -> list[dict[str, Any]]:
    """What ``seat`` has seen of the hand being played in ``state``: the events of
    ``events`` (each ``{"seq", "type", "data"}``, in order; other keys are left out) that
    belong to it -- after the hand's first version, up to the state's -- redacted for
    the seat.  It is what the computer decides from, what a hint and an analysis weigh,
    and what an import checks the computer's moves against."""
    first, last = state.hand_start_version, state.version
    return [
        redact_event({"seq": e["seq"], "type": e["type"], "data": e["data"]}, seat)
        for e in events
        if first < e["seq"] <= last
    ]

"""``evolve(state, event) -> state``: record the facts an event states.

No rule is checked here (``decide`` did that before the event was written), so folding
a stored stream never needs a rule check, a clock or a random generator.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from .rules import rules_from_json
from .scoring import new_games
from .state import AWAITING_DEAL, DEFENSE, DISCARD, DRAW, MATCH_OVER, UPCARD_OFFER, WAITING, Event, State

T = TypeVar("T")

#: An event as ``fold`` takes it: an ``Event``, a (type, data) pair, or a stored
#: event's mapping with ``type`` and ``data``.
EventLike = Event | tuple[str, dict[str, Any]] | Mapping[str, Any]


def _with_seat(pair: tuple[T, ...], seat: int, value: T) -> tuple[T, T]:
    return (value, pair[1]) if seat == 0 else (pair[0], value)


def _on_match_started(s: State, d: dict[str, Any]) -> None:
    s.rules = rules_from_json(d["rules"])
    if s.rules.hollywood:
        s.games = new_games()
    s.seats = tuple(d["seats"])
    s.phase = WAITING if any(seat["kind"] == "open" for seat in s.seats) else AWAITING_DEAL


def _on_seat_joined(s: State, d: dict[str, Any]) -> None:
    seat = d["seat"]
    taken = {"name": d["name"], "kind": "human"}
    if "player" in d:
        taken["player"] = d["player"]
    s.seats = _with_seat(s.seats, seat, taken)
    if not any(x["kind"] == "open" for x in s.seats):
        s.phase = AWAITING_DEAL


def _on_hand_dealt(s: State, d: dict[str, Any]) -> None:
    deck = tuple(d["deck"])
    starter = d["starter"]
    s.hand_number = d["hand"]
    s.starter = starter
    s.turn = starter
    s.deck = deck
    s.commitment = d["commitment"]
    s.salt = d["salt"]
    first, second = deck[0:10], deck[10:20]
    s.hands = (first, second) if starter == 0 else (second, first)
    s.discard_pile = (deck[20],)
    s.stock_pos = 21
    s.taken_from_discard = None
    s.stock_only = False
    s.known = (frozenset(), frozenset())
    s.knock = None
    s.defense = None
    assert s.rules is not None  # match_started comes before any deal
    s.phase = UPCARD_OFFER if s.rules.upcard_offer else DRAW
    s.hand_start_version = s.version - 1  # the version just before this deal


def _on_upcard_passed(s: State, d: dict[str, Any]) -> None:
    seat = d["seat"]
    if seat == s.starter:
        s.turn = 1 - seat
    else:
        s.turn = s.starter
        s.phase = DRAW
        s.stock_only = True


def _on_card_drawn(s: State, d: dict[str, Any]) -> None:
    seat, card = d["seat"], d["card"]
    first, second = s.hands
    s.hands = (first + (card,), second) if seat == 0 else (first, second + (card,))
    if d["source"] == "discard":
        s.discard_pile = s.discard_pile[:-1]
        s.taken_from_discard = card
        s.known = _with_seat(s.known, seat, s.known[seat] | {card})
    else:
        s.stock_pos += 1
        s.taken_from_discard = None
    s.stock_only = False
    s.turn = seat
    s.phase = DISCARD


def _discard(s: State, seat: int, card: str) -> None:
    hand = s.hands[seat]
    i = hand.index(card)
    hand = hand[:i] + hand[i + 1 :]
    s.hands = (hand, s.hands[1]) if seat == 0 else (s.hands[0], hand)
    s.discard_pile += (card,)
    if card in s.known[seat]:
        s.known = _with_seat(s.known, seat, s.known[seat] - {card})
    s.taken_from_discard = None


def _on_card_discarded(s: State, d: dict[str, Any]) -> None:
    seat = d["seat"]
    _discard(s, seat, d["card"])
    s.turn = 1 - seat
    s.phase = DRAW


def _on_knocked(s: State, d: dict[str, Any]) -> None:
    seat = d["seat"]
    if d.get("big_gin"):  # all eleven cards laid down, none discarded
        s.taken_from_discard = None
    else:
        _discard(s, seat, d["card"])
    s.knock = d
    s.turn = 1 - seat
    s.phase = DEFENSE


def _on_defended(s: State, d: dict[str, Any]) -> None:
    s.defense = d
    s.turn = None


def _on_hand_ended(s: State, d: dict[str, Any]) -> None:
    s.scores = tuple(d["scores"])
    winner = d["winner"]
    if winner is not None:
        s.hands_won = _with_seat(s.hands_won, winner, s.hands_won[winner] + 1)
    if "games" in d:
        s.games = tuple(d["games"])
    s.last_hand = {
        "hand": d["hand"],
        "result": d["result"],
        "winner": d["winner"],
        "points": d["points"],
        # Oklahoma's spade upcard doubled the points.
        "doubled": bool(d.get("doubled")),
        "knock": s.knock,
        "defense": s.defense,
        "hands": [list(h) for h in s.hands],
    }
    s.turn = None
    s.phase = AWAITING_DEAL


def _on_hint_shown(s: State, d: dict[str, Any]) -> None:
    """A hint changes nothing in the play (only the version)."""


def _on_match_ended(s: State, d: dict[str, Any]) -> None:
    s.winner = d["winner"]
    s.scores = tuple(d["scores"])
    s.end_reason = d["reason"]
    if "totals" in d:
        s.settlement = {"games": d["games"], "totals": d["totals"]}
    s.turn = None
    s.phase = MATCH_OVER


EVOLVERS = {
    "match_started": _on_match_started,
    "seat_joined": _on_seat_joined,
    "hand_dealt": _on_hand_dealt,
    "upcard_passed": _on_upcard_passed,
    "card_drawn": _on_card_drawn,
    "card_discarded": _on_card_discarded,
    "knocked": _on_knocked,
    "defended": _on_defended,
    "hand_ended": _on_hand_ended,
    "match_ended": _on_match_ended,
    "hint_shown": _on_hint_shown,
}


def evolve(state: State, event: Event | Mapping[str, Any]) -> State:
    """The state after one more event.  ``state`` itself is left unchanged."""
    if isinstance(event, Event):
        etype, data = event
    else:
        etype, data = event["type"], event["data"]
    return fold([(etype, data)], state)


def fold(events: Iterable[EventLike], state: State | None = None) -> State:
    """Fold a stream of events (from the start, or onto ``state``, left unchanged).

    One copy serves the whole stream: the evolvers replace fields, never mutate the
    tuples they hold, so nothing is shared with ``state`` that could change under it.
    """
    new = state.copy() if state is not None else State()
    evolvers = EVOLVERS
    version = new.version
    etype: str
    data: dict[str, Any]
    for event in events:
        # Events from the engine are (type, data) tuples; stored ones may be dicts.
        # The ignore: mypy does not narrow on ``type(event) in`` (kept: the quickest test).
        etype, data = event if type(event) in (Event, tuple) else (event["type"], event["data"])  # type: ignore[call-overload, assignment]
        new.version = version = version + 1
        turn = new.turn
        evolvers[etype](new, data)
        at = data.get("at")
        if at is not None:  # a clocked match: the turn's clock starts when it changes hands
            new.last_at = at
            if new.turn != turn:
                new.turn_since = at
    return new

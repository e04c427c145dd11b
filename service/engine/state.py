"""A match's state: the facts folded from its events, and the phases it goes through.

``State`` holds what the events say; ``evolve`` (in ``evolvers``) copies it and records
one more.  A snapshot is its JSON image (``to_json``), read back exactly (``from_json``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .rules import Rules, hand_knock_limit, rules_from_json

SEATS = (0, 1)


class Event(NamedTuple):
    """A fact: its type (past tense, snake_case) and its JSON data."""

    type: str
    data: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "data": self.data}


# Phases of a match.
NEW = "new"  # no match_started yet
WAITING = "waiting_for_players"  # a seat is open: no hand is dealt until it is taken
AWAITING_DEAL = "awaiting_deal"  # the service deals next
UPCARD_OFFER = "upcard_offer"
DRAW = "draw"
DISCARD = "discard"
DEFENSE = "defense"
MATCH_OVER = "match_over"
#: While a match is being played (a player may resign; a clock may run).
PLAYING = frozenset({AWAITING_DEAL, UPCARD_OFFER, DRAW, DISCARD, DEFENSE})

#: How a match ended (``match_ended``'s ``reason``): the scores decided it (a total
#: reached the target, or the single hand was played), a seat resigned, a seat's clock
#: ran out and the other claimed the match, or it was called off before it began.
END_REASONS = ("score", "resigned", "timeout", "aborted")


class State:
    """A match as folded from its events.  Treat as immutable: ``evolve`` copies."""

    # A plain __dict__ (not __slots__) so that copying a state is one dict copy:
    # evolve copies on every event, and folding a long match must stay cheap.

    def __init__(self) -> None:
        self.version = 0
        self.rules: Rules | None = None
        self.seats: tuple[dict[str, Any], ...] = ()
        self.phase = NEW
        self.hand_number = 0
        self.starter: int | None = None
        self.turn: int | None = None
        self.deck: tuple[str, ...] = ()
        self.commitment: str | None = None
        self.salt = ""
        self.hands: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        self.stock_pos = 21
        self.discard_pile: tuple[str, ...] = ()
        self.taken_from_discard: str | None = None
        self.stock_only = False
        self.known: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
        self.knock: dict[str, Any] | None = None
        self.defense: dict[str, Any] | None = None
        self.scores: tuple[int, int] = (0, 0)
        #: Hands each seat has won in the match (a dead hand nobody won).
        self.hands_won: tuple[int, int] = (0, 0)
        #: Under Hollywood scoring, its three games (see ``scoring``); else empty.
        self.games: tuple[dict[str, Any], ...] = ()
        #: A match ended on the scores under match bonuses: its games settled and the
        #: totals (``match_ended``'s ``games`` and ``totals``).
        self.settlement: dict[str, Any] | None = None
        self.last_hand: dict[str, Any] | None = None
        self.winner: int | None = None
        self.end_reason: str | None = None
        self.hand_start_version = 0
        # Under a clock: the time of the last event, and of the one that gave the turn.
        self.last_at: str | None = None
        self.turn_since: str | None = None

    def copy(self) -> State:
        new = object.__new__(State)
        new.__dict__.update(self.__dict__)
        return new

    @property
    def stock_count(self) -> int:
        return len(self.deck) - self.stock_pos if self.deck else 0

    @property
    def stock(self) -> tuple[str, ...]:
        return self.deck[self.stock_pos :]

    @property
    def upcard(self) -> str | None:
        """The hand's first upcard (``deck[20]``), once a hand is dealt."""
        return self.deck[20] if self.deck else None

    @property
    def knock_limit(self) -> int:
        """The most deadwood a seat may knock with in this hand (see ``hand_knock_limit``)."""
        assert self.rules is not None  # a hand was dealt: the match has started
        return hand_knock_limit(self.rules, self.upcard)

    @property
    def finished(self) -> bool:
        return self.phase == MATCH_OVER

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self.__dict__ == other.__dict__

    def __repr__(self) -> str:
        return (
            f"State(version={self.version}, phase={self.phase!r}, hand={self.hand_number}, "
            f"turn={self.turn}, scores={self.scores})"
        )

    # Snapshots: a JSON image of the state, read back exactly.
    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in self.__dict__.items():
            if name == "rules":
                value = value.to_json() if value else None
            elif name == "known":
                value = [sorted(k) for k in value]
            elif isinstance(value, tuple):
                value = _lists(value)
            out[name] = value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> State:
        state = cls()
        for name in FIELDS:
            value = data[name]
            if name == "rules":
                value = rules_from_json(value) if value else None
            elif name == "known":
                value = tuple(frozenset(k) for k in value)
            elif name in ("seats",):
                value = tuple(value)
            elif isinstance(value, list):
                value = _tuples(value)
            setattr(state, name, value)
        return state


FIELDS = tuple(State().__dict__)


def _lists(value: tuple[object, ...]) -> list[object]:
    return [_lists(v) if isinstance(v, tuple) else v for v in value]


def _tuples(value: list[object]) -> tuple[object, ...]:
    return tuple(_tuples(v) if isinstance(v, list) else v for v in value)

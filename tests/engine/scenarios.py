"""Building hands to order: a deck that deals chosen cards, and a table to play them on."""

from __future__ import annotations

from service.engine import DECK, State, decide, fold


def stacked_deck(starter: list[str], other: list[str], upcard: str, stock_top: list[str] = ()) -> list[str]:
    """A 52-card deck dealing ``starter`` and ``other`` their hands, ``upcard`` face up,
    and ``stock_top`` as the first cards of the stock; the rest follow in index order."""
    head = list(starter) + list(other) + [upcard] + list(stock_top)
    assert len(starter) == 10 and len(other) == 10 and len(set(head)) == len(head), head
    return head + [c for c in DECK if c not in head]


class Table:
    """A match driven command by command, keeping every event."""

    def __init__(self, rules: dict | None = None):
        self.events = decide(State(), {"type": "start_match", "rules": rules or {}})
        self.state = fold(self.events)

    def do(self, command: dict) -> list:
        new = decide(self.state, command)
        self.state = fold(new, self.state)
        self.events += new
        return new

    def deal(self, starter: list[str], other: list[str], upcard: str, stock_top: list[str] = ()) -> list:
        return self.do({"type": "deal", "deck": stacked_deck(starter, other, upcard, stock_top), "salt": "5a17"})

    def seat(self, seat: int, type: str, **fields) -> list:
        return self.do({"type": type, "seat": seat, **fields})

    def types(self, events: list) -> list[str]:
        return [e.type for e in events]

"""What every level needs: the legal actions sorted by kind, and a few hand measures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from service.engine.cards import CARD_INDEX

from .handeval import Deadwood
from .knowledge import VALUE, Knowledge


class Options:
    """The legal actions by kind; discards, knocks and Gins keyed by card index, and
    Big Gin (no card: all eleven cards laid down) apart."""

    def __init__(self, actions: Sequence[dict[str, Any]]):
        self.take: dict | None = None
        self.stock: dict | None = None
        self.pass_: dict | None = None
        self.discards: dict[int, dict] = {}
        self.knocks: dict[int, dict] = {}
        self.gins: dict[int, dict] = {}
        self.big_gin: dict | None = None
        for a in actions:
            kind = a["type"]
            if kind == "draw":
                if a["source"] == "discard":
                    self.take = a
                else:
                    self.stock = a
            elif kind == "pass":
                self.pass_ = a
            elif kind == "big_gin":
                self.big_gin = a
            elif kind in ("discard", "knock", "gin"):
                {"discard": self.discards, "knock": self.knocks, "gin": self.gins}[kind][CARD_INDEX[a["card"]]] = a

    @property
    def can_gin(self) -> bool:
        return bool(self.gins) or self.big_gin is not None

    @property
    def decline(self) -> dict:
        """Not taking the top card: drawing from the stock, or passing the upcard (asked
        for only when the top card may be taken)."""
        decline = self.stock or self.pass_
        assert decline is not None, "where the top card may be taken, a stock draw or a pass is legal too"
        return decline


def take_melds(dw: Deadwood, know: Knowledge) -> bool:
    """Whether the top card would sit in a meld after taking it and discarding well."""
    top = know.top
    if top is None:
        return False
    bit = 1 << top
    after, _ = dw.best_discard(know.hand | bit, keep=bit)
    return after < dw(know.hand) and dw(know.hand | bit) < dw(know.hand) + VALUE[top]


def lowest_knock(dw: Deadwood, know: Knowledge, enders: dict[int, dict]) -> dict:
    """The knock (or Gin) that leaves the least deadwood."""
    return min(enders.items(), key=lambda kv: (dw(know.hand & ~(1 << kv[0])), kv[0]))[1]


def gin_ending(dw: Deadwood, know: Knowledge, options: Options) -> dict | None:
    """The better way to go Gin, when there is one: Big Gin (all eleven cards down,
    scoring the defender's deadwood and ``big_gin_bonus``) or Gin with a discard (the
    same deadwood and ``gin_bonus``): the larger bonus, Big Gin on a tie."""
    if options.big_gin is not None:
        big = know.rules.get("big_gin_bonus")
        if not options.gins or (big is not None and big >= know.rules["gin_bonus"]):
            return options.big_gin
    if options.gins:
        return lowest_knock(dw, know, options.gins)
    return None

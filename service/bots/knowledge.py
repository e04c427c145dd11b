"""What a seat knows, read from its view and its redacted history: cards as 52-bit masks.

Everything here comes from the two inputs a bot receives, so nothing hidden can leak
in.  The history adds what the view forgets: which cards the opponent threw (and
whether it had just drawn from the stock), which it took from the pile, and which
top cards it declined by drawing from the stock or passing the upcard.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from service.engine.cards import CARD_INDEX, RANK_VALUES
from service.engine.rules import Rules, doubled, hand_knock_limit

ALL_CARDS = (1 << 52) - 1
#: Deadwood value of each card index.
VALUE = tuple(RANK_VALUES[i % 13] for i in range(52))


def mask_of(cards) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << CARD_INDEX[c]
    return mask


def indices(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


@dataclass
class Knowledge:
    seat: int
    phase: str
    rules: Mapping[str, Any]
    hand: int  # mask of the seat's cards (10, or 11 in the discard step)
    pile: list[int]  # the discard pile, bottom first, as card indices
    stock_count: int
    opp_count: int
    opp_known: int  # cards the opponent surely holds (taken from the pile)
    no_return: int | None
    scores: tuple[int, int]
    #: The opponent's discards in order, each with the source of the draw just before it.
    opp_discards: list[tuple[int, str]] = field(default_factory=list)
    #: Every card the opponent took from the pile this hand (some may be gone again).
    opp_taken: list[int] = field(default_factory=list)
    #: Top cards the opponent could have taken but did not (it drew from the stock or passed).
    opp_declined: list[int] = field(default_factory=list)
    opp_draws: int = 0
    #: The hand's first upcard (public: the deal shows it), which under Oklahoma sets
    #: the hand's knock limit and (a spade) doubles its score.
    upcard: str | None = None
    #: The hand's knock limit as the view states it (None: not stated).
    view_limit: int | None = None

    @property
    def pile_mask(self) -> int:
        return mask_of_indices(self.pile)

    @property
    def top(self) -> int | None:
        return self.pile[-1] if self.pile else None

    @property
    def unseen(self) -> int:
        """Cards this seat has not seen: in the stock or among the opponent's unknown cards."""
        return ALL_CARDS & ~self.hand & ~self.pile_mask & ~self.opp_known

    @property
    def opp_unknown(self) -> int:
        """How many of the opponent's cards this seat cannot name."""
        return max(self.opp_count - self.opp_known.bit_count(), 0)

    @property
    def knock_limit(self) -> int:
        """The most deadwood a knock may have in this hand: the rules' ``knock_limit``,
        or under Oklahoma the first upcard's value (an ace: 0, Gin only)."""
        if self.upcard is not None:
            return hand_knock_limit(rules_of(self.rules), self.upcard)
        if self.view_limit is not None:
            return self.view_limit
        return self.rules["knock_limit"]

    @property
    def doubled(self) -> bool:
        """Whether this hand's score counts double (Oklahoma's spade upcard)."""
        return self.upcard is not None and doubled(rules_of(self.rules), self.upcard)

    @property
    def multiplier(self) -> int:
        return 2 if self.doubled else 1

    @property
    def opp_took_count(self) -> int:
        return len(self.opp_taken)


_RULE_FIELDS = frozenset(f.name for f in fields(Rules))


def rules_of(rules: Mapping[str, Any]) -> Rules:
    """The rules of a view (complete) as the engine's ``Rules``; parameters a view of
    older rules lacks take their defaults."""
    return Rules(**{k: v for k, v in rules.items() if k in _RULE_FIELDS})


def mask_of_indices(idx: Sequence[int]) -> int:
    mask = 0
    for i in idx:
        mask |= 1 << i
    return mask


def read(view: Mapping[str, Any], history: Sequence[Mapping[str, Any]]) -> Knowledge:
    seat = view["seat"]
    opponent = view.get("opponent") or {}
    know = Knowledge(
        seat=seat,
        phase=view["phase"],
        rules=view["rules"],
        hand=mask_of(view["hand"]),
        pile=[CARD_INDEX[c] for c in view["discard_pile"]],
        stock_count=view["stock_count"],
        opp_count=opponent.get("card_count", 10),
        opp_known=mask_of(opponent.get("known_cards", ())),
        no_return=CARD_INDEX[view["no_return"]] if view.get("no_return") else None,
        scores=tuple(view.get("scores") or (0, 0)),
        view_limit=view.get("knock_limit"),
    )
    _read_history(know, history)
    return know


def _read_history(know: Knowledge, history: Sequence[Mapping[str, Any]]) -> None:
    """Replay the hand's events: the pile as it was at each draw tells what was declined."""
    seat = know.seat
    pile: list[int] = []
    last_source = {0: "stock", 1: "stock"}
    for event in history:
        etype, data = event["type"], event["data"]
        if etype == "hand_dealt":
            pile = [CARD_INDEX[data["upcard"]]]
            know.upcard = data["upcard"]
            know.opp_discards.clear()
            know.opp_taken.clear()
            know.opp_declined.clear()
            know.opp_draws = 0
        elif etype == "upcard_passed":
            if data["seat"] != seat and pile:
                know.opp_declined.append(pile[-1])
        elif etype == "card_drawn":
            mine = data["seat"] == seat
            last_source[data["seat"]] = data["source"]
            if not mine:
                know.opp_draws += 1
            if data["source"] == "discard":
                card = pile.pop() if pile else CARD_INDEX[data["card"]]
                if not mine:
                    know.opp_taken.append(card)
            elif not mine and pile:
                know.opp_declined.append(pile[-1])
        elif etype in ("card_discarded", "knocked"):
            if data.get("big_gin"):
                continue  # all eleven cards laid down, none thrown
            card = CARD_INDEX[data["card"]]
            pile.append(card)
            if data["seat"] != seat:
                know.opp_discards.append((card, last_source[data["seat"]]))

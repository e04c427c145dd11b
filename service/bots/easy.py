"""easy: a beginner.  Legal and plausible, with the mistakes beginners make.

- It grabs a top card that melds, and also, half the time, one that merely pairs a
  held rank.
- It never breaks a meld, but among its loose cards it likes picture cards ("they
  might make a set"): it sees a J, Q or K as worth 5, so it keeps them too long.
- It knocks only with 4 or less (it waits for a great hand) until the stock runs
  low, and then knocks with anything it may, never fearing an undercut.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from .common import Options, gin_ending, lowest_knock, take_melds
from .handeval import Deadwood
from .knowledge import VALUE, Knowledge

PICTURE_LOOKS_LIKE = 5
PATIENT_KNOCK = 4
LATE_STOCK = 10


def play(view: Mapping[str, Any], know: Knowledge, rng: random.Random) -> dict:
    options = Options(view["legal_actions"])
    dw = Deadwood()
    if options.take is not None:
        return options.take if _wants_top(dw, know, rng) else options.decline
    gin = gin_ending(dw, know, options)
    if gin is not None:
        return gin
    if options.knocks and (
        know.stock_count <= LATE_STOCK or min(dw(know.hand & ~(1 << c)) for c in options.knocks) <= PATIENT_KNOCK
    ):
        return lowest_knock(dw, know, options.knocks)
    return options.discards[_discard(dw, know, options, rng)]


def _wants_top(dw: Deadwood, know: Knowledge, rng: random.Random) -> bool:
    top = know.top
    assert top is not None, "asked only when the top card may be taken: the pile has one"
    if take_melds(dw, know):
        return True
    same_rank = any((know.hand >> (s * 13 + top % 13)) & 1 for s in range(4))
    return same_rank and rng.random() < 0.5


def _discard(dw: Deadwood, know: Knowledge, options: Options, rng: random.Random) -> int:
    """The loose card that looks least useful, seen through a beginner's eyes."""
    hand = know.hand
    now = dw(hand)
    candidates = list(options.discards)
    # Loose cards: throwing one lowers the count by its full value (no meld is broken).
    loose = [c for c in candidates if dw(hand & ~(1 << c)) == now - VALUE[c]] or candidates

    def looks(c: int) -> float:
        value = PICTURE_LOOKS_LIKE if c % 13 >= 10 else VALUE[c]
        return value + rng.uniform(-2.0, 2.0)

    return max(loose, key=looks)

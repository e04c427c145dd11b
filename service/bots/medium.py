"""medium: the seeds' strategy sections, played soundly and without lookahead.

- Take the top card only when it helps: when it melds at once.
- Throw high deadwood early: a discard is scored by the deadwood it leaves.
- Keep two-way cards: each live card that would make a meld with a loose card counts
  in the hand's favour (partners already in the pile count for nothing).
- Watch the pile: do not hand the opponent neighbours of a card it took; a rank it
  threw is fairly safe to throw back.
- Knock early (as soon as the count allows), grow careful late: once the stock runs
  low it knocks only with 6 or less, and with 3 or less if the opponent has been
  taking from the pile.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from service.engine.cards import CARD_INDEX

from .common import Options, gin_ending, lowest_knock, take_melds
from .handeval import NEAR, Deadwood
from .knowledge import Knowledge

LATE_STOCK = 15
LATE_KNOCK, WARY_KNOCK = 6, 3
OUT_WORTH_EARLY, OUT_WORTH_LATE = 1.5, 0.6
FEED_PENALTY, THROWN_BACK_BONUS = 4.0, 1.5


def play(view: Mapping[str, Any], know: Knowledge, rng: random.Random) -> dict:
    options = Options(view["legal_actions"])
    dw = Deadwood()
    if options.take is not None:
        return options.take if take_melds(dw, know) else options.decline
    gin = gin_ending(dw, know, options)
    if gin is not None:
        return gin
    if options.knocks:
        knock = lowest_knock(dw, know, options.knocks)
        if dw(know.hand & ~(1 << CARD_INDEX[knock["card"]])) <= knock_threshold(know):
            return knock
    return options.discards[_discard(dw, know, options)]


def knock_threshold(know: Knowledge) -> int:
    limit = know.knock_limit
    if know.stock_count > LATE_STOCK:
        return limit
    if know.opp_took_count >= 2:
        return min(limit, WARY_KNOCK)
    return min(limit, LATE_KNOCK)


def live_outs(dw: Deadwood, hand: int, live: int) -> int:
    """Live cards that would make a meld with two held cards, at least one of them loose."""
    return (live & _meld_spots(hand, dw.loose(hand))).bit_count()


# Card index = suit * 13 + rank: the ranks where a run's other two cards are in the suit.
_RANKS = [sum(1 << (suit * 13 + rank) for suit in range(4) for rank in ranks) for ranks in (
    range(0, 11), range(1, 12), range(2, 13),
)]
BELOW_TWO, BETWEEN, ABOVE_TWO = _RANKS  # u+1 and u+2; u-1 and u+1; u-2 and u-1
RANK_OF_SUITS = [sum(1 << (suit * 13 + rank) for suit in range(4)) for rank in range(13)]


def _meld_spots(hand: int, loose: int) -> int:
    """Every card that makes a meld with two held cards of which at least one is loose:
    a set with two of its rank, or a run with the two above it, the two beside it or the
    two below it in its suit (the bits of each kind at once, shifted).  ``loose`` is a
    part of ``hand``."""
    runs = (
        (hand >> 1) & (hand >> 2) & ((loose >> 1) | (loose >> 2)) & BELOW_TWO
        | (hand << 1) & (hand >> 1) & ((loose << 1) | (loose >> 1)) & BETWEEN
        | (hand << 2) & (hand << 1) & ((loose << 2) | (loose << 1)) & ABOVE_TWO
    )
    sets = 0
    for same in RANK_OF_SUITS:
        if (hand & same).bit_count() >= 2 and loose & same:
            sets |= same
    return (runs | sets) & ~hand


def _discard(dw: Deadwood, know: Knowledge, options: Options) -> int:
    live = know.unseen
    late = know.stock_count <= LATE_STOCK
    out_worth = OUT_WORTH_LATE if late else OUT_WORTH_EARLY
    wanted = 0
    for t in know.opp_taken:
        if (know.opp_known >> t) & 1:
            wanted |= NEAR[t]
    thrown_ranks = {d % 13 for d, _ in know.opp_discards}

    def score(x: int) -> tuple[float, int]:
        rest = know.hand & ~(1 << x)
        s = dw(rest) - out_worth * live_outs(dw, rest, live)
        if (wanted >> x) & 1:
            s += FEED_PENALTY
        if x % 13 in thrown_ranks:
            s -= THROWN_BACK_BONUS
        return s, x

    return min(options.discards, key=score)

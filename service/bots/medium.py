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
from .knowledge import VALUE, Knowledge, indices

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
    now = dw(hand)
    loose = 0
    for c in indices(hand):
        if dw(hand & ~(1 << c)) == now - VALUE[c]:
            loose |= 1 << c
    outs = 0
    for u in indices(live & _reach(loose)):
        if _melds_with(u, hand, loose):
            outs += 1
    return outs


def _reach(cards: int) -> int:
    reach = 0
    for c in indices(cards):
        reach |= NEAR[c]
    return reach


def _melds_with(u: int, hand: int, loose: int) -> bool:
    rank, base = u % 13, u - u % 13
    same_rank = [s * 13 + rank for s in range(4) if (hand >> (s * 13 + rank)) & 1]
    if len(same_rank) >= 2 and any((loose >> c) & 1 for c in same_rank):
        return True
    for a, b in ((-2, -1), (-1, 1), (1, 2)):
        if 0 <= rank + a and rank + b < 13:
            ca, cb = base + rank + a, base + rank + b
            if (hand >> ca) & 1 and (hand >> cb) & 1 and ((loose >> ca) & 1 or (loose >> cb) & 1):
                return True
    return False


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

"""What the opponent probably holds, inferred from what it took, threw and declined.

Every unseen card starts equally likely to be in the opponent's hand (the rest of the
unseen cards are the stock).  Evidence tilts the odds:

- a card it took from the pile was wanted: its rank and its suit neighbours are
  likelier in its hand;
- a card it threw was not: a player holding its rank or a suit neighbour would have
  kept it, so those are less likely (more so when it had just drawn from the stock
  and chose to throw this card);
- a top card it declined would have made a meld with two held cards: the pairs that
  complete it are less likely.

The odds are then scaled so that they add up to the number of unknown cards it holds.
Hands are sampled from these odds, with a twist: a player keeps the cards that fit
and throws the rest, so a sample draws a few cards more than it needs and keeps the
best-fitting ones.
"""

from __future__ import annotations

import random

from .handeval import Deadwood
from .knowledge import Knowledge, indices

# Evidence factors (odds multipliers) for cards related to a seen event.
TAKEN_RANK, TAKEN_NEAR, TAKEN_GAP = 2.6, 2.6, 1.6
THROWN_RANK, THROWN_NEAR, THROWN_GAP = 0.55, 0.6, 0.8
DECLINED_RANK, DECLINED_NEAR = 0.8, 0.85


def _related(i: int):
    """(card, relation) for cards sharing a meld with ``i``: 'rank', 'near' (one apart), 'gap'."""
    rank, base = i % 13, i - i % 13
    for s in range(4):
        j = s * 13 + rank
        if j != i:
            yield j, "rank"
    for d, kind in ((-1, "near"), (1, "near"), (-2, "gap"), (2, "gap")):
        if 0 <= rank + d < 13:
            yield base + rank + d, kind


class OpponentModel:
    """Per-card chance that the opponent holds it: 1 for known cards, 0 for seen ones."""

    def __init__(self, know: Knowledge):
        self.know = know
        unseen = indices(know.unseen)
        self.unseen = unseen
        self.known = know.opp_known
        n_unknown = know.opp_unknown
        odds = dict.fromkeys(unseen, 1.0)
        taken_held = [t for t in know.opp_taken if (know.opp_known >> t) & 1]
        for t in taken_held:
            for j, rel in _related(t):
                if j in odds:
                    odds[j] *= TAKEN_RANK if rel == "rank" else TAKEN_NEAR if rel == "near" else TAKEN_GAP
        for d, source in know.opp_discards:
            strength = 1.0 if source == "stock" else 0.6
            for j, rel in _related(d):
                if j in odds:
                    f = THROWN_RANK if rel == "rank" else THROWN_NEAR if rel == "near" else THROWN_GAP
                    odds[j] *= 1 - (1 - f) * strength
        for c in know.opp_declined:
            for j, rel in _related(c):
                if j in odds and rel != "gap":
                    odds[j] *= DECLINED_RANK if rel == "rank" else DECLINED_NEAR
        self.held = _scale(odds, n_unknown)
        chance = [0.0] * 52
        for i, p in self.held.items():
            chance[i] = p
        for i in indices(self.known):
            chance[i] = 1.0
        self.chance = chance
        stock = know.stock_count
        # The next stock card: each unseen card not in the opponent's hand, evenly.
        self.draws = [(u, (1.0 - self.held[u]) / stock) for u in unseen] if stock > 0 else []

    def feeds(self, card: int) -> float:
        """Chance that ``card`` would complete a meld (or lay onto one) in the opponent's hand."""
        c = self.chance
        rank, base = card % 13, card - card % 13
        others = [c[s * 13 + rank] for s in range(4) if s * 13 + rank != card]
        a, b, d = others
        p_set = a * b + a * d + b * d - 2 * a * b * d
        miss = 1.0 - p_set
        lo2 = c[base + rank - 2] if rank >= 2 else 0.0
        lo1 = c[base + rank - 1] if rank >= 1 else 0.0
        hi1 = c[base + rank + 1] if rank <= 11 else 0.0
        hi2 = c[base + rank + 2] if rank <= 10 else 0.0
        for p in (lo2 * lo1, lo1 * hi1, hi1 * hi2):
            miss *= 1.0 - p
        return 1.0 - miss

    def sample_hands(self, rng: random.Random, n: int, dw: Deadwood, extra: int) -> list[int]:
        """``n`` plausible opponent hands (masks), each keeping the best of ``extra`` more cards."""
        need = self.know.opp_unknown
        pool = self.unseen
        weights = [self.held[u] for u in pool]
        take = min(need + extra, len(pool))
        out = []
        for _ in range(n):
            # Weighted sampling without replacement: the largest random**(1/weight) keys.
            keys = sorted(((rng.random() ** (1.0 / w) if w > 0 else 0.0), u) for u, w in zip(pool, weights))
            hand = self.known
            for _, u in keys[len(keys) - take :]:
                hand |= 1 << u
            for _ in range(take - need):
                _, card = dw.best_discard(hand, keep=self.known) if hand & ~self.known else (0, -1)
                if card < 0:
                    break
                hand &= ~(1 << card)
            out.append(hand)
        return out


def _scale(odds: dict[int, float], total: int) -> dict[int, float]:
    """Chances proportional to ``odds``, adding up to ``total``, none above 0.97."""
    if not odds or total <= 0:
        return dict.fromkeys(odds, 0.0)
    if total >= len(odds):
        return dict.fromkeys(odds, 1.0)
    fixed: dict[int, float] = {}
    free = dict(odds)
    cap = 0.97
    while True:
        room = total - sum(fixed.values())
        s = sum(free.values())
        k = room / s if s > 0 else 0.0
        over = [i for i, o in free.items() if o * k > cap]
        if not over:
            return {**fixed, **{i: o * k for i, o in free.items()}}
        for i in over:
            fixed[i] = cap
            del free[i]

"""Fast hand arithmetic on 52-bit masks: deadwood, the best discard, what one draw does.

A hand is a mask with bit ``suit*13 + rank`` per card (the engine's layout).  The
engine's table of the best runs of every 13-bit suit pattern gives the deadwood of a
hand that holds no rank three times as four look-ups; and then the deadwood after
each possible discard is four look-ups too, since taking a card away never makes a
set.  Only hands holding a rank three or four times need a search over set choices,
and a decision remembers those for its length (``Deadwood``).
"""

from __future__ import annotations

from service.engine.cards import RANK_VALUES
from service.engine.melds import SUIT_DEADWOOD

SUIT_BITS = 0x1FFF
TABLE = SUIT_DEADWOOD


def _min_remove(pattern: int) -> int:
    best, rest = 1000, pattern
    while rest:
        low = rest & -rest
        rest ^= low
        best = min(best, TABLE[pattern ^ low])
    return best


#: Per 13-bit suit pattern: the least deadwood of that suit after removing one of its cards.
MIN_REMOVE = tuple(_min_remove(p) for p in range(1 << 13))


def _near(i: int) -> int:
    """Cards that can share a meld with card ``i``: its rank, and its suit within two ranks."""
    rank, base = i % 13, i - i % 13
    mask = 0
    for s in range(4):
        mask |= 1 << (s * 13 + rank)
    for d in (-2, -1, 1, 2):
        if 0 <= rank + d < 13:
            mask |= 1 << (base + rank + d)
    return mask & ~(1 << i)


NEAR = tuple(_near(i) for i in range(52))


def _triples(c: int, d: int, h: int, s: int) -> int:
    """A bit per rank held in at least three suits."""
    return (c & d & (h | s)) | (h & s & (c | d))


def _set_choices(suits: tuple[int, int, int, int], triples: int) -> list[tuple[int, int, int, int]]:
    """The suit patterns left by every choice of sets: per rank held three or four
    times, no set, the set of every suit held, or (with four) each set of three."""
    lefts = [suits]
    r = triples
    while r:
        bit = r & -r
        r ^= bit
        held = [i for i in range(4) if suits[i] & bit]
        options = [held]
        if len(held) == 4:
            options.extend([x for x in held if x != left] for left in held)
        grown = []
        for left in lefts:
            grown.append(left)
            for used in options:
                new = list(left)
                for i in used:
                    new[i] &= ~bit
                c, d, h, s = new
                grown.append((c, d, h, s))
        lefts = grown
    return lefts


def _with_sets(suits: tuple[int, int, int, int], triples: int) -> int:
    """Least deadwood when some ranks may be melded as sets."""
    return min(TABLE[a] + TABLE[b] + TABLE[c] + TABLE[d] for a, b, c, d in _set_choices(suits, triples))


def deadwood(mask: int) -> int:
    """Least deadwood of the cards in a mask (the engine's ``deadwood_of_mask``)."""
    c, d, h, s = mask & SUIT_BITS, (mask >> 13) & SUIT_BITS, (mask >> 26) & SUIT_BITS, mask >> 39
    triples = _triples(c, d, h, s)
    if not triples:
        return TABLE[c] + TABLE[d] + TABLE[h] + TABLE[s]
    return _with_sets((c, d, h, s), triples)


class Deadwood:
    """Deadwood with a memory for the slow hands, and what a discard or a draw can do."""

    __slots__ = ("cache",)

    def __init__(self) -> None:
        self.cache: dict[int, int] = {}

    def __call__(self, mask: int) -> int:
        c, d, h, s = mask & SUIT_BITS, (mask >> 13) & SUIT_BITS, (mask >> 26) & SUIT_BITS, mask >> 39
        triples = _triples(c, d, h, s)
        if not triples:
            return TABLE[c] + TABLE[d] + TABLE[h] + TABLE[s]
        value = self.cache.get(mask)
        if value is None:
            value = self.cache[mask] = _with_sets((c, d, h, s), triples)
        return value

    def loose(self, hand: int) -> int:
        """The held cards whose discard takes off their whole value: in no meld of any
        least deadwood arrangement.  Without a rank held three times each suit's look-up
        tells it (a discard never makes a set); else the deadwood is asked per discard."""
        suits = (hand & SUIT_BITS, (hand >> 13) & SUIT_BITS, (hand >> 26) & SUIT_BITS, hand >> 39)
        loose = 0
        if _triples(*suits):
            now = self(hand)
            rest = hand
            while rest:
                low = rest & -rest
                rest ^= low
                if self(hand ^ low) == now - RANK_VALUES[(low.bit_length() - 1) % 13]:
                    loose |= low
            return loose
        for i, suit in enumerate(suits):
            pattern = suit
            while pattern:
                low = pattern & -pattern
                pattern ^= low
                if TABLE[suit] - TABLE[suit ^ low] == RANK_VALUES[low.bit_length() - 1]:
                    loose |= low << (13 * i)
        return loose

    def best_discard(self, hand: int, keep: int = 0) -> tuple[int, int]:
        """The least deadwood after one discard (never a card in ``keep``), and that card."""
        best, ties = self.best_discards(hand, keep)
        return best, (ties & -ties).bit_length() - 1

    def best_discards(self, hand: int, keep: int = 0) -> tuple[int, int]:
        """The least deadwood after one discard (never a card in ``keep``), and a mask of
        every discard that leaves it.

        Per choice of sets (made on the whole hand), a discard outside those sets
        changes one suit's look-up; a set of three that loses a card is the choice
        without that set, and a set of four that loses one is another choice.
        """
        suits = (hand & SUIT_BITS, (hand >> 13) & SUIT_BITS, (hand >> 26) & SUIT_BITS, hand >> 39)
        triples = _triples(*suits)
        lefts = _set_choices(suits, triples) if triples else (suits,)
        keeps = (keep & SUIT_BITS, (keep >> 13) & SUIT_BITS, (keep >> 26) & SUIT_BITS, keep >> 39)
        best, ties = 1000, 0
        for left in lefts:
            base = [TABLE[x] for x in left]
            total = base[0] + base[1] + base[2] + base[3]
            for i in range(4):
                pattern = left[i] & ~keeps[i]
                others = total - base[i]
                while pattern:
                    low = pattern & -pattern
                    pattern ^= low
                    v = others + TABLE[left[i] ^ low]
                    if v <= best:
                        if v < best:
                            best, ties = v, 0
                        ties |= low << (13 * i)
        return best, ties

    def after_draws(self, hand: int, cards: list[int]) -> list[int]:
        """For each card, the least deadwood of ``hand`` after drawing it and discarding well.

        When the drawn card does not make its rank three times, the sets in play are
        those of the hand: per choice of them (``_set_choices``) each suit scores on its
        own, keeping the card changes its suit's look-up, and the best discard from
        another suit is the same for every draw, so it is found once per suit and
        choice.  (Discarding a card of a chosen set is the choice without that set.)
        A card that makes its rank three or four times is worked out in full.
        """
        suits = (hand & SUIT_BITS, (hand >> 13) & SUIT_BITS, (hand >> 26) & SUIT_BITS, hand >> 39)
        triples = _triples(*suits)
        lefts = _set_choices(suits, triples) if triples else (suits,)
        pairs = (suits[0] & suits[1]) | (suits[2] & suits[3]) | ((suits[0] | suits[1]) & (suits[2] | suits[3]))
        out = [1000] * len(cards)
        slow = []
        for k, u in enumerate(cards):
            if pairs >> (u % 13) & 1:
                slow.append(k)
        for left in lefts:
            base = [TABLE[x] for x in left]
            now = base[0] + base[1] + base[2] + base[3]
            # Per suit: the least change of that suit's deadwood from discarding one of its
            # cards; then, per suit, the least such change in another suit.
            change = [MIN_REMOVE[left[i]] - base[i] for i in range(4)]
            other = [min(change[i] for i in range(4) if i != j) for j in range(4)]
            for k, u in enumerate(cards):
                j, r = divmod(u, 13)
                if pairs >> r & 1:
                    continue
                grown = left[j] | (1 << r)
                rest = now - base[j]
                # keep it and throw from another suit, or from its own (throwing it back is ``now``)
                out[k] = min(out[k], now, rest + TABLE[grown] + other[j], rest + MIN_REMOVE[grown])
        for k in slow:
            out[k] = self.best_discard(hand | (1 << cards[k]))[0]
        return out


def expected_after_draw(
    dw: Deadwood, hand: int, draws: list[tuple[int, float]], limit: int
) -> tuple[float, float, float]:
    """Over the next stock card (``draws`` = card, probability): expected least deadwood,
    the chance to be able to knock, and the chance of Gin."""
    results = dw.after_draws(hand, [u for u, _ in draws])
    exp = knock = gin = 0.0
    for (_, p), d in zip(draws, results):
        exp += p * d
        if d <= limit:
            knock += p
            if d == 0:
                gin += p
    return exp, knock, gin

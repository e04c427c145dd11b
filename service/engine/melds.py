"""Melds and deadwood: the lowest-deadwood arrangement of a hand.

The search is split the way the rules split melds.  Sets cut across suits, runs stay
inside one suit, and a rank can hold at most one set.  So the engine tries every
choice of sets (none, the four, or one of the threes, for each rank held three or
four times) and scores what is left suit by suit from a table of the best runs of
every 13-bit suit pattern, computed once at import.  A random 10-card hand usually
holds no rank three times, and then its deadwood is four table look-ups.

>>> a = best_melds(["AS", "2S", "3S", "7H", "7D", "7C", "KD", "QH", "4C", "9D"])
>>> a.melds
(('7C', '7D', '7H'), ('AS', '2S', '3S'))
>>> a.deadwood, a.unmelded
(33, ('4C', '9D', 'KD', 'QH'))
>>> best_melds(["QS", "KS", "AS"]).deadwood   # ace is low: Q-K-A is no run
21
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import product
from typing import Any, NamedTuple

from .cards import CARD_INDEX, DECK, RANK_VALUES, CardError, parse_cards

SUIT_BITS = 0x1FFF
ALL_SUITS = (0, 1, 2, 3)

#: A choice of sets: per rank held three or four times, (its bit, the suits of its set).
SetChoice = tuple[tuple[int, tuple[int, ...]], ...]
#: A suit pattern's best runs (as card codes) and the cards left over.
SuitParts = tuple[tuple[tuple[str, ...], ...], tuple[str, ...]]


def _best_runs_table() -> tuple[list[int], list[tuple[tuple[int, int], ...]]]:
    """For every suit pattern: least deadwood using runs only, and those runs.

    The lowest card of a pattern is either deadwood or the start of a run, so each
    pattern's answer follows from smaller patterns already in the table.
    """
    dw = [0] * 8192
    runs: list[tuple[tuple[int, int], ...]] = [()] * 8192
    for m in range(1, 8192):
        i = (m & -m).bit_length() - 1
        rest = m & ~(1 << i)
        best, best_runs = RANK_VALUES[i] + dw[rest], runs[rest]
        length = 1
        while i + length < 13 and (m >> (i + length)) & 1:
            length += 1
        for n in range(3, length + 1):
            rest = m & ~(((1 << n) - 1) << i)
            if dw[rest] < best:
                best, best_runs = dw[rest], ((i, n),) + runs[rest]
        dw[m], runs[m] = best, best_runs
    return dw, runs


SUIT_DEADWOOD, SUIT_RUNS = _best_runs_table()


def _set_options(suits: tuple[int, int, int, int], triples: int) -> Iterator[SetChoice]:
    """Each way of melding sets: a tuple of (rank, suit-bits) choices per rank.

    ``triples`` has a bit for every rank held in three or four suits.  For each
    such rank the choices are no set, every suit held, or (when all four are held)
    each way of leaving one suit out for a run.
    """
    per_rank: list[list[tuple[int, tuple[int, ...]]]] = []
    r = triples
    while r:
        bit = r & -r
        r ^= bit
        held = tuple(s for s in ALL_SUITS if suits[s] & bit)
        choices: list[tuple[int, tuple[int, ...]]] = [(bit, ())]
        choices.append((bit, held))
        if len(held) == 4:
            choices.extend((bit, tuple(s for s in held if s != left)) for left in held)
        per_rank.append(choices)
    return product(*per_rank)


def _split(mask: int) -> tuple[int, int, int, int]:
    return (mask & SUIT_BITS, (mask >> 13) & SUIT_BITS, (mask >> 26) & SUIT_BITS, mask >> 39)


def _triples(c: int, d: int, h: int, s: int) -> int:
    return (c & d & (h | s)) | (h & s & (c | d))


def deadwood_of_mask(mask: int) -> int:
    """Least deadwood of the cards in a 52-bit mask (bit ``suit*13+rank``)."""
    c, d, h, s = _split(mask)
    triples = _triples(c, d, h, s)
    table = SUIT_DEADWOOD
    if not triples:
        return table[c] + table[d] + table[h] + table[s]
    return _best_sets((c, d, h, s), triples)[0]


def _best_sets(suits: tuple[int, int, int, int], triples: int) -> tuple[int, SetChoice, list[int]]:
    """The choice of sets that leaves the least deadwood once runs are made of the
    rest: (that deadwood, the choice, the suit patterns left for runs)."""
    table = SUIT_DEADWOOD
    best_choice: SetChoice
    best_total, best_choice, best_left = 1000, (), list(suits)
    for choice in _set_options(suits, triples):
        left = list(suits)
        for bit, used in choice:
            for su in used:
                left[su] &= ~bit
        total = table[left[0]] + table[left[1]] + table[left[2]] + table[left[3]]
        if total < best_total:
            best_total, best_choice, best_left = total, choice, left
    return best_total, best_choice, best_left


class Arrangement(NamedTuple):
    """Melds (each a tuple of card codes, runs in rank order) and what is left.

    Sets come first (by rank), then runs (by suit, then rank); the unmelded cards
    are in suit-then-rank order.
    """

    melds: tuple[tuple[str, ...], ...]
    unmelded: tuple[str, ...]
    deadwood: int

    def to_json(self) -> dict[str, Any]:
        return {
            "melds": [list(m) for m in self.melds],
            "deadwood_cards": list(self.unmelded),
            "deadwood": self.deadwood,
        }


# Per suit and suit pattern: (the best runs as card codes, the cards left over).
# Filled on first use, so importing the engine stays cheap.
_SUIT_PARTS: list[list[SuitParts | None]] = [[None] * 8192 for _ in ALL_SUITS]


def _suit_parts(suit: int, pattern: int) -> SuitParts:
    parts = _SUIT_PARTS[suit][pattern]
    if parts is None:
        base = suit * 13
        runs = tuple(tuple(DECK[base + r] for r in range(st, st + n)) for st, n in SUIT_RUNS[pattern])
        melded = 0
        for st, n in SUIT_RUNS[pattern]:
            melded |= ((1 << n) - 1) << st
        left = tuple(DECK[base + r] for r in range(13) if (pattern >> r) & 1 and not (melded >> r) & 1)
        parts = _SUIT_PARTS[suit][pattern] = (runs, left)
    return parts


def _arrangement_of_mask(mask: int) -> Arrangement:
    c, d, h, s = suits = _split(mask)
    triples = _triples(c, d, h, s)
    table = SUIT_DEADWOOD
    if triples:
        best_total, best_choice, best_left = _best_sets(suits, triples)
        c, d, h, s = best_left
        sets = tuple(
            tuple(DECK[su * 13 + bit.bit_length() - 1] for su in used) for bit, used in best_choice if used
        )
    else:
        best_total = table[c] + table[d] + table[h] + table[s]
        sets = ()
    p0, p1, p2, p3 = _SUIT_PARTS
    r0 = p0[c] or _suit_parts(0, c)
    r1 = p1[d] or _suit_parts(1, d)
    r2 = p2[h] or _suit_parts(2, h)
    r3 = p3[s] or _suit_parts(3, s)
    return Arrangement(
        sets + r0[0] + r1[0] + r2[0] + r3[0], r0[1] + r1[1] + r2[1] + r3[1], best_total
    )


def _mask_of_distinct(cards: Iterable[object]) -> int:
    mask = 0
    index = CARD_INDEX
    count = 0
    try:
        for c in cards:
            mask |= 1 << index[c]  # type: ignore[index]  # any object is looked up: a non-card raises KeyError or TypeError, caught below
            count += 1
    except (KeyError, TypeError):
        parse_cards(cards)  # raises with the offending input named
        raise
    if mask.bit_count() != count:
        parse_cards(cards)
    return mask


def best_melds(cards: Iterable[str]) -> Arrangement:
    """The non-overlapping arrangement of ``cards`` with the least deadwood."""
    return _arrangement_of_mask(_mask_of_distinct(cards))


def _candidate_melds(mask: int) -> list[int]:
    """Every set and run the cards of ``mask`` hold (sub-runs and sets of three out of
    four included), as masks: sets by rank, then runs by suit, low card and length."""
    melds = []
    for rank in range(13):
        held = [s * 13 + rank for s in ALL_SUITS if (mask >> (s * 13 + rank)) & 1]
        if len(held) >= 3:
            melds.append(sum(1 << i for i in held))
        if len(held) == 4:
            melds.extend(sum(1 << i for i in held if i != left) for left in held)
    for suit in ALL_SUITS:
        base = suit * 13
        for low in range(11):
            run = 0
            for high in range(low, 13):
                if not (mask >> (base + high)) & 1:
                    break
                run |= 1 << (base + high)
                if high - low >= 2:
                    melds.append(run)
    return melds


def _meld_order(meld: tuple[str, ...]) -> tuple[int, int, int]:
    """The place of a meld in an arrangement as ``best_melds`` writes one: sets by rank,
    then runs by suit and rank."""
    first = CARD_INDEX[meld[0]]
    if meld_kind(meld) == "set":
        return (0, first % 13, len(meld))
    return (1, first, len(meld))


def lowest_arrangements(cards: Iterable[str]) -> list[Arrangement]:
    """Every arrangement of ``cards`` with the least deadwood, ``best_melds``'s first,
    the others in a fixed order (the knocker's choices of a layout: with AS 2S 3S 2H 2D,
    the run of spades or the set of twos).

    >>> [a.melds for a in lowest_arrangements(["AS", "2S", "3S", "2H", "2D", "AH"])]
    [(('AS', '2S', '3S'),), (('2D', '2H', '2S'),)]
    """
    mask = _mask_of_distinct(cards)
    least = deadwood_of_mask(mask)
    first = _arrangement_of_mask(mask)
    found = [first]
    seen = {frozenset(first.melds)}
    candidates = _candidate_melds(mask)

    def walk(start: int, used: int, chosen: tuple[int, ...]) -> None:
        rest = mask & ~used
        if deadwood_of_mask(rest) > least:
            return  # whatever else is melded, these melds cost deadwood
        if _value_of_mask(rest) == least:
            melds = tuple(sorted((tuple(DECK[i] for i in range(52) if (m >> i) & 1) for m in chosen), key=_meld_order))
            if frozenset(melds) not in seen:
                seen.add(frozenset(melds))
                unmelded = tuple(DECK[i] for i in range(52) if (rest >> i) & 1)
                found.append(Arrangement(melds, unmelded, least))
            return
        for j in range(start, len(candidates)):
            m = candidates[j]
            if not m & used:
                walk(j + 1, used | m, chosen + (m,))

    walk(0, 0, ())
    return found


def _value_of_mask(mask: int) -> int:
    total = 0
    while mask:
        low = mask & -mask
        total += RANK_VALUES[(low.bit_length() - 1) % 13]
        mask ^= low
    return total


def deadwood(cards: Iterable[str]) -> int:
    """Least deadwood of ``cards`` (the number ``best_melds`` would report)."""
    return deadwood_of_mask(_mask_of_distinct(cards))


def discard_deadwoods(cards: Sequence[str]) -> dict[str, int]:
    """For an 11-card hand: the least deadwood left after each possible discard."""
    mask = _mask_of_distinct(cards)
    return {c: deadwood_of_mask(mask & ~(1 << CARD_INDEX[c])) for c in cards}


def best_discards(cards: Sequence[str]) -> tuple[list[str], int]:
    """For 11 cards: every discard that leaves the least deadwood, and that deadwood."""
    options = discard_deadwoods(cards)
    low = min(options.values())
    return [c for c in cards if options[c] == low], low


# --- single melds -----------------------------------------------------------------


def meld_kind(cards: Sequence[str]) -> str | None:
    """``"set"``, ``"run"``, or None when the cards are not one legal meld."""
    if len(cards) < 3 or len(set(cards)) != len(cards):
        return None
    idx = [CARD_INDEX[c] for c in cards]
    ranks = {i % 13 for i in idx}
    if len(ranks) == 1:
        return "set" if len(cards) <= 4 else None
    suits = {i // 13 for i in idx}
    if len(suits) == 1:
        rs = sorted(i % 13 for i in idx)
        if rs[-1] - rs[0] == len(rs) - 1:
            return "run"
    return None


def order_meld(cards: Iterable[str]) -> tuple[str, ...]:
    """A meld's cards in display order: a run by rank, a set by suit."""
    return tuple(sorted(cards, key=CARD_INDEX.__getitem__))


class ArrangementError(ValueError):
    """An explicitly chosen arrangement that breaks the rules."""


def check_arrangement(hand: Iterable[str], melds: Iterable[Iterable[object]]) -> Arrangement:
    """Validate melds chosen from ``hand``: each legal, none overlapping, all held."""
    held = set(hand)
    used: set[str] = set()
    out = []
    for i, meld in enumerate(melds):
        try:
            cards = parse_cards(meld)
        except CardError as exc:
            raise ArrangementError(f"meld {i}: {exc}") from None
        if meld_kind(cards) is None:
            raise ArrangementError(f"meld {i} ({' '.join(cards)}) is neither a set of 3-4 of a rank nor a run of 3+ in a suit")
        missing = [c for c in cards if c not in held]
        if missing:
            raise ArrangementError(f"meld {i} uses {', '.join(missing)}, not in the hand")
        twice = [c for c in cards if c in used]
        if twice:
            raise ArrangementError(f"meld {i} reuses {', '.join(twice)}, already in another meld")
        used.update(cards)
        out.append(order_meld(cards))
    unmelded = tuple(sorted(held - used, key=CARD_INDEX.__getitem__))
    return Arrangement(tuple(out), unmelded, sum(RANK_VALUES[CARD_INDEX[c] % 13] for c in unmelded))

"""The knocker's side of a knock: every legal arrangement and its layoff spots, on masks.

The engine lays out the lowest-deadwood arrangement; when the rules let the knocker
choose, another legal arrangement can leave fewer places to lay off: with 5-6-7-8S and
8H 8D 8C, the run of four and the three 8s take a 4S and a 9S, while the four 8s
beside 5-6-7S take only the 4S.
"""

from __future__ import annotations

from itertools import combinations
from typing import NamedTuple

from service.engine.cards import DECK

from .knowledge import VALUE


class Meld(NamedTuple):
    mask: int
    #: For a run: (suit base index, low rank, high rank); for a set: (-1, rank, number of cards).
    shape: tuple[int, int, int]

    @property
    def is_set(self) -> bool:
        return self.shape[0] < 0

    def codes(self) -> list[str]:
        return [DECK[i] for i in range(52) if (self.mask >> i) & 1]


def candidate_melds(hand: int) -> list[Meld]:
    """Every set and run (of any length, sub-runs included) that ``hand`` holds."""
    melds = []
    for rank in range(13):
        suits = [s for s in range(4) if (hand >> (s * 13 + rank)) & 1]
        for n in (3, 4):
            for chosen in combinations(suits, n):
                mask = 0
                for s in chosen:
                    mask |= 1 << (s * 13 + rank)
                melds.append(Meld(mask, (-1, rank, n)))
    for s in range(4):
        base = s * 13
        for low in range(11):
            if not (hand >> (base + low)) & 1:
                continue
            high = low
            mask = 1 << (base + low)
            while high + 1 < 13 and (hand >> (base + high + 1)) & 1:
                high += 1
                mask |= 1 << (base + high)
                if high - low >= 2:
                    melds.append(Meld(mask, (base, low, high)))
    return melds


def arrangements(hand: int, limit: int) -> list[tuple[int, tuple[Meld, ...]]]:
    """Every legal arrangement with deadwood at most ``limit``: (deadwood, melds)."""
    melds = candidate_melds(hand)
    total = sum(VALUE[i] for i in range(52) if (hand >> i) & 1)
    out: list[tuple[int, tuple[Meld, ...]]] = []

    def walk(start: int, used: int, chosen: tuple[Meld, ...], melded_value: int) -> None:
        deadwood = total - melded_value
        if deadwood <= limit:
            out.append((deadwood, chosen))
        for j in range(start, len(melds)):
            m = melds[j]
            if not m.mask & used:
                walk(j + 1, used | m.mask, chosen + (m,), melded_value + _mask_value(m.mask))

    walk(0, 0, (), 0)
    return out


def _mask_value(mask: int) -> int:
    total = 0
    while mask:
        low = mask & -mask
        total += VALUE[low.bit_length() - 1]
        mask ^= low
    return total


def layoff_spots(meld: Meld) -> list[list[int]]:
    """The chains of cards that could be laid off onto ``meld``, nearest first."""
    base, low, high = meld.shape
    if base < 0:
        if high == 4:
            return []
        rank = low
        return [[s * 13 + rank] for s in range(4) if not (meld.mask >> (s * 13 + rank)) & 1]
    down = [base + r for r in range(low - 1, -1, -1)]
    up = [base + r for r in range(high + 1, 13)]
    return [chain for chain in (down, up) if chain]


def expected_layoff(melds: tuple[Meld, ...], held_chance) -> float:
    """Expected points the defender lays off, with ``held_chance(i)`` the chance it holds card i."""
    total = 0.0
    for meld in melds:
        for chain in layoff_spots(meld):
            p = 1.0
            for card in chain:
                p *= held_chance(card)
                if p < 0.01:
                    break
                total += p * VALUE[card]
    return total

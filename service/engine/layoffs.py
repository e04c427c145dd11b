"""The defender's answer to a knock: own melds plus layoffs onto the knocker's melds;
and the knocker's layout that leaves it the least (``best_layout``).

A layoff extends one of the knocker's melds: a run at either end (chains allowed:
8S then 9S onto 5S-6S-7S), or a set of three with its fourth card.  The best
defense minimises the defender's final deadwood over every choice of layoffs and
own melds together: a card laid off cannot also sit in the defender's own meld, so
the two are searched jointly, not one after the other.

>>> d = best_defense([("5S", "6S", "7S"), ("KC", "KD", "KH")],
...                  ["8S", "9S", "KS", "2C", "2D", "2H", "4D", "AC", "QH", "JH"])
>>> d.layoffs
(('8S', 0), ('9S', 0), ('KS', 1))
>>> d.deadwood, d.unmelded
(25, ('AC', '4D', 'JH', 'QH'))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import product
from typing import Any, NamedTuple

from .cards import CARD_INDEX, DECK, CardError, parse_cards
from .melds import (
    Arrangement,
    ArrangementError,
    _arrangement_of_mask,
    best_melds,
    check_arrangement,
    deadwood_of_mask,
    lowest_arrangements,
    meld_kind,
)


class Defense(NamedTuple):
    """The defender's own melds, its layoffs as (card, index of knocker's meld), and what is left."""

    melds: tuple[tuple[str, ...], ...]
    layoffs: tuple[tuple[str, int], ...]
    unmelded: tuple[str, ...]
    deadwood: int

    def to_json(self) -> dict[str, Any]:
        return {
            "melds": [list(m) for m in self.melds],
            "layoffs": [{"card": c, "meld": i} for c, i in self.layoffs],
            "deadwood_cards": list(self.unmelded),
            "deadwood": self.deadwood,
        }


def _layoff_options(meld: Sequence[str], hand_mask: int) -> list[int]:
    """Every set of the defender's cards that can be laid off onto one meld, as masks."""
    idx = sorted(CARD_INDEX[c] for c in meld)
    if meld_kind(meld) == "set":
        if len(idx) != 3:
            return [0]
        rank = idx[0] % 13
        held = {i // 13 for i in idx}
        missing = next(s for s in range(4) if s not in held) * 13 + rank
        return [0, 1 << missing] if (hand_mask >> missing) & 1 else [0]
    suit_base = idx[0] // 13 * 13
    low, high = idx[0] % 13, idx[-1] % 13
    down = [0]
    r = low - 1
    while r >= 0 and (hand_mask >> (suit_base + r)) & 1:
        down.append(down[-1] | 1 << (suit_base + r))
        r -= 1
    up = [0]
    r = high + 1
    while r <= 12 and (hand_mask >> (suit_base + r)) & 1:
        up.append(up[-1] | 1 << (suit_base + r))
        r += 1
    return [a | b for a in down for b in up]


def best_defense(knocker_melds: Sequence[Sequence[str]], hand: Iterable[str]) -> Defense:
    """The defender's own melds and layoffs that leave the least deadwood.

    Ties go to the fewest layoffs, then to the first found, so the answer is
    deterministic.
    """
    hand = parse_cards(hand)
    hand_mask = 0
    for c in hand:
        hand_mask |= 1 << CARD_INDEX[c]
    options = [_layoff_options(m, hand_mask) for m in knocker_melds]
    best = None
    for choice in product(*options):
        laid = 0
        clash = False
        for m in choice:
            if laid & m:
                clash = True
                break
            laid |= m
        if clash:
            continue
        key = (deadwood_of_mask(hand_mask & ~laid), laid.bit_count())
        if best is None or key < best[0]:
            best = (key, choice)
    assert best is not None
    laid_total = 0
    layoffs: list[tuple[str, int]] = []
    for meld_index, m in enumerate(best[1]):
        laid_total |= m
        layoffs.extend((DECK[i], meld_index) for i in range(52) if (m >> i) & 1)
    own = _arrangement_of_mask(hand_mask & ~laid_total)
    return Defense(own.melds, play_order(knocker_melds, layoffs), own.unmelded, own.deadwood)


def best_layout(cards: Iterable[str], defender_hand: Iterable[str]) -> Arrangement:
    """The knocker's layout: among its arrangements of the least deadwood, the one that
    leaves the defender the most deadwood after its best defense (so the knocker's best
    score); ties go to the first in ``lowest_arrangements``'s order (``best_melds``'s
    first).  Run A-2-3S and 2H 2D loose, and a defender with 4S can lay it off; the set
    of twos with AS 3S loose leaves it nothing:

    >>> best_layout(["AS", "2S", "3S", "2H", "2D", "AH"], ["4S", "KC", "KD"]).melds
    (('2D', '2H', '2S'),)
    """
    options = lowest_arrangements(cards)
    if len(options) == 1 or options[0].deadwood == 0:
        return options[0]  # (nothing is laid off on Gin)
    defender_hand = parse_cards(defender_hand)
    return max(options, key=lambda a: best_defense(a.melds, defender_hand).deadwood)


def play_order(knocker_melds: Sequence[Sequence[str]], layoffs: Iterable[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    """Layoffs in an order in which they can be laid off one by one: meld by meld (in
    the knocker's order); onto a run, first the cards below it, nearest first, then
    those above it, nearest first (AD and 2D onto 3D-4D-5D: 2D, then AD).

    >>> play_order([("3D", "4D", "5D")], [("AD", 0), ("6D", 0), ("2D", 0)])
    (('2D', 0), ('AD', 0), ('6D', 0))
    """
    by_meld: dict[int, list[str]] = {}
    for card, meld in layoffs:
        by_meld.setdefault(meld, []).append(card)
    ordered: list[tuple[str, int]] = []
    for meld in sorted(by_meld):
        low = min(CARD_INDEX[c] % 13 for c in knocker_melds[meld])
        below = sorted((c for c in by_meld[meld] if CARD_INDEX[c] % 13 < low), key=lambda c: -CARD_INDEX[c])
        above = sorted((c for c in by_meld[meld] if CARD_INDEX[c] % 13 >= low), key=lambda c: CARD_INDEX[c])
        ordered += [(c, meld) for c in below + above]
    return tuple(ordered)


class LayoffError(ValueError):
    """A chosen layoff that the rules do not allow."""


def check_defense(
    knocker_melds: Sequence[Sequence[str]],
    hand: Iterable[str],
    melds: Iterable[Iterable[object]] | None,
    layoffs: Iterable[tuple[object, object]],
) -> Defense:
    """Validate an explicitly chosen defense; return it with its deadwood.

    Each knocker's meld together with the cards laid off onto it must again be one
    legal meld (so a run grows only at its ends, in chains, and a set only to four).
    ``melds`` None: the defender's own melds are the best melds of the cards the
    layoffs leave (not none at all).

    >>> check_defense([("5D", "6D", "7D")], ["8D", "TC", "JC", "QC", "2H"], None, [("8D", 0)]).melds
    (('TC', 'JC', 'QC'),)
    """
    hand = parse_cards(hand)
    melds = None if melds is None else [list(m) if isinstance(m, (list, tuple)) else m for m in melds]
    laid: list[tuple[str, int]] = []
    per_meld: dict[int, list[str]] = {}
    for card, target in layoffs:
        try:
            (card,) = parse_cards([card])
        except CardError as exc:
            raise LayoffError(f"layoff: {exc}") from None
        if card not in hand:
            raise LayoffError(f"layoff {card} is not in the defender's hand")
        if not isinstance(target, int) or isinstance(target, bool) or not 0 <= target < len(knocker_melds):
            raise LayoffError(
                f"layoff {card} names meld {target!r}; the knocker has melds 0 to {len(knocker_melds) - 1}"
            )
        if any(card == c for c, _ in laid):
            raise LayoffError(f"layoff {card} is given twice")
        laid.append((card, target))
        per_meld.setdefault(target, []).append(card)
    for target, cards in per_meld.items():
        grown = list(knocker_melds[target]) + cards
        if meld_kind(grown) is None:
            raise LayoffError(
                f"{', '.join(cards)} cannot be laid off onto {' '.join(knocker_melds[target])}: "
                "a run grows only at its ends and a set only to four cards"
            )
    laid_cards = {c for c, _ in laid}
    if melds is None:
        own = best_melds([c for c in hand if c not in laid_cards])
        return Defense(own.melds, play_order(knocker_melds, laid), own.unmelded, own.deadwood)
    try:
        own = check_arrangement([c for c in hand if c not in laid_cards], melds)
    except ArrangementError as exc:
        if any(isinstance(m, list) and c in laid_cards for m in melds for c in m):
            raise LayoffError("a card cannot be both laid off and kept in the defender's own meld") from None
        raise LayoffError(str(exc)) from None
    return Defense(own.melds, play_order(knocker_melds, laid), own.unmelded, own.deadwood)

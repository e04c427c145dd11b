"""Cards as two-character codes: rank from ``A23456789TJQK``, suit from ``CDHS``.

``"TD"`` is the ten of diamonds, ``"AS"`` the ace of spades.  Inside the engine a
card is also an index 0..51 (``suit * 13 + rank``) so that a hand is a 52-bit mask;
the codes are what every outside surface sees.

>>> card_value("KD"), card_value("AS"), card_value("7H")
(10, 1, 7)
>>> parse_cards(["AS", "TD"])
('AS', 'TD')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

RANKS = "A23456789TJQK"
SUITS = "CDHS"
RANK_VALUES = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)

#: Every card code in index order: all clubs A..K, then diamonds, hearts, spades.
DECK: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
CARD_INDEX: dict[str, int] = {code: i for i, code in enumerate(DECK)}
CARD_VALUE: dict[str, int] = {code: RANK_VALUES[i % 13] for i, code in enumerate(DECK)}


class CardError(ValueError):
    """Malformed card input: not a card code, or a card given twice."""


def rank_of(card: str) -> int:
    """0 for an ace up to 12 for a king."""
    return CARD_INDEX[card] % 13


def suit_of(card: str) -> int:
    return CARD_INDEX[card] // 13


def card_value(card: str) -> int:
    """Deadwood value: ace 1, 2-10 face value, J/Q/K 10."""
    try:
        return CARD_VALUE[card]
    except (KeyError, TypeError):
        raise CardError(_bad_card_message(card)) from None


def _bad_card_message(card: object) -> str:
    return (
        f"{card!r} is not a card: use a rank from {RANKS} and a suit from {SUITS}, "
        'for example "TD" (ten of diamonds) or "AS" (ace of spades)'
    )


def check_card(card: object) -> str:
    if not isinstance(card, str) or card not in CARD_INDEX:
        raise CardError(_bad_card_message(card))
    return card


def parse_cards(cards: Iterable[object], *, distinct: bool = True) -> tuple[str, ...]:
    """Validate card codes; refuse anything that is not one, and duplicates."""
    if isinstance(cards, str):
        raise CardError(f"expected a list of card codes, got the string {cards!r}")
    result = tuple(check_card(c) for c in cards)
    if distinct and len(set(result)) != len(result):
        dupes = sorted(c for c, n in Counter(result).items() if n > 1)
        raise CardError(f"card(s) given more than once: {', '.join(dupes)}")
    return result


def mask_of(cards: Iterable[str]) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << CARD_INDEX[c]
    return mask


def cards_of(mask: int) -> tuple[str, ...]:
    """The codes of a mask's cards, in index order (by suit, then rank)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(DECK[low.bit_length() - 1])
        mask ^= low
    return tuple(out)


def sort_cards(cards: Iterable[str], by: str = "suit") -> list[str]:
    """Sort by suit then rank (``by="suit"``) or by rank then suit (``by="rank"``)."""
    if by == "rank":
        return sorted(cards, key=lambda c: (rank_of(c), suit_of(c)))
    return sorted(cards, key=CARD_INDEX.__getitem__)

"""Why the coach's best play is best, in a sentence a person understands.

Every sentence is built from what the seat knows (its hand, the pile, what the
opponent took, threw and passed), never from hidden cards.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.bots.knowledge import VALUE, indices
from service.engine import best_melds
from service.engine.cards import CARD_INDEX, DECK

SUIT_SIGNS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
SUIT_NAMES = {"C": "club", "D": "diamond", "H": "heart", "S": "spade"}
RANK_NAMES = {"A": "A", "T": "10", "J": "J", "Q": "Q", "K": "K"}


def card_text(card: int | str) -> str:
    """7♥, 10♠, K♣."""
    code = DECK[card] if isinstance(card, int) else card
    return RANK_NAMES.get(code[0], code[0]) + SUIT_SIGNS[code[1]]


def cards_text(cards) -> str:
    return " ".join(card_text(c) for c in sorted(cards, key=lambda c: c if isinstance(c, int) else CARD_INDEX[c]))


def _rank_text(card: int) -> str:
    code = DECK[card][0]
    return {"A": "an ace", "8": "an 8", "J": "a jack", "Q": "a queen", "K": "a king", "T": "a 10"}.get(code, f"a {code}")


def reason(coach, best: Mapping[str, Any]) -> str:
    kind = best["type"]
    if kind in ("draw", "pass"):
        if kind == "draw" and best["source"] == "discard":
            return _take(coach)
        return _decline(coach, kind)
    if kind == "big_gin":
        return (
            f"lay down Big Gin: all eleven cards meld, for the {coach.rules['big_gin_bonus']}-point bonus and your "
            f"opponent's deadwood{_doubled(coach)}"
        )
    if kind == "gin":
        return (
            f"go Gin, throwing the {card_text(best['card'])}: all ten cards meld, for the {coach.rules['gin_bonus']}-point "
            f"bonus and your opponent's deadwood{_doubled(coach)}"
        )
    if kind == "knock":
        now, wait, deadwood = coach.ending[CARD_INDEX[best["card"]]]
        return (
            f"knock, throwing the {card_text(best['card'])}: with {deadwood} deadwood{_limit_note(coach)} you expect "
            f"about {now:+.0f} points now{_doubled(coach)}, more than by playing on"
        )
    return _discard(coach, CARD_INDEX[best["card"]])


def _upcard(coach) -> str:
    upcard = coach.know.upcard
    return f"the {card_text(upcard)} upcard" if upcard else "the first upcard"


def _doubled(coach) -> str:
    return f" (doubled: {_upcard(coach)} is a spade)" if coach.know.doubled else ""


def _limit_note(coach) -> str:
    """Under Oklahoma, the hand's knock limit and the upcard that set it."""
    if not coach.rules.get("oklahoma"):
        return ""
    return f" (this hand's limit is {coach.limit}, set by {_upcard(coach)})"


def _cannot_knock(coach, deadwood: int) -> str | None:
    """Why a hand of ``deadwood`` (at most 10) may not knock in this hand: Straight Gin, or
    an Oklahoma upcard's lower limit."""
    limit = coach.limit
    if deadwood <= limit:
        return None
    if limit == 0:
        why = f"{_upcard(coach)} allows Gin only" if coach.rules.get("oklahoma") else "Straight Gin: no knocking"
        return f"only Gin ends this hand ({why})"
    if coach.rules.get("oklahoma"):
        return f"{deadwood} deadwood is too many to knock: this hand's limit is {limit}, set by {_upcard(coach)}"
    return None


def _take(coach) -> str:
    know = coach.know
    top = know.top
    eleven = know.hand | (1 << top)
    kept = coach.successor(eleven, keep=1 << top)
    arranged = best_melds([DECK[i] for i in indices(kept)])
    meld = next((m for m in arranged.melds if DECK[top] in m), None)
    if arranged.deadwood == 0:
        return f"take the {card_text(top)}: it gives you Gin"
    if meld is not None:
        return f"take the {card_text(top)}: it makes {cards_text(meld)}"
    now = coach.dw(know.hand)
    return f"take the {card_text(top)}: it brings your deadwood from {now} to {arranged.deadwood}"


def _decline(coach, kind: str) -> str:
    know = coach.know
    top = know.top
    verb = "pass" if kind == "pass" else "draw from the stock"
    if not coach.take_melds:
        return f"{verb}: the {card_text(top)} goes with nothing you hold"
    return f"{verb}: the {card_text(top)} would help less than a card from the stock, and taking it tells your opponent what you collect"


def _discard(coach, card: int) -> str:
    know = coach.know
    rest = know.hand & ~(1 << card)
    parts = []
    if coach.ending:
        now, wait, deadwood = max(coach.ending.values(), key=lambda t: t[0])
        parts.append(f"do not knock yet (knocking: about {now:+.0f} points expected; playing on is worth more)")
    arranged = best_melds([DECK[i] for i in indices(know.hand)])
    loose = DECK[card] in arranged.unmelded
    parts.append(f"throw the {card_text(card)}" + (f" ({VALUE[card]} points of deadwood)" if loose and VALUE[card] >= 8 else ""))
    left = coach.dw(rest)
    blocked = _cannot_knock(coach, left) if 0 < left <= 10 else None
    if blocked:
        parts.append(blocked)
    keep = _pair_to_keep(know, rest)
    if keep:
        parts.append(keep)
    safe = _why_safe(coach, card)
    if safe:
        parts.append(safe)
    return "; ".join(parts)


def _pair_to_keep(know, rest: int) -> str | None:
    """Two unmelded cards worth keeping together, with the cards that would meld them
    and are still live (not in the pile, not known to be the opponent's)."""
    arranged = best_melds([DECK[i] for i in indices(rest)])
    loose = [CARD_INDEX[c] for c in arranged.unmelded]
    live = know.unseen
    best = None
    for i, a in enumerate(loose):
        for b in loose[i + 1 :]:
            outs = _outs(a, b)
            if not outs:
                continue
            alive = [o for o in outs if (live >> o) & 1]
            key = (len(alive), -len(outs), -(VALUE[a] + VALUE[b]))
            if alive and (best is None or key > best[0]):
                best = (key, a, b, alive, outs)
    if best is None:
        return None
    _, a, b, alive, outs = best
    pair = cards_text([a, b])
    if len(alive) == len(outs) == 2:
        return f"keep {pair}: {cards_text(alive).replace(' ', ' and ')} are both still live"
    if len(alive) == 1:
        return f"keep {pair}: the {card_text(alive[0])} is still live"
    return f"keep {pair}: {len(alive)} cards that meld them are still live"


def _outs(a: int, b: int) -> list[int]:
    """The cards that make a meld of ``a`` and ``b`` (same rank: the other suits; same
    suit within two ranks: the ends or the gap of the run)."""
    ra, rb = a % 13, b % 13
    if ra == rb:
        return [s * 13 + ra for s in range(4) if s * 13 + ra not in (a, b)]
    if a // 13 != b // 13 or abs(ra - rb) > 2:
        return []
    base, lo, hi = a - ra, min(ra, rb), max(ra, rb)
    if hi - lo == 2:
        return [base + lo + 1]
    return [base + r for r in (lo - 1, hi + 1) if 0 <= r < 13]


def _why_safe(coach, card: int) -> str | None:
    """Why the opponent is unlikely to want ``card``, from what it did and what is seen."""
    know = coach.know
    if coach.model.feeds(card) > 0.15:
        return None
    rank = card % 13
    suit = DECK[card][1]
    said = []
    for c, _ in know.opp_discards:
        if c % 13 == rank:
            said.append(f"your opponent threw {_rank_text(c)}")
            break
    else:
        if any(c % 13 == rank for c in know.opp_declined):
            said.append(f"your opponent passed {_rank_text(card)}")
    seen = know.hand | know.pile_mask
    beside = [card - rank + r for r in (rank - 1, rank + 1) if 0 <= r < 13]
    if all((seen >> n) & 1 for n in beside):
        said.append(f"the {SUIT_NAMES[suit]}s beside it are in your hand or the pile")
    if not said:
        return None
    return f"the {card_text(card)} is safe: " + " and ".join(said)

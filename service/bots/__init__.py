"""The computer opponent.  A bot sees exactly what its seat may see.

``choose_action(view, history, level, rng)`` takes the seat view the API serves (the
same JSON a front end gets), the seat's redacted events of the current hand, a level
and a seeded ``random.Random``; it returns one of ``view["legal_actions"]``.

This is the plain placeholder player: it ends the hand whenever it may, takes the
upcard or the discard only when that lowers its deadwood, and throws the card that
leaves the least deadwood.  Every level plays it until the bots issue lands.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from service.engine import deadwood

LEVELS = ("easy", "medium", "hard")


def choose_action(view: Mapping[str, Any], history: Sequence[Mapping[str, Any]], level: str, rng: random.Random) -> dict:
    actions = view["legal_actions"]
    if not actions:
        raise ValueError("the seat has no legal action: it is not its turn")
    if len(actions) == 1:
        return actions[0]
    types = {a["type"] for a in actions}
    for ender in ("gin", "knock"):
        if ender in types:
            return min(
                (a for a in actions if a["type"] == ender), key=lambda a: deadwood([c for c in view["hand"] if c != a["card"]])
            )
    if "discard" in types:
        return min(
            (a for a in actions if a["type"] == "discard"),
            key=lambda a: (deadwood([c for c in view["hand"] if c != a["card"]]), rng.random()),
        )
    pile = view["discard_pile"]
    takes = [a for a in actions if a["type"] == "draw" and a["source"] == "discard"]
    if takes and pile:
        # Taking the top card pays when some discard then leaves less deadwood than now.
        hand = view["hand"] + [pile[-1]]
        best_after = min(deadwood([c for c in hand if c != x]) for x in view["hand"])
        if best_after < view["deadwood"]:
            return takes[0]
    others = [a for a in actions if a not in takes]
    return others[0] if others else actions[0]

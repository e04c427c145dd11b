"""The service's deals: a shuffled deck and the ``deal`` command that carries it.

The engine never shuffles: the deck comes in as data (see ``game``).  The generator is
an input, so a seed gives the same deal every time.
"""

from __future__ import annotations

import random
from typing import Any

from .cards import DECK


def shuffled_deck(rng: random.Random) -> list[str]:
    deck = list(DECK)
    rng.shuffle(deck)
    return deck


def deal_command(rng: random.Random) -> dict[str, Any]:
    return {"type": "deal", "deck": shuffled_deck(rng), "salt": f"{rng.getrandbits(64):016x}"}

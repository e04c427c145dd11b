"""The seats of a match as recorded: names, player ids, and the seat specs of
``start_match`` (a person, the computer at a level with a seed, or an open seat)."""

from __future__ import annotations

import unicodedata
import uuid
from collections.abc import Mapping
from typing import Any, cast

from .errors import CommandError

LEVELS = ("easy", "medium", "hard")
#: Seeds stay exact as JSON numbers in every language (JavaScript: below 2**53).
MAX_SEED = 2**53 - 1
SEAT_FIELDS = {"name", "kind", "level", "seed", "player"}
#: The longest name of a seat.
NAME_LENGTH = 40


def name_problem(value: object) -> str | None:
    """Why ``value`` cannot be a name (None: it can).  A name is 1 to NAME_LENGTH
    characters, without spaces around it and without control or format characters
    (which would let a name rewrite a terminal or reorder the text around it)."""
    if not isinstance(value, str) or not 1 <= len(value) <= NAME_LENGTH:
        return f"a name is 1 to {NAME_LENGTH} characters"
    if value != value.strip():
        return "a name has no spaces before or after it"
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") for c in value):
        return "a name holds no control or formatting characters"
    return None


def checked_name(value: object, what: str) -> str:
    problem = name_problem(value)
    if problem is not None:
        raise CommandError(f"{what}: {problem}", "invalid_name")
    return cast(str, value)  # a name: no problem found above


def checked_player(value: object, what: str) -> str:
    """A player id as recorded: a UUID in its canonical form."""
    try:
        if isinstance(value, str) and str(uuid.UUID(value)) == value:
            return value
    except ValueError:
        pass
    raise CommandError(f"{what}: a player is named by its id, a UUID", "invalid_seats")


def seat_from_spec(index: int, spec: Mapping[str, Any]) -> dict[str, Any]:
    """A seat as recorded: a name, human or computer, and a computer's level and seed;
    or open, waiting for a player to join."""
    unknown = sorted(set(spec) - SEAT_FIELDS)
    if unknown:
        raise CommandError(f"seat {index}: unknown field(s) {', '.join(unknown)}", "invalid_seats")
    kind = spec.get("kind", "human")
    if kind not in ("human", "computer", "open"):
        raise CommandError(f"seat {index}: kind must be 'human', 'computer' or 'open', got {kind!r}", "invalid_seats")
    if kind == "open":
        if len(spec) > 1:
            raise CommandError(f"seat {index}: an open seat has only its kind: the player who joins names it", "invalid_seats")
        return {"kind": "open"}
    name = spec.get("name")
    if name is not None:
        checked_name(name, f"seat {index}")
    if kind == "human":
        if "level" in spec or "seed" in spec:
            raise CommandError(f"seat {index}: only a computer seat has a level and a seed", "invalid_seats")
        seat = {"name": name or f"Player {index + 1}", "kind": kind}
        if "player" in spec:
            seat["player"] = checked_player(spec["player"], f"seat {index}")
        return seat
    if "player" in spec:
        raise CommandError(f"seat {index}: only a person's seat is held by a player", "invalid_seats")
    level = spec.get("level", "medium")
    if level not in LEVELS:
        raise CommandError(f"seat {index}: level must be one of {', '.join(LEVELS)}, got {level!r}", "invalid_seats")
    seed = spec.get("seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise CommandError(
            f"seat {index}: a computer seat needs the seed of its decisions, a whole number from 0 to 2**53 - 1", "invalid_seats"
        )
    return {"name": name or f"Computer ({level})", "kind": kind, "level": level, "seed": seed}

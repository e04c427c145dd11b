"""House rules as data: the parameters of RULES.md, the presets, and overrides.

The resolved rules travel in a match's first event, so a record replays under the
rules it was played with, whatever the defaults of a later server are.

>>> r = resolve_rules({"preset": "classic", "gin_bonus": 20})
>>> r.gin_bonus, r.undercut_bonus, r.preset
(20, 25, 'classic')
>>> resolve_rules({"knock_limit": 11})
Traceback (most recent call last):
...
service.engine.rules.RulesError: knock_limit must be a whole number from 0 to 10, got 11
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from .cards import CARD_VALUE


class RulesError(ValueError):
    """Rules that cannot be played: an unknown preset or parameter, or a value out of range."""

    def __init__(self, message: str, parameter: str | None = None):
        super().__init__(message)
        self.parameter = parameter


@dataclass(frozen=True)
class Rules:
    preset: str = "classic"
    #: Before the first draw the starter may take the upcard or pass, then the other player.
    upcard_offer: bool = False
    #: After a discard without a knock, the hand is dead when the stock holds this many cards or fewer.
    dead_hand_stock: int = 0
    gin_bonus: int = 25
    undercut_bonus: int = 25
    #: Most deadwood a player may knock with.
    knock_limit: int = 10
    #: A match ends when a total reaches this.
    target_score: int = 100
    #: Play one hand only; its winner wins the match.
    single_hand: bool = False
    #: The knocker may lay out any legal arrangement within the knock limit; otherwise
    #: it may choose only among its arrangements of the least deadwood.  Either way a
    #: knock without melds lays out the best of those (see ``layoffs.best_layout``).
    knocker_arranges: bool = False
    #: The defender confirms its melds and layoffs (suggested best, or its own choice);
    #: otherwise the best defense is applied automatically.
    defender_arranges: bool = False
    #: Seconds a seat has for its turn (None: no clock).  Once they have passed, the
    #: other seat may claim the match.
    turn_seconds: int | None = None
    #: Who starts each hand: ``alternate`` (seat 0 starts the first hand, then the
    #: starter alternates), ``seat_0`` (seat 0 starts every hand) or ``loser`` (seat 0
    #: starts the first hand, then the loser of the last hand starts; after a dead hand
    #: the same seat starts again).
    starter: str = "alternate"
    #: Whether a seat may ask for hints (``GET /matches/{id}/hint``).  Unset, a new match
    #: resolves it from its seats: on against the computer and for two people on one
    #: device, off when a seat waits for a player to join or the two seats are held by
    #: two different players.  A match with a hint shown is never rated.
    hints: bool | None = None
    #: Oklahoma Gin: the first upcard's value sets the hand's knock limit (an ace: Gin
    #: only, a face card 10); ``knock_limit`` stays at 10.
    oklahoma: bool = False
    #: Under ``oklahoma``: a spade as the first upcard doubles the hand's score.
    spade_doubles: bool = False
    #: Big Gin: all eleven cards meld after the draw; the player lays them down without
    #: discarding and scores the defender's deadwood plus this bonus (None: not played).
    big_gin_bonus: int | None = None
    #: Hollywood scoring: three games run at once (see ``scoring``); the match ends when
    #: all three are decided.
    hollywood: bool = False
    #: Added at the end of a game to the total of the player who won it.
    game_bonus: int = 0
    #: Added at the end of a game to each player's total for each hand it won there (the
    #: line or box bonus).
    box_bonus: int = 0
    #: A game's winner whose opponent scored no point in it doubles its total.
    shutout_doubles: bool = False

    @property
    def match_bonuses(self) -> bool:
        """Whether a game's end is settled with totals (bonuses, shutouts, Hollywood)."""
        return self.hollywood or bool(self.game_bonus or self.box_bonus or self.shutout_doubles)

    def to_json(self, complete: bool = False) -> dict[str, Any]:
        """The rules as data.  An optional parameter left at its default (``turn_seconds``
        not set, ``starter`` ``alternate``) is left out, so the rules of a match without
        it are recorded as before it existed; ``complete`` lists every parameter (as the
        API shows them)."""
        # Not dataclasses.asdict, which deep-copies every value: every view needs this.
        data = {name: getattr(self, name) for name in _RULE_NAMES}
        if not complete:
            for name in OPTIONAL:
                if name in data and data[name] == OPTIONAL_DEFAULTS[name]:
                    del data[name]
        return data


_RULE_NAMES = tuple(f.name for f in fields(Rules))

#: What each parameter accepts: (type, low, high) for numbers, bool for switches,
#: (str, choices) for a choice.  (The shape depends on the first item: ``Any``.)
RANGES: dict[str, tuple[Any, ...]] = {
    "upcard_offer": (bool,),
    "dead_hand_stock": (int, 0, 10),
    "gin_bonus": (int, 0, 100),
    "undercut_bonus": (int, 0, 100),
    "knock_limit": (int, 0, 10),
    "target_score": (int, 1, 1000),
    "single_hand": (bool,),
    "knocker_arranges": (bool,),
    "defender_arranges": (bool,),
    "turn_seconds": (int, 5, 2_592_000),
    "starter": (str, ("alternate", "seat_0", "loser")),
    "hints": (bool,),
    "oklahoma": (bool,),
    "spade_doubles": (bool,),
    "big_gin_bonus": (int, 0, 100),
    "hollywood": (bool,),
    "game_bonus": (int, 0, 1000),
    "box_bonus": (int, 0, 100),
    "shutout_doubles": (bool,),
}

#: Parameters that may be null (not set).
NULLABLE = frozenset({"turn_seconds", "hints", "big_gin_bonus"})
#: Parameters added after the first records: left out of recorded rules while at their
#: default, and taken at their default when recorded rules lack them.
OPTIONAL = frozenset(
    {"turn_seconds", "starter", "hints", "oklahoma", "spade_doubles", "big_gin_bonus", "hollywood", "game_bonus",
     "box_bonus", "shutout_doubles"}
)
OPTIONAL_DEFAULTS = {f.name: f.default for f in fields(Rules) if f.name in OPTIONAL}

PRESETS: dict[str, Rules] = {
    # Seeds 000 and 003: play until the stock is empty, 25-point bonuses.
    "classic": Rules(preset="classic"),
    # Seed 001: the hand is dead when two cards are left in the stock.
    "short-stock": Rules(preset="short-stock", dead_hand_stock=2),
    # Seed 002: the upcard is offered first, and the hand is dead at two stock cards.
    "upcard-offer": Rules(preset="upcard-offer", upcard_offer=True, dead_hand_stock=2),
    # Seed 004: upcard offer, dead at two, Gin 20 and undercut 10; the knocker may lay
    # out any arrangement, and the defender confirms (or changes) the suggested defense.
    "bonus-20-10": Rules(
        preset="bonus-20-10",
        upcard_offer=True,
        dead_hand_stock=2,
        gin_bonus=20,
        undercut_bonus=10,
        knocker_arranges=True,
        defender_arranges=True,
    ),
    # The variants of the rule books, with the match bonuses they are played with.
    "oklahoma": Rules(
        preset="oklahoma",
        upcard_offer=True,
        dead_hand_stock=2,
        target_score=150,
        oklahoma=True,
        spade_doubles=True,
        game_bonus=100,
        box_bonus=20,
        shutout_doubles=True,
    ),
    "straight": Rules(
        preset="straight",
        upcard_offer=True,
        dead_hand_stock=2,
        knock_limit=0,
        big_gin_bonus=31,
        game_bonus=100,
        box_bonus=25,
        shutout_doubles=True,
    ),
    "hollywood": Rules(
        preset="hollywood",
        upcard_offer=True,
        dead_hand_stock=2,
        hollywood=True,
        game_bonus=100,
        box_bonus=25,
        shutout_doubles=True,
    ),
}

PRESET_DESCRIPTIONS: dict[str, str] = {
    "classic": "Play until the stock is empty; Gin and undercut bonuses of 25; the starter alternates; "
    "the best melds and layoffs are applied automatically (the knocker may choose among its layouts of least deadwood).",
    "short-stock": "As classic, but the hand is dead when two cards are left in the stock.",
    "upcard-offer": "As classic, but the first upcard is offered to the starter, then to the other player, "
    "and the hand is dead at two stock cards.",
    "bonus-20-10": "Upcard offer, dead at two stock cards, Gin bonus 20 and undercut bonus 10; the starter alternates; "
    "the knocker may lay out any legal arrangement and the defender confirms or changes the suggested melds and layoffs.",
    "oklahoma": "Oklahoma Gin: the first upcard's value is the hand's knock limit (an ace: Gin only), and a spade "
    "upcard doubles the hand's score; upcard offer, dead at two stock cards, game to 150 with a game bonus of 100, "
    "20 a box and the shutout doubled.",
    "straight": "Straight Gin: no knocking, a hand ends only in Gin (Big Gin 31) or a dead hand; upcard offer, dead "
    "at two stock cards, game to 100 with a game bonus of 100, 25 a box and the shutout doubled.",
    "hollywood": "Hollywood scoring: three games to 100 run at once (a player's first hand won scores in game one, "
    "the second in games one and two, the third onward in all three); the match ends when all three are decided; "
    "upcard offer, dead at two stock cards, a game bonus of 100, 25 a box and the shutout doubled in each game.",
}

DEFAULT_PRESET = "classic"


def _check_value(name: str, value: object) -> object:
    spec = RANGES[name]
    if value is None and name in NULLABLE:
        return None
    if spec[0] is bool:
        if not isinstance(value, bool):
            raise RulesError(f"{name} must be true or false, got {value!r}", name)
        return value
    if spec[0] is str:
        if not isinstance(value, str) or value not in spec[1]:
            raise RulesError(f"{name} must be one of {', '.join(spec[1])}, got {value!r}", name)
        return value
    _, low, high = spec
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        nullable = " (or null)" if name in NULLABLE else ""
        raise RulesError(f"{name} must be a whole number from {low} to {high}{nullable}, got {value!r}", name)
    return value


def resolve_rules(spec: Mapping[str, object] | None = None) -> Rules:
    """A preset (default ``classic``) with any parameter overridden, range-checked."""
    spec = dict(spec or {})
    name = spec.pop("preset", DEFAULT_PRESET)
    if name not in PRESETS:
        raise RulesError(f"unknown preset {name!r}; the presets are {', '.join(PRESETS)}", "preset")
    unknown = sorted(set(spec) - set(RANGES))
    if unknown:
        raise RulesError(
            f"unknown rules parameter(s) {', '.join(map(repr, unknown))}; the parameters are {', '.join(RANGES)}",
            unknown[0],
        )
    # Each value checked against its parameter: its type is the one the name's field has.
    overrides: dict[str, Any] = {k: _check_value(k, v) for k, v in spec.items()}
    return check_combination(replace(PRESETS[name], **overrides))


def check_combination(rules: Rules) -> Rules:
    """The rules, if their parameters can be played together (the books' variants compose
    except where one decides what another would)."""
    if rules.oklahoma and rules.knock_limit != 10:
        raise RulesError(
            f"under oklahoma the first upcard sets each hand's knock limit: leave knock_limit at 10, got {rules.knock_limit}",
            "knock_limit",
        )
    if rules.spade_doubles and not rules.oklahoma:
        raise RulesError("spade_doubles is a rule of oklahoma: set oklahoma too", "spade_doubles")
    if rules.hollywood and rules.single_hand:
        raise RulesError("hollywood plays three games over many hands: single_hand cannot be set with it", "single_hand")
    return rules


def rules_from_json(data: Mapping[str, object]) -> Rules:
    """Rules exactly as recorded in an event: every field present and in range."""
    data = dict(data)
    names = {f.name for f in fields(Rules)} - OPTIONAL
    missing = sorted(names - set(data))
    if missing:
        raise RulesError(f"recorded rules lack {', '.join(missing)}", missing[0])
    preset = data.pop("preset")
    if preset not in PRESETS:
        raise RulesError(f"unknown preset {preset!r}", "preset")
    unknown = sorted(set(data) - set(RANGES))
    if unknown:
        raise RulesError(f"unknown rules parameter(s) {', '.join(map(repr, unknown))}", unknown[0])
    # Each value checked against its parameter: its type is the one the name's field has.
    recorded: dict[str, Any] = {k: _check_value(k, v) for k, v in data.items()}
    return check_combination(Rules(preset=preset, **recorded))


def hand_knock_limit(rules: Rules, upcard: str | None) -> int:
    """The most deadwood a player may knock with in a hand whose first upcard is
    ``upcard``: the rules' ``knock_limit``, or under ``oklahoma`` the upcard's value (an
    ace: 0, Gin only; a face card: 10).

    >>> oklahoma = resolve_rules({"preset": "oklahoma"})
    >>> hand_knock_limit(oklahoma, "3S"), hand_knock_limit(oklahoma, "AH"), hand_knock_limit(oklahoma, "QD")
    (3, 0, 10)
    """
    if not rules.oklahoma or upcard is None:
        return rules.knock_limit
    value = CARD_VALUE[upcard]
    return 0 if value == 1 else value


def doubled(rules: Rules, upcard: str | None) -> bool:
    """Whether the hand's score is doubled: a spade first upcard under ``spade_doubles``."""
    return rules.spade_doubles and upcard is not None and upcard[1] == "S"

"""The rules: a match's rules as asked for (a preset and overrides) and as played, and the
presets."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from service.engine import PRESETS
from service.engine.rules import RANGES

from .common import Base, StrictBool

#: What a rules parameter means, where its name does not say it all.
RULE_DESCRIPTIONS = {
    "knocker_arranges": "The knocker may lay out any legal arrangement within the knock limit; otherwise only one of "
    "its arrangements of the least deadwood. A knock without melds lays out, of those of the least deadwood, the one "
    "that leaves the defender the most after its best defense.",
    "starter": "Who starts each hand: alternate (the default: seat 0 starts the first hand, then the starter "
    "alternates), seat_0 (seat 0 starts every hand) or loser (seat 0 starts the first hand, then the loser of the "
    "last hand starts; after a dead hand, which nobody lost, the same seat starts again).",
    "hints": "Whether a seat may ask for hints (GET /matches/{id}/hint). Left out, the match decides: on against the "
    "computer and for two people on one device, off when a seat is open for a player to join or two players hold the "
    "seats. A match with a hint shown is never rated.",
}


def _rule_field(name: str):
    spec = RANGES[name]
    if spec[0] is bool:
        options: dict[str, Any] = {"metadata": {"description": RULE_DESCRIPTIONS[name]}} if name in RULE_DESCRIPTIONS else {}
        return StrictBool(**options)
    if spec[0] is str:
        return fields.String(validate=validate.OneOf(spec[1]), metadata={"description": RULE_DESCRIPTIONS[name]})
    if name == "big_gin_bonus":
        return fields.Integer(
            strict=True, allow_none=True, validate=validate.Range(spec[1], spec[2]),
            metadata={"description": "Big Gin (all eleven cards melded after the draw, laid down without a discard) scores the defender's deadwood plus this bonus; null: not played."},
        )
    if name == "turn_seconds":
        return fields.Integer(
            strict=True, allow_none=True, validate=validate.Range(spec[1], spec[2]),
            metadata={"description": "Seconds a seat has for its turn (null: no clock), e.g. 30 for live play or 259200 (3 days) by correspondence. Once they have passed, the other seat may claim the match (claim_timeout)."},
        )
    return fields.Integer(strict=True, validate=validate.Range(spec[1], spec[2]))


RulesSpecSchema = Base.from_dict(
    {
        "preset": fields.String(
            validate=validate.OneOf(list(PRESETS)),
            metadata={"description": "A named ruleset; every other field overrides one of its parameters."},
        ),
        **{name: _rule_field(name) for name in RANGES},
    },
    name="RulesSpec",
)


class RulesSchema(Schema):
    preset = fields.String(required=True)
    upcard_offer = fields.Boolean(required=True)
    dead_hand_stock = fields.Integer(required=True)
    gin_bonus = fields.Integer(required=True)
    undercut_bonus = fields.Integer(required=True)
    knock_limit = fields.Integer(required=True)
    target_score = fields.Integer(required=True)
    single_hand = fields.Boolean(required=True)
    knocker_arranges = fields.Boolean(required=True, metadata={"description": RULE_DESCRIPTIONS["knocker_arranges"]})
    defender_arranges = fields.Boolean(required=True)
    turn_seconds = fields.Integer(allow_none=True, required=True, metadata={"description": "Seconds per turn; null: no clock."})
    starter = fields.String(
        required=True, validate=validate.OneOf(RANGES["starter"][1]), metadata={"description": RULE_DESCRIPTIONS["starter"]}
    )
    hints = fields.Boolean(
        allow_none=True, required=True,
        metadata={"description": "Whether a seat may ask for hints (GET /matches/{id}/hint). Null for matches made before hints existed: then against the computer only."},
    )


    oklahoma = fields.Boolean(required=True, metadata={"description": "The first upcard's value is each hand's knock limit (an ace: Gin only)."})
    spade_doubles = fields.Boolean(required=True, metadata={"description": "Under oklahoma, a spade first upcard doubles the hand's points."})
    big_gin_bonus = fields.Integer(allow_none=True, required=True, metadata={"description": "Big Gin's bonus; null: not played."})
    hollywood = fields.Boolean(required=True, metadata={"description": "Hollywood scoring: three games at once."})
    game_bonus = fields.Integer(required=True)
    box_bonus = fields.Integer(required=True)
    shutout_doubles = fields.Boolean(required=True)


class PresetSchema(Schema):
    name = fields.String(required=True)
    description = fields.String(required=True)
    rules = fields.Nested(RulesSchema, required=True)


class PresetListSchema(Schema):
    presets = fields.List(fields.Nested(PresetSchema), required=True)
    parameters = fields.Dict(required=True, metadata={"description": "Each parameter's accepted range."})

"""The coach: a hint for the seat to play, and the analysis of a hand's or a match's
decisions."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from .common import Card
from .play import ActionSchema


class HintSchema(Schema):
    action = fields.Nested(
        ActionSchema, required=True,
        metadata={"description": "The play suggested: one of the view's legal_actions, as listed (post it as is to follow the hint)."},
    )
    reason = fields.String(required=True, metadata={"description": "Why, in a sentence.", "example": "keep 8♠ 9♠: 7♠ and 10♠ are both still live"})
    seq = fields.Integer(required=True, metadata={"description": "The seq of the hint_shown event that records it."})
    version = fields.Integer(required=True, metadata={"description": "The match's version after it (also the ETag)."})
    new = fields.Boolean(required=True, metadata={"description": "False when the same hint was already shown at this point (no new event)."})


class CoachPlaySchema(Schema):
    type = fields.String(required=True, validate=validate.OneOf(["draw", "pass", "discard", "knock", "gin"]))
    source = fields.String(validate=validate.OneOf(["stock", "discard"]), metadata={"description": "draw only"})
    card = Card(metadata={"description": "discard, knock, gin"})


class DecisionSchema(Schema):
    seq = fields.Integer(required=True, metadata={"description": "The seq of the event the play made."})
    seat = fields.Integer(required=True)
    kind = fields.String(
        required=True, validate=validate.OneOf(["upcard", "draw", "discard"]),
        metadata={"description": "upcard: take or pass the first upcard; draw: the pile's top card or the stock; discard: the discard, with knocking, Gin or playing on."},
    )
    played = fields.Nested(CoachPlaySchema, required=True)
    best = fields.Nested(CoachPlaySchema, required=True, metadata={"description": "The analyser's best play."})
    cost = fields.Float(required=True, metadata={"description": "Expected points the play cost against the best (0 when it is the best), from what the seat knew then."})
    class_ = fields.String(
        required=True, data_key="class", attribute="class", validate=validate.OneOf(["good", "inaccuracy", "mistake", "blunder"]),
        metadata={"description": "good: cost below 1.5; inaccuracy: below 4; mistake: below 10; blunder: 10 or more."},
    )
    reason = fields.String(required=True, metadata={"description": "Why the best play is best."})


class ClassCountsSchema(Schema):
    good = fields.Integer(required=True)
    inaccuracy = fields.Integer(required=True)
    mistake = fields.Integer(required=True)
    blunder = fields.Integer(required=True)


ACCURACY = (
    "Per seat: the mean score of its decisions (100 for a play that costs nothing, 10 less per point it cost, at least 0); "
    "null without decisions."
)


class HandAnalysisSchema(Schema):
    match_id = fields.String(required=True)
    hand = fields.Integer(required=True)
    over = fields.Boolean(required=True, metadata={"description": "Whether the hand is over (the operator may analyse one being played)."})
    analyser = fields.String(required=True, metadata={"description": "The version of the computer whose measures weigh the plays."})
    decisions = fields.List(fields.Nested(DecisionSchema), required=True)
    accuracy = fields.List(fields.Float(allow_none=True), required=True, metadata={"description": ACCURACY})
    counts = fields.List(fields.Nested(ClassCountsSchema), required=True, metadata={"description": "Per seat: its decisions in each class."})


class HandAccuracySchema(Schema):
    hand = fields.Integer(required=True)
    over = fields.Boolean(required=True)
    accuracy = fields.List(fields.Float(allow_none=True), required=True, metadata={"description": ACCURACY})
    counts = fields.List(fields.Nested(ClassCountsSchema), required=True)


class MatchAnalysisSchema(Schema):
    match_id = fields.String(required=True)
    analyser = fields.String(required=True)
    hands = fields.List(fields.Nested(HandAccuracySchema), required=True, metadata={"description": "The hands analysed: every hand over (and, for the operator, the one being played)."})
    accuracy = fields.List(fields.Float(allow_none=True), required=True, metadata={"description": "Over every decision of those hands. " + ACCURACY})
    counts = fields.List(fields.Nested(ClassCountsSchema), required=True)

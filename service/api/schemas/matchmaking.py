"""Matchmaking: a ticket asked for, and a ticket as its owner sees it."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from .common import Base, StrictBool
from .rules import RulesSchema, RulesSpecSchema

RANGE = (
    "A rating range around the player's rating that widens while the ticket waits: ±100 at first, +50 every "
    "10 seconds (live) or every hour (correspondence), at most ±500. Two tickets are paired when each rating "
    "is within the other ticket's range."
)


class TicketSpecSchema(Base):
    kind = fields.String(
        load_default="live", validate=validate.OneOf(["live", "correspondence"]),
        metadata={"description": "live: both play now, with turn_seconds a turn; correspondence: days_per_move a move. Default live."},
    )
    rules = fields.Nested(
        RulesSpecSchema, load_default=dict,
        metadata={"description": "A preset and overrides (without turn_seconds: the clock is the ticket's own). Only tickets with the same rules are paired."},
    )
    single_hand = StrictBool(metadata={"description": "Play one hand only (default: to the target score)."})
    turn_seconds = fields.Integer(
        strict=True, validate=validate.Range(10, 600),
        metadata={"description": "Live tickets: seconds a turn, 10 to 600 (default 30)."},
    )
    days_per_move = fields.Integer(
        strict=True, validate=validate.Range(1, 30),
        metadata={"description": "Correspondence tickets: days a move, 1 to 30 (default 3)."},
    )
    rated = StrictBool(
        load_default=True,
        metadata={"description": "Rated (default) or casual: a casual match is never rated. Only tickets with the same choice are paired."},
    )


class RatingRangeSchema(Schema):
    low = fields.Float(required=True)
    high = fields.Float(required=True)


class TicketMatchSchema(Schema):
    id = fields.String(required=True, metadata={"description": "The match both tickets' players were seated in."})
    seat = fields.Integer(required=True, metadata={"description": "This ticket's player's seat (0 starts the first hand)."})
    token = fields.String(
        allow_none=True, required=True,
        metadata={"description": "The seat token, shown only to the ticket's owner, for an hour after the pairing (then null): the seat is bound to the player, whose own token acts for it too."},
    )
    token_until = fields.String(allow_none=True, required=True, metadata={"description": "Until when the token is shown."})


class TicketSchema(Schema):
    id = fields.String(required=True)
    status = fields.String(
        required=True, validate=validate.OneOf(["waiting", "paired", "cancelled", "lapsed"]),
        metadata={"description": "waiting; paired (see match); cancelled (DELETE); lapsed (a live ticket not polled in time)."},
    )
    kind = fields.String(required=True, validate=validate.OneOf(["live", "correspondence"]))
    rules = fields.Nested(RulesSchema, required=True, metadata={"description": "The rules of the match, clock included."})
    rated = fields.Boolean(required=True)
    rating = fields.Float(required=True, metadata={"description": "The player's rating when the ticket was posted."})
    rating_range = fields.Nested(RatingRangeSchema, allow_none=True, required=True, metadata={"description": RANGE + " Null once the ticket no longer waits."})
    created_at = fields.String(required=True)
    poll_within_seconds = fields.Integer(
        allow_none=True, required=True,
        metadata={"description": "Live tickets: poll (GET) the ticket at least this often, else it lapses. Null for correspondence tickets, which wait until paired or cancelled."},
    )
    lapses_at = fields.String(allow_none=True, required=True, metadata={"description": "When a waiting live ticket lapses unless polled before."})
    match = fields.Nested(TicketMatchSchema, allow_none=True, required=True, metadata={"description": "Once paired: the match, the seat and its token."})

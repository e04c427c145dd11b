"""A match as a whole: creating and joining one, its invite, the rematch, the lobby and
the lists of matches."""

from __future__ import annotations

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from .common import END_REASONS, LEVELS, STATUSES, Base, Name, StrictBool
from .play import SeatSchema, SeatViewSchema
from .rules import RulesSchema, RulesSpecSchema


class SeatSpecSchema(Base):
    name = Name(metadata={"example": "Ann"})
    kind = fields.String(
        load_default="human", validate=validate.OneOf(["human", "computer", "open"]),
        metadata={"description": "open: a seat for a player on another device, who joins with the match's invite (POST /matches/{id}/join); an open seat has no name (the player gives it) and no level."},
    )
    level = fields.String(
        validate=validate.OneOf(LEVELS), metadata={"description": "Computer seats only; default medium."}
    )

    @validates_schema
    def _level_for_computers(self, data, **kwargs):
        if data.get("kind") in ("human", "open") and "level" in data:
            raise ValidationError("only a computer seat has a level", "level")
        if data.get("kind") == "open" and "name" in data:
            raise ValidationError("an open seat is named by the player who joins it", "name")


class CreateMatchSchema(Base):
    rules = fields.Nested(RulesSpecSchema, load_default=dict)
    single_hand = StrictBool(
        metadata={"description": "Play one hand only (default: play to the target score). Same as rules.single_hand."}
    )
    seats = fields.List(
        fields.Nested(SeatSpecSchema),
        validate=validate.Length(2, 2),
        metadata={"description": "Exactly two seats; default a person against a medium computer."},
    )
    public = StrictBool(
        load_default=False,
        metadata={"description": "With an open seat: list the match in the lobby (GET /lobby), where anyone may join it without the invite code. Default false."},
    )


class JoinSchema(Base):
    code = fields.String(
        validate=validate.Length(1, 200),
        metadata={"description": "The invite code of the match (from the creator's invite); not needed for a public match."},
    )
    name = Name(metadata={"example": "Bob", "description": "The name to play under (default, for a player: the player's name)."})


class LobbyQuerySchema(Base):
    limit = fields.Integer(
        load_default=20,
        validate=validate.Range(1, 100),
        metadata={"description": "Page size, 1 to 100 (default 20); a larger one is refused with 422."},
    )
    cursor = fields.String(metadata={"description": "The next_cursor of the previous page."})


class CreatedSeatSchema(SeatSchema):
    token = fields.String(
        allow_none=True,
        metadata={"description": "Bearer token for this seat (human seats only). Shown once: only its hash is stored."},
    )


class InviteSchema(Schema):
    code = fields.String(required=True, metadata={"description": "The invite code: shown this once (only its hash is kept)."})
    url = fields.String(
        required=True, metadata={"description": "Opens the reference web client's join page for this match and code."}
    )


class MatchCreatedSchema(Schema):
    id = fields.String(required=True, metadata={"description": "The match id (a UUID)."})
    version = fields.Integer(required=True)
    rules = fields.Nested(RulesSchema, required=True)
    seats = fields.List(fields.Nested(CreatedSeatSchema), required=True)
    view = fields.Nested(SeatViewSchema, required=True, metadata={"description": "The first human seat's view."})
    public = fields.Boolean(required=True, metadata={"description": "Listed in the lobby (with an open seat)."})
    invite = fields.Nested(
        InviteSchema, allow_none=True, required=True,
        metadata={"description": "With an open seat: the invite to send to the other player; else null."},
    )


class JoinedSchema(Schema):
    match_id = fields.String(required=True)
    seat = fields.Integer(required=True, metadata={"description": "The seat taken."})
    token = fields.String(required=True, metadata={"description": "Bearer token for that seat. Shown once: only its hash is stored."})
    view = fields.Nested(SeatViewSchema, required=True, metadata={"description": "The seat's view (the first hand is dealt once every seat is taken)."})


class RematchSchema(Schema):
    id = fields.String(required=True, metadata={"description": "The rematch's id."})
    seat = fields.Integer(required=True, metadata={"description": "The caller's seat in the rematch (the seats are swapped, so the other seat starts)."})
    token = fields.String(
        allow_none=True, required=True,
        metadata={"description": "The caller's seat token in the rematch, shown once: null when this seat asked before and got it then."},
    )
    view = fields.Nested(SeatViewSchema, required=True, metadata={"description": "The caller's view of the rematch."})


class LobbyEntrySchema(Schema):
    id = fields.String(required=True)
    rules = fields.Nested(RulesSchema, required=True)
    creator = fields.String(required=True, metadata={"description": "The name of the player waiting."})
    created_at = fields.String(required=True)


class LobbySchema(Schema):
    items = fields.List(fields.Nested(LobbyEntrySchema), required=True)
    next_cursor = fields.String(allow_none=True, required=True, metadata={"description": "Pass as cursor for the next page; null at the end."})


class MatchSummarySchema(Schema):
    id = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    preset = fields.String(required=True)
    seats = fields.List(fields.Nested(SeatSchema), required=True)
    scores = fields.List(fields.Integer(), required=True)
    hand_number = fields.Integer(required=True)
    version = fields.Integer(required=True)
    winner = fields.Integer(allow_none=True, required=True)
    created_at = fields.String(required=True)
    updated_at = fields.String(required=True)
    end_reason = fields.String(allow_none=True, required=True, validate=validate.OneOf(END_REASONS))
    rematch = fields.String(allow_none=True, required=True, metadata={"description": "The match this one is played again as."})


class MatchListQuerySchema(Base):
    status = fields.String(validate=validate.OneOf(STATUSES))
    limit = fields.Integer(
        load_default=20,
        validate=validate.Range(1, 100),
        metadata={"description": "Page size, 1 to 100 (default 20); a larger one is refused with 422."},
    )
    cursor = fields.String(metadata={"description": "The next_cursor of the previous page."})


class MatchListSchema(Schema):
    items = fields.List(fields.Nested(MatchSummarySchema), required=True)
    next_cursor = fields.String(allow_none=True, required=True, metadata={"description": "Pass as cursor for the next page; null at the end."})

"""Players: making one, a player's own record and matches, profiles, ratings and the
leaderboard."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from .common import END_REASONS, STATUSES, Base, Name
from .play import SeatSchema


class PlayerSpecSchema(Base):
    name = Name(required=True, metadata={"example": "Ann"})


class PlayerCreatedSchema(Schema):
    id = fields.String(required=True, metadata={"description": "The player's id: public (seats and records name it)."})
    name = fields.String(required=True)
    token = fields.String(
        required=True,
        metadata={"description": "The player token (a bearer token): shown only this once; only its hash is kept. Keep it to play from any device."},
    )


ESTABLISHED = (
    "Whether the rating is established: its deviation is at most 110 (the provisional line of chess servers); "
    "else it is provisional. Only established ratings are on the leaderboard."
)
ESTABLISHED_OPPONENTS = (
    "Distinct opponents of rated matches who were established when played: the leaderboard asks for "
    "`min_opponents` of them."
)
RATED_MATCHES = (
    "Rated matches played: between two different players (signed-in ones, when the service rates only those), "
    "with no hint, where each seat made a move of its own before the end."
)


class RatingSchema(Schema):
    rating = fields.Float(required=True, metadata={"description": "Glicko-2 rating (1500 to start)."})
    deviation = fields.Float(required=True, metadata={"description": "Its deviation (350 to start): how uncertain it is."})
    matches = fields.Integer(required=True, metadata={"description": RATED_MATCHES})
    wins = fields.Integer(required=True)
    established = fields.Boolean(required=True, metadata={"description": ESTABLISHED})
    established_opponents = fields.Integer(required=True, metadata={"description": ESTABLISHED_OPPONENTS})


class PlayerSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    signed_in = fields.Boolean(
        required=True, metadata={"description": "Signed in by the front end's identity provider (else a guest)."}
    )
    created_at = fields.String(required=True)
    rating = fields.Nested(RatingSchema, required=True)


class ProfileSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True)
    rating = fields.Float(required=True, metadata={"description": "Glicko-2 rating (1500 to start)."})
    deviation = fields.Float(required=True, metadata={"description": "Its deviation (350 to start): how uncertain it is."})
    matches = fields.Integer(required=True, metadata={"description": RATED_MATCHES})
    wins = fields.Integer(required=True)
    established = fields.Boolean(required=True, metadata={"description": ESTABLISHED})
    established_opponents = fields.Integer(required=True, metadata={"description": ESTABLISHED_OPPONENTS})


class PlayerMatchSchema(Schema):
    id = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    seat = fields.Integer(required=True, metadata={"description": "The player's seat."})
    opponent = fields.Nested(SeatSchema, required=True)
    turn = fields.Integer(allow_none=True, required=True, metadata={"description": "The seat to act, or null."})
    your_turn = fields.Boolean(required=True, metadata={"description": "Whether the player is to act."})
    deadline = fields.String(allow_none=True, required=True, metadata={"description": "Under a clock: when the seat to act runs out of time."})
    scores = fields.List(fields.Integer(), required=True)
    hand_number = fields.Integer(required=True)
    winner = fields.Integer(allow_none=True, required=True)
    end_reason = fields.String(allow_none=True, required=True, validate=validate.OneOf(END_REASONS))
    version = fields.Integer(required=True)
    created_at = fields.String(required=True)


class PlayerMatchListSchema(Schema):
    items = fields.List(fields.Nested(PlayerMatchSchema), required=True)
    next_cursor = fields.String(allow_none=True, required=True)


class LeaderboardEntrySchema(ProfileSchema):
    rank = fields.Integer(required=True)


class LeaderboardSchema(Schema):
    items = fields.List(fields.Nested(LeaderboardEntrySchema), required=True)
    next_cursor = fields.String(allow_none=True, required=True)
    min_matches = fields.Integer(required=True, metadata={"description": "Rated matches a player needs to be listed."})
    max_deviation = fields.Float(
        required=True, metadata={"description": "The largest deviation listed: only established ratings are (110)."}
    )
    min_opponents = fields.Integer(
        required=True,
        metadata={"description": "Distinct opponents, established when played, a player needs to be listed (a setting of the service)."},
    )

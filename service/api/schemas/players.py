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


#: Notifications per page of ``GET /players/me/notifications``: by default, and at most.
NOTIFICATIONS_PAGE = 100
NOTIFICATIONS_PAGE_MAX = 500
NOTIFICATION_KINDS = ("your_move", "match_found", "invite_accepted", "rematch_offered", "match_ended", "reminder")
RESULTS = ("won", "lost", "draw", "aborted")


class NotificationsQuerySchema(Base):
    after = fields.Integer(
        load_default=0, validate=validate.Range(0),
        metadata={"description": "Return the notifications after this cursor (a notification's `id`, or a page's `next_cursor`)."},
    )
    limit = fields.Integer(
        load_default=NOTIFICATIONS_PAGE,
        validate=validate.Range(1, NOTIFICATIONS_PAGE_MAX),
        metadata={"description": f"Page size, 1 to {NOTIFICATIONS_PAGE_MAX} (default {NOTIFICATIONS_PAGE}); a larger one is refused with 422."},
    )


class FeedStreamQuerySchema(Base):
    after = fields.Integer(
        load_default=0, validate=validate.Range(0),
        metadata={"description": "Send the notifications after this cursor (the Last-Event-ID header wins)."},
    )
    wait = fields.Integer(
        load_default=30, validate=validate.Range(0, 3600),
        metadata={"description": "Close the stream after this many seconds, 0 to 3600."},
    )


class NotificationSchema(Schema):
    id = fields.String(required=True, metadata={"description": "The notification's cursor: ids grow in the order notifications are stored.", "example": "2097152"})
    kind = fields.String(required=True, validate=validate.OneOf(NOTIFICATION_KINDS))
    match = fields.String(required=True, metadata={"description": "The match it is about (for `rematch_offered`: the rematch)."})
    seat = fields.Integer(required=True, metadata={"description": "The player's seat in that match."})
    created_at = fields.String(required=True, metadata={"description": "When the event that caused it was stored (a reminder: when it was made)."})
    hand = fields.Integer(metadata={"description": "`your_move`: the hand being played."})
    deadline = fields.String(allow_none=True, metadata={"description": "`your_move` and `reminder`: when the move's time runs out (null: no clock)."})
    opponent = fields.String(allow_none=True, metadata={"description": "`match_found`, `invite_accepted`, `rematch_offered`: the other seat's name."})
    rematch_of = fields.String(metadata={"description": "`rematch_offered`: the match that ended."})
    result = fields.String(validate=validate.OneOf(RESULTS), metadata={"description": "`match_ended`: for the player's seat."})
    winner = fields.Integer(allow_none=True, metadata={"description": "`match_ended`: the winning seat (null: a draw, or called off)."})
    reason = fields.String(validate=validate.OneOf(END_REASONS), metadata={"description": "`match_ended`: why it ended."})
    scores = fields.List(fields.Integer(), metadata={"description": "`match_ended`: the final scores, by seat."})


class NotificationPageSchema(Schema):
    items = fields.List(fields.Nested(NotificationSchema), required=True)
    next_cursor = fields.String(
        required=True, metadata={"description": "Pass it as `after` for what follows (the `after` given, when the page is empty)."}
    )


#: Rated matches per page of ``GET /players/{id}/ratings``: by default, and at most.
RATING_HISTORY_PAGE = 50
RATING_HISTORY_PAGE_MAX = 500


class RatingHistoryQuerySchema(Base):
    before = fields.Integer(
        validate=validate.Range(0),
        metadata={"description": "Only the rated matches older than this cursor (a page's `next_cursor`)."},
    )
    limit = fields.Integer(
        load_default=RATING_HISTORY_PAGE, validate=validate.Range(1, RATING_HISTORY_PAGE_MAX),
        metadata={"description": f"Page size, 1 to {RATING_HISTORY_PAGE_MAX} (default {RATING_HISTORY_PAGE})."},
    )


class RatedOpponentSchema(Schema):
    id = fields.String(required=True, metadata={"description": "The opponent's player id."})
    name = fields.String(allow_none=True, required=True, metadata={"description": "The opponent's name now (null: the player is no more)."})


class RatingChangeSchema(Schema):
    match = fields.String(required=True, metadata={"description": "The rated match."})
    rated_at = fields.String(required=True, metadata={"description": "When it ended."})
    result = fields.String(required=True, validate=validate.OneOf(["won", "lost", "draw"]))
    opponent = fields.Nested(RatedOpponentSchema, required=True)
    rating_before = fields.Float(required=True, metadata={"description": "The Glicko-2 rating before the match."})
    rating = fields.Float(required=True, metadata={"description": "The rating after it."})
    change = fields.Float(required=True, metadata={"description": "rating - rating_before."})
    deviation = fields.Float(required=True, metadata={"description": "The deviation after it."})


class RatingHistorySchema(Schema):
    items = fields.List(fields.Nested(RatingChangeSchema), required=True, metadata={"description": "Newest first."})
    next_cursor = fields.String(allow_none=True, required=True, metadata={"description": "Pass it as `before` for older ones (null: no more)."})


class DataMatchSchema(Schema):
    id = fields.String(required=True)
    seat = fields.Integer(required=True, metadata={"description": "The player's seat."})
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    record = fields.Dict(metadata={"description": "A finished match: its complete signed record (the match record's JSON Schema), as its export."})
    events = fields.List(fields.Dict(), metadata={"description": "An unfinished match: its events as the seat may see them (as GET /matches/{id}/events)."})


class PersonalDataLineSchema(Schema):
    """A line of the player's data: ``type`` names the one other member, which holds it."""

    type = fields.String(required=True, validate=validate.OneOf(["player", "rating_change", "match", "notification", "ticket"]))
    player = fields.Nested(PlayerSchema)
    rating_change = fields.Nested(RatingChangeSchema)
    match = fields.Nested(DataMatchSchema)
    notification = fields.Nested(NotificationSchema)
    ticket = fields.Nested("TicketSchema")


class PlayerDeletedSchema(Schema):
    id = fields.String(required=True, metadata={"description": "The player deleted: no token of theirs works any more."})
    deleted_at = fields.String(required=True)
    matches = fields.Integer(required=True, metadata={"description": "The matches in which their seats now show a deleted player."})


class SubjectQuerySchema(Base):
    subject = fields.String(required=True, validate=validate.Length(1, 500), metadata={"description": "The `sub` of the player's sign-in tokens (of the service's issuer)."})

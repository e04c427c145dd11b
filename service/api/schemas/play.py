"""Playing a match: a seat's actions, its view, the events, and their pages and stream."""

from __future__ import annotations

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from .common import END_REASONS, LEVELS, PHASES, RESULTS, STATUSES, Base, Card, Cards
from .rules import RulesSchema


class LayoffSchema(Base):
    card = Card(required=True)
    meld = fields.Integer(strict=True, required=True, validate=validate.Range(0, 5), metadata={"description": "Index into the knocker's melds."})


ACTION_FIELDS = {
    "draw": {"source"},
    "pass": set(),
    "discard": {"card"},
    "knock": {"card", "melds"},
    "gin": {"card", "melds"},
    "big_gin": set(),
    "defend": {"melds", "layoffs"},
    "resign": set(),
    "claim_timeout": set(),
    "abort": set(),
}
REQUIRED_FIELDS = {"draw": {"source"}, "discard": {"card"}, "knock": {"card"}, "gin": {"card"}}


class ActionSchema(Base):
    """One seat command; every entry of a view's ``legal_actions`` can be posted as is.

    ``knock`` and ``gin`` without ``melds`` lay out, of the knocker's arrangements of
    the least deadwood, the one that leaves the defender the most after its best
    defense (the knocker may send its own instead).  ``defend`` with neither ``melds``
    nor ``layoffs`` takes the suggested best defense; with ``layoffs`` only, the
    defender keeps the best melds of the cards left after those layoffs; with ``melds``
    only, it lays off nothing.

    Beside the plays: ``resign`` (at any time while the match is played, in turn or not:
    the other seat wins), ``claim_timeout`` (once the other seat's deadline has passed,
    under a clock) and ``abort`` (call off a match nobody has joined yet)."""

    type = fields.String(required=True, validate=validate.OneOf(list(ACTION_FIELDS)))
    source = fields.String(validate=validate.OneOf(["stock", "discard"]), metadata={"description": "draw only"})
    card = Card(metadata={"description": "discard, knock, gin: the card to discard"})
    melds = fields.List(
        Cards(validate=validate.Length(3, 13)),
        validate=validate.Length(0, 4),
        metadata={
            "description": "knock, gin: the knocker's own layout (optional; any legal arrangement within the knock limit "
            "under knocker_arranges, otherwise one of the least deadwood; omitted: of those of the least deadwood, the one "
            "that leaves the defender the most after its best defense). defend: the defender's own melds (optional; "
            "omitted: the best melds of the cards left after the layoffs; with layoffs omitted too: the suggested best defense)."
        },
    )
    layoffs = fields.List(
        fields.Nested(LayoffSchema), validate=validate.Length(0, 10),
        metadata={"description": "defend only: the cards laid off onto the knocker's melds (omitted: none, unless melds are omitted too)"},
    )

    @validates_schema
    def _fields_fit_the_type(self, data, **kwargs):
        kind = data.get("type")
        if kind not in ACTION_FIELDS:
            return
        extra = set(data) - ACTION_FIELDS[kind] - {"type"}
        if extra:
            raise ValidationError(f"not a field of a {kind!r} action", sorted(extra)[0])
        missing = REQUIRED_FIELDS.get(kind, set()) - set(data)
        if missing:
            raise ValidationError(f"a {kind!r} action needs this field", sorted(missing)[0])


class SeatSchema(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True, allow_none=True, metadata={"description": "Null for an open seat."})
    kind = fields.String(required=True, validate=validate.OneOf(["human", "computer", "open"]))
    level = fields.String(allow_none=True, validate=validate.OneOf(LEVELS))
    player = fields.String(
        allow_none=True, metadata={"description": "The player holding the seat (see GET /players/{id}), if a player took it."}
    )


class KnockSchema(Schema):
    seat = fields.Integer(required=True)
    card = fields.String(
        required=True,
        metadata={"description": "The knocker's discard; for a Big Gin (big_gin), which discards nothing, the card drawn that made the eleven."},
    )
    gin = fields.Boolean(required=True)
    big_gin = fields.Boolean(metadata={"description": "Present (true) for a Big Gin: all eleven cards laid down, none discarded."})
    melds = fields.List(fields.List(fields.String()), required=True)
    deadwood_cards = fields.List(fields.String(), required=True)
    deadwood = fields.Integer(required=True)


class DefenseSchema(Schema):
    seat = fields.Integer(required=True)
    automatic = fields.Boolean(required=True)
    melds = fields.List(fields.List(fields.String()), required=True)
    layoffs = fields.List(fields.Nested(LayoffSchema), required=True)
    deadwood_cards = fields.List(fields.String(), required=True)
    deadwood = fields.Integer(required=True)


class HandResultSchema(Schema):
    hand = fields.Integer(required=True)
    result = fields.String(required=True, validate=validate.OneOf(RESULTS))
    winner = fields.Integer(allow_none=True, required=True)
    points = fields.Integer(required=True)
    doubled = fields.Boolean(
        required=True, metadata={"description": "The points were doubled (Oklahoma's spade upcard); false otherwise."}
    )
    knock = fields.Nested(KnockSchema, allow_none=True, required=True)
    defense = fields.Nested(DefenseSchema, allow_none=True, required=True)
    hands = fields.List(Cards(), required=True, metadata={"description": "Both seats' final hands, revealed."})


class OpponentSchema(Schema):
    card_count = fields.Integer(required=True)
    known_cards = Cards(
        required=True, metadata={"description": "Cards the opponent took from the discard pile and still holds."}
    )
    connected = fields.Boolean(
        allow_none=True, required=True,
        metadata={"description": "Whether the opponent has a live stream of this match open now (on any instance); null for the computer."},
    )


class HiddenCardsSchema(Schema):
    hands = fields.List(Cards(), required=True, metadata={"description": "Both seats' hands."})
    stock = Cards(required=True, metadata={"description": "The stock, top first."})


class SeatViewSchema(Schema):
    match_id = fields.String(required=True)
    status = fields.String(
        required=True, validate=validate.OneOf(STATUSES),
        metadata={"description": "waiting (for a player to take an open seat: no hand is dealt), active or finished."},
    )
    seat = fields.Integer(required=True, metadata={"description": "The seat this view is for (0 or 1)."})
    version = fields.Integer(required=True, metadata={"description": "Number of events so far; also the ETag."})
    phase = fields.String(required=True, validate=validate.OneOf(PHASES))
    turn = fields.Integer(allow_none=True, required=True, metadata={"description": "Seat to act, or null."})
    hand_number = fields.Integer(required=True)
    starter = fields.Integer(allow_none=True, required=True)
    rules = fields.Nested(RulesSchema, required=True)
    seats = fields.List(fields.Nested(SeatSchema), required=True)
    scores = fields.List(fields.Integer(), required=True)
    knock_limit = fields.Integer(allow_none=True, required=True, metadata={"description": "This hand's knock limit (under oklahoma its first upcard's value; 0: Gin only)."})
    doubled = fields.Boolean(required=True, metadata={"description": "This hand's points are doubled (oklahoma's spade upcard)."})
    hands_won = fields.List(fields.Integer(), required=True, metadata={"description": "Hands each seat has won in the match."})
    games = fields.List(fields.Dict(), allow_none=True, required=True, metadata={"description": "Under hollywood: its three games, each {scores, hands, winner}; else null."})
    settlement = fields.Dict(allow_none=True, required=True, metadata={"description": "A match ended on the scores under match bonuses: {games: [{scores, hands, winner, totals, shutout}], totals}; else null."})
    winner = fields.Integer(allow_none=True, required=True, metadata={"description": "Match winner once finished."})
    end_reason = fields.String(
        allow_none=True, required=True, validate=validate.OneOf(END_REASONS),
        metadata={"description": "How the match ended: score, resigned, timeout or aborted; null until it has."},
    )
    deadline = fields.String(
        allow_none=True, required=True,
        metadata={"description": "Under a clock: when the seat to act (turn) runs out of time, ISO 8601; else null."},
    )
    rematch = fields.String(
        allow_none=True, required=True,
        metadata={"description": "The match this one is played again as (POST /matches/{id}/rematch), once a seat asked."},
    )
    provenance = fields.Nested(
        "ProvenanceSchema", allow_none=True, required=True,
        metadata={"description": "Where the match came from: played here, or imported (with what the import could check)."},
    )
    hand = Cards(required=True, metadata={"description": "This seat's cards, by suit then rank."})
    melds = fields.List(Cards(), required=True, metadata={"description": "Best melds of the hand."})
    deadwood_cards = Cards(required=True)
    deadwood = fields.Integer(required=True)
    discard_pile = Cards(required=True, metadata={"description": "Bottom first; the last card is the top."})
    stock_count = fields.Integer(required=True)
    no_return = fields.String(
        allow_none=True, required=True, metadata={"description": "Card taken from the discard pile this turn: it may not be discarded now."}
    )
    opponent = fields.Nested(OpponentSchema, required=True)
    discard_deadwood = fields.Dict(
        keys=fields.String(),
        values=fields.Integer(),
        allow_none=True,
        required=True,
        metadata={"description": "In this seat's discard step: card -> the least deadwood left after discarding it; else null."},
    )
    commitment = fields.String(
        allow_none=True, required=True, metadata={"description": "SHA-256 commitment to this hand's deck (see the README)."}
    )
    knock = fields.Nested(KnockSchema, allow_none=True, required=True, metadata={"description": "The knock being answered (defense phase)."})
    last_hand = fields.Nested(HandResultSchema, allow_none=True, required=True)
    legal_actions = fields.List(fields.Nested(ActionSchema), required=True)
    hidden = fields.Nested(
        HiddenCardsSchema, metadata={"description": "Operator only: the cards no seat sees (both hands, the stock)."}
    )


class EventSchema(Schema):
    seq = fields.Integer(required=True, metadata={"description": "1, 2, 3 ... within the match; the version after it."})
    type = fields.String(required=True)
    schema_version = fields.Integer(required=True)
    data = fields.Dict(required=True, metadata={"description": "Redacted for the caller's seat."})
    recorded_at = fields.String(required=True, metadata={"description": "ISO 8601 time the event was stored."})


class ActionResultSchema(Schema):
    view = fields.Nested(SeatViewSchema, required=True)
    events = fields.List(
        fields.Nested(EventSchema), required=True, metadata={"description": "Every event the action caused, including the computer's replies."}
    )


class EventsPageSchema(Schema):
    match_id = fields.String(required=True)
    version = fields.Integer(
        required=True, metadata={"description": "The seq of the last event in this page (`after` when it is empty)."}
    )
    events = fields.List(fields.Nested(EventSchema), required=True)
    next_after = fields.Integer(
        allow_none=True, required=True,
        metadata={"description": "More events follow: pass this as `after` for the next page. Null: this page reached the last event."},
    )


class ViewQuerySchema(Base):
    seat = fields.Integer(
        validate=validate.OneOf([0, 1]),
        metadata={"description": "Operator only: whose view to show (default 0). Ignored for a seat token."},
    )


class StreamQuerySchema(Base):
    after = fields.Integer(
        load_default=0,
        validate=validate.Range(0),
        metadata={"description": "Send the events with seq greater than this (the Last-Event-ID header wins)."},
    )
    wait = fields.Integer(
        load_default=30,
        validate=validate.Range(0, 3600),
        metadata={"description": "Close the stream after this many seconds, 0 to 3600 (it also closes when the match ends)."},
    )


#: Events per page of ``GET /matches/{id}/events``: by default, and at most.
EVENTS_PAGE = 500
EVENTS_PAGE_MAX = 1000


class EventsQuerySchema(Base):
    after = fields.Integer(load_default=0, validate=validate.Range(0), metadata={"description": "Return events with seq greater than this."})
    limit = fields.Integer(
        load_default=EVENTS_PAGE,
        validate=validate.Range(1, EVENTS_PAGE_MAX),
        metadata={"description": f"Page size, 1 to {EVENTS_PAGE_MAX} (default {EVENTS_PAGE}); a larger one is refused with 422."},
    )

"""Marshmallow schemas for every request and response; the OpenAPI document is made from them."""

from __future__ import annotations

import functools

from marshmallow import RAISE, Schema, ValidationError, fields, validate, validates_schema

from service.engine import PRESETS
from service.engine.game import name_problem
from service.engine.rules import RANGES

CARD = validate.Regexp(r"^[A23456789TJQK][CDHS]$", error="not a card code: rank A23456789TJQK + suit CDHS, e.g. TD")
LEVELS = ("easy", "medium", "hard")
PHASES = ("waiting_for_players", "awaiting_deal", "upcard_offer", "draw", "discard", "defense", "match_over")
STATUSES = ("waiting", "active", "finished")
END_REASONS = ("score", "resigned", "timeout", "aborted")
RESULTS = ("knock", "undercut", "gin", "dead")


@functools.cache
def shared(schema: type[Schema]) -> Schema:
    """The one instance of ``schema`` that requests use.  Making a schema deep-copies its
    fields, which costs more than dumping a view with it; ``load`` and ``dump`` keep
    nothing in the instance, so threads may share it."""
    return schema()


def Card(**kwargs):  # noqa: N802 - a field factory reads like a field class
    return fields.String(validate=CARD, metadata={"example": "TD", **kwargs.pop("metadata", {})}, **kwargs)


def Cards(**kwargs):  # noqa: N802
    return fields.List(Card(), **kwargs)


class Name(fields.String):
    """A person's name: the spaces around it are dropped; then 1 to 40 characters, with
    no control or formatting characters (which would let a name rewrite a terminal or
    reorder the text around it)."""

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs).strip()
        problem = name_problem(text)
        if problem is not None:
            raise ValidationError(problem)
        return text


class StrictBool(fields.Boolean):
    """Only JSON true/false: "yes" or 1 are refused rather than guessed."""

    truthy = {True}
    falsy = {False}


class Base(Schema):
    class Meta:
        unknown = RAISE


# --- requests ------------------------------------------------------------------


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
        return StrictBool(**({"metadata": {"description": RULE_DESCRIPTIONS[name]}} if name in RULE_DESCRIPTIONS else {}))
    if spec[0] is str:
        return fields.String(validate=validate.OneOf(spec[1]), metadata={"description": RULE_DESCRIPTIONS[name]})
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


class LayoffSchema(Base):
    card = Card(required=True)
    meld = fields.Integer(strict=True, required=True, validate=validate.Range(0, 5), metadata={"description": "Index into the knocker's melds."})


ACTION_FIELDS = {
    "draw": {"source"},
    "pass": set(),
    "discard": {"card"},
    "knock": {"card", "melds"},
    "gin": {"card", "melds"},
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


# --- responses -------------------------------------------------------------------


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


class SeatSchema(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True, allow_none=True, metadata={"description": "Null for an open seat."})
    kind = fields.String(required=True, validate=validate.OneOf(["human", "computer", "open"]))
    level = fields.String(allow_none=True, validate=validate.OneOf(LEVELS))
    player = fields.String(
        allow_none=True, metadata={"description": "The player holding the seat (see GET /players/{id}), if a player took it."}
    )


class CreatedSeatSchema(SeatSchema):
    token = fields.String(
        allow_none=True,
        metadata={"description": "Bearer token for this seat (human seats only). Shown once: only its hash is stored."},
    )


class KnockSchema(Schema):
    seat = fields.Integer(required=True)
    card = fields.String(required=True, metadata={"description": "The knocker's discard."})
    gin = fields.Boolean(required=True)
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


class ServerSentEvents:
    """A ``text/event-stream`` answer whose every event carries one JSON document of ``item``
    as its data (the event name is the item's type, its id the item's seq)."""

    def __init__(self, item: type[Schema], description: str):
        self.item = item
        self.description = description


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


class ProblemSchema(Schema):
    type = fields.String(required=True)
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    code = fields.String(required=True, metadata={"description": "Stable machine-readable error code."})
    detail = fields.String(required=True, metadata={"description": "What went wrong, for people."})
    rule = fields.String(metadata={"description": "The game rule broken (illegal moves), e.g. no_return."})
    errors = fields.Dict(metadata={"description": "Field name -> messages (invalid requests)."})
    current_version = fields.Integer(metadata={"description": "The match's version now (412 version_mismatch)."})
    index = fields.Integer(metadata={"description": "Refused imports: the place in the record's events (0-based) of the first event that does not follow."})
    seq = fields.Integer(metadata={"description": "Refused imports: that event's seq (index + 1), as the audit and the events feed number it."})


class PresetSchema(Schema):
    name = fields.String(required=True)
    description = fields.String(required=True)
    rules = fields.Nested(RulesSchema, required=True)


class PresetListSchema(Schema):
    presets = fields.List(fields.Nested(PresetSchema), required=True)
    parameters = fields.Dict(required=True, metadata={"description": "Each parameter's accepted range."})


class HealthSchema(Schema):
    status = fields.String(required=True, validate=validate.OneOf(["ok", "unavailable"]))
    database = fields.String(required=True)


# --- records ---------------------------------------------------------------------


class ExternalSchema:
    """A schema kept as a JSON Schema file beside the OpenAPI document (``openapi/``), and
    copied into the document's components (``service.api.openapi.record_components``)."""

    def __init__(self, name: str, file: str):
        self.__name__ = name
        self.file = file


MatchRecordSchema = ExternalSchema("MatchRecord", "match-record.schema.json")


class ExportQuerySchema(Base):
    status = fields.String(validate=validate.OneOf(["active", "finished"]))


class RecordExportQuerySchema(Base):
    format = fields.String(
        load_default="json",
        validate=validate.OneOf(["json", "text"]),
        metadata={
            "description": "json (the default): the match record; text: the same match as movetext "
            "(text/plain, docs/movetext.md), to read and share."
        },
    )


class PlainText:
    """A ``text/plain`` (UTF-8) answer, described in words: one of a response's
    representations beside a JSON one (``responses={200: (Schema, PlainText(...))}``)."""

    content_type = "text/plain"

    def __init__(self, description: str):
        self.description = description


class StateQuerySchema(Base):
    version = fields.Integer(validate=validate.Range(0), metadata={"description": "Default: the current version."})


class ImportResultSchema(Schema):
    id = fields.String(required=True)
    created = fields.Boolean(required=True, metadata={"description": "False when the same record was imported before."})
    version = fields.Integer(required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    seats = fields.List(fields.Nested(CreatedSeatSchema), required=True)
    invite = fields.Nested(
        "InviteSchema", allow_none=True, required=True,
        metadata={"description": "When the match waits for a player: a new invite for the open seat (a record holds none)."},
    )
    provenance = fields.Nested("ProvenanceSchema", required=True, metadata={"description": "What the import could check."})


class FullStateSchema(Schema):
    version = fields.Integer(required=True)
    phase = fields.String(required=True, validate=validate.OneOf(("new",) + PHASES))
    turn = fields.Integer(allow_none=True, required=True)
    hand_number = fields.Integer(required=True)
    starter = fields.Integer(allow_none=True, required=True)
    scores = fields.List(fields.Integer(), required=True)
    winner = fields.Integer(allow_none=True, required=True)
    hands = fields.List(Cards(), required=True)
    stock = Cards(required=True, metadata={"description": "Top first."})
    discard_pile = Cards(required=True)
    no_return = fields.String(allow_none=True, required=True)
    commitment = fields.String(allow_none=True, required=True)
    knock = fields.Nested(KnockSchema, allow_none=True, required=True)
    defense = fields.Nested(DefenseSchema, allow_none=True, required=True)
    last_hand = fields.Nested(HandResultSchema, allow_none=True, required=True)


class HandSummarySchema(Schema):
    hand = fields.Integer(required=True)
    starter = fields.Integer(required=True)
    status = fields.String(required=True, validate=validate.OneOf(["over", "in_progress"]))
    first_seq = fields.Integer(required=True)
    last_seq = fields.Integer(required=True)
    result = fields.String(allow_none=True, required=True, validate=validate.OneOf(RESULTS))
    winner = fields.Integer(allow_none=True, required=True)
    points = fields.Integer(allow_none=True, required=True)
    scores = fields.List(fields.Integer(), allow_none=True, required=True)
    match_end = fields.Nested(
        "MatchEndSchema", allow_none=True, required=True,
        metadata={"description": "The match ended during this hand (a resignation or a timeout claim); else null."},
    )


class MatchEndSchema(Schema):
    reason = fields.String(required=True, validate=validate.OneOf(END_REASONS))
    seat = fields.Integer(allow_none=True, required=True, metadata={"description": "Who resigned or claimed the timeout."})
    winner = fields.Integer(allow_none=True, required=True)


class HandListSchema(Schema):
    match_id = fields.String(required=True)
    hands = fields.List(fields.Nested(HandSummarySchema), required=True)


class DealSchema(Schema):
    hands = fields.List(Cards(), required=True, metadata={"description": "Each seat's ten dealt cards."})
    upcard = Card(required=True)
    stock = Cards(required=True, metadata={"description": "The stock as dealt, top first."})
    commitment = fields.String(required=True)
    salt = fields.String(required=True)
    commitment_valid = fields.Boolean(required=True, metadata={"description": "sha256(salt:deck) equals the commitment."})


class PlaySchema(Schema):
    seq = fields.Integer(required=True)
    seat = fields.Integer(required=True)
    action = fields.String(required=True, validate=validate.OneOf(["pass", "draw", "discard", "knock", "gin"]))
    source = fields.String(validate=validate.OneOf(["stock", "discard"]))
    card = fields.String()


class HandEndSchema(Schema):
    result = fields.String(required=True, validate=validate.OneOf(RESULTS))
    winner = fields.Integer(allow_none=True, required=True)
    points = fields.Integer(required=True)
    scores = fields.List(fields.Integer(), required=True)


class HandDetailSchema(HandSummarySchema):
    deal = fields.Nested(DealSchema, required=True)
    plays = fields.List(fields.Nested(PlaySchema), required=True)
    knock = fields.Nested(KnockSchema, allow_none=True, required=True)
    defense = fields.Nested(DefenseSchema, allow_none=True, required=True)
    end = fields.Nested(HandEndSchema, allow_none=True, required=True)


class AuditProblemSchema(Schema):
    seq = fields.Integer(allow_none=True, required=True)
    index = fields.Integer()
    rule = fields.String(required=True)
    detail = fields.String(required=True)


class AuditHandSchema(HandSummarySchema):
    commitment_valid = fields.Boolean(required=True)


class AuditSchema(Schema):
    match_id = fields.String(required=True)
    ok = fields.Boolean(required=True, metadata={"description": "True when every hand follows from the play."})
    events = fields.Integer(required=True)
    hands = fields.List(fields.Nested(AuditHandSchema), required=True)
    problems = fields.List(fields.Nested(AuditProblemSchema), required=True)


# --- players -------------------------------------------------------------------------


class JwkSchema(Schema):
    kty = fields.String(required=True, metadata={"example": "OKP"})
    crv = fields.String(required=True, metadata={"example": "Ed25519"})
    x = fields.String(required=True, metadata={"description": "The 32-byte public key, base64url."})
    kid = fields.String(required=True, metadata={"description": "Its RFC 7638 thumbprint: a signature's key_id."})
    alg = fields.String(required=True, metadata={"example": "EdDSA"})
    use = fields.String(required=True, metadata={"example": "sig"})


class JwksSchema(Schema):
    keys = fields.List(fields.Nested(JwkSchema), required=True)


class ProvenanceSchema(Schema):
    origin = fields.String(required=True, validate=validate.OneOf(["played", "imported"]),
                           metadata={"description": "played: made here; imported: from a record."})
    bots_version = fields.String(allow_none=True, required=True,
                                 metadata={"description": "The version of the computer that made the computer seats' moves (null: unknown, or no computer)."})
    computer_moves = fields.String(
        allow_none=True, required=True, validate=validate.OneOf(["verified", "unverified"]),
        metadata={"description": "For an import: verified (every computer move made again by the same version and found as recorded) or unverified (the record named another version, or none); null otherwise."},
    )
    signature = fields.Dict(
        allow_none=True, required=True,
        metadata={"description": "For an import, what the record's signature said: {status: verified | unknown_key | unsigned, key_id, signer}."},
    )
    at = fields.String(allow_none=True, required=True, metadata={"description": "When the match was made or imported (null: before provenance was kept)."})


class PlayerSpecSchema(Base):
    name = Name(required=True, metadata={"example": "Ann"})


class PlayerCreatedSchema(Schema):
    id = fields.String(required=True, metadata={"description": "The player's id: public (seats and records name it)."})
    name = fields.String(required=True)
    token = fields.String(
        required=True,
        metadata={"description": "The player token (a bearer token): shown only this once; only its hash is kept. Keep it to play from any device."},
    )


class RatingSchema(Schema):
    rating = fields.Float(required=True, metadata={"description": "Glicko-2 rating (1500 to start)."})
    deviation = fields.Float(required=True, metadata={"description": "Its deviation (350 to start): how uncertain it is."})
    matches = fields.Integer(required=True, metadata={"description": "Rated matches played."})
    wins = fields.Integer(required=True)


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
    rating = fields.Float(required=True)
    deviation = fields.Float(required=True)
    matches = fields.Integer(required=True, metadata={"description": "Rated matches played."})
    wins = fields.Integer(required=True)


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


# --- the coach -----------------------------------------------------------------------


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

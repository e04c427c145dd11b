"""Matches as records: export and import, the full state, the hands in full, the audit,
the keys that sign records (JWKS) and a match's provenance."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from .common import END_REASONS, PHASES, RESULTS, STATUSES, Base, Card, Cards, ExternalSchema
from .matches import CreatedSeatSchema
from .play import DefenseSchema, HandResultSchema, KnockSchema

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


class StateQuerySchema(Base):
    version = fields.Integer(validate=validate.Range(0), metadata={"description": "Default: the current version."})


class ImportResultSchema(Schema):
    id = fields.String(
        required=True,
        metadata={"description": "The match's id here: the record's own (record_id) when its signature verifies, by this service's key or a trusted one; otherwise one derived from the record, so that an unverified copy never takes the id a genuine record claims (the same record always gets the same id)."},
    )
    record_id = fields.String(required=True, metadata={"description": "The match id the record names."})
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
    action = fields.String(required=True, validate=validate.OneOf(["pass", "draw", "discard", "knock", "gin", "big_gin"]))
    source = fields.String(validate=validate.OneOf(["stock", "discard"]))
    card = fields.String(
        metadata={"description": "The card drawn or discarded; for a Big Gin, which discards nothing, the card drawn that made the eleven."}
    )


class HandEndSchema(Schema):
    result = fields.String(required=True, validate=validate.OneOf(RESULTS))
    winner = fields.Integer(allow_none=True, required=True)
    points = fields.Integer(required=True)
    scores = fields.List(fields.Integer(), required=True)
    doubled = fields.Boolean(metadata={"description": "Present (true) when the hand's points were doubled (Oklahoma's spade upcard)."})
    games = fields.List(
        fields.Dict(), metadata={"description": "Under hollywood: its three games after this hand, each {scores, hands, winner}."}
    )


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

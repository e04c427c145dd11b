"""What every subject's schemas share: the card and name fields, the strict boolean, the
request base (unknown fields refused), the enumerations, the one shared instance of a
schema, the problem and health answers, and the answers that are not a schema's JSON
(a JSON Schema file, plain text, an event stream)."""

from __future__ import annotations

import functools

from marshmallow import RAISE, Schema, ValidationError, fields, validate

from service.engine.game import name_problem

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


# --- the service's own answers ---------------------------------------------------


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
    ticket_id = fields.String(metadata={"description": "Matchmaking: the ticket waiting already (409 ticket_open) or paired (409 ticket_paired)."})
    seq = fields.Integer(metadata={"description": "Refused imports: that event's seq (index + 1), as the audit and the events feed number it."})


class HealthSchema(Schema):
    status = fields.String(required=True, validate=validate.OneOf(["ok", "unavailable"]))
    database = fields.String(required=True)


# --- answers that are not a marshmallow schema's JSON -----------------------------


class ServerSentEvents:
    """A ``text/event-stream`` answer whose every event carries one JSON document of ``item``
    as its data (the event name is the item's type, its id the item's seq)."""

    def __init__(self, item: type[Schema], description: str):
        self.item = item
        self.description = description


class JsonLines:
    """An ``application/x-ndjson`` answer: one JSON document of ``item`` per line."""

    def __init__(self, item: type[Schema], description: str):
        self.item = item
        self.description = description


class ExternalSchema:
    """A schema kept as a JSON Schema file beside the OpenAPI document (``openapi/``), and
    copied into the document's components (``service.api.openapi.record_components``)."""

    def __init__(self, name: str, file: str):
        self.__name__ = name
        self.file = file


class PlainText:
    """A ``text/plain`` (UTF-8) answer, described in words: one of a response's
    representations beside a JSON one (``responses={200: (Schema, PlainText(...))}``)."""

    content_type = "text/plain"

    def __init__(self, description: str):
        self.description = description

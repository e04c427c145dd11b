"""Records: export, import, past states, hand-by-hand history and the audit."""

from __future__ import annotations

import json
import math
import uuid

from flask import Blueprint, Response, current_app, request, stream_with_context

from service.application.costs import Payer
from service.application.views import public_seats, status_of
from service.records.records import MAX_RECORD_EVENTS, MAX_RECORD_HANDS, schema_text
from service.records.text import record_text

from . import schemas as s
from .docs import operation
from .errors import Problem
from .http import PROBLEMS, app, asked_seat, bearer_token, with_etag
from .matches import invite_json, seats_with_tokens

bp = Blueprint("records", __name__)

#: Records are larger than other bodies: a long match holds thousands of events (a
#: record of MAX_RECORD_EVENTS events is about 1.6 MiB).
MAX_RECORD_BYTES = 4 * 1024 * 1024


@bp.get("/matches/<match_id>/export")
@operation(
    summary="The match's complete record",
    tags=["records"],
    query=s.RecordExportQuerySchema,
    responses={200: (s.MatchRecordSchema, s.PlainText("the match as movetext (format=text)")), **PROBLEMS},
    description=(
        "Seats may export their match once it is finished (before, it would reveal hidden cards); the operator any "
        "match. `format=text` answers the same match as movetext (`text/plain`, documented in docs/movetext.md): "
        "a header of tags, then every deal, move, arrangement, layoff and score, one per line."
    ),
)
def export_one(match_id: uuid.UUID, query: dict):
    record, state = app().records.export(bearer_token(), match_id, asked_seat())
    if query["format"] == "text":
        # Another representation, so another ETag (the view's convention: a suffix after a dot).
        response = Response(record_text(record), mimetype="text/plain")
        response.headers["ETag"] = f'"{state.version}.text"'
    else:
        response = with_etag(record, state.version)
    extension = "txt" if query["format"] == "text" else "json"
    response.headers["Content-Disposition"] = f'attachment; filename="gin-rummy-{match_id}.{extension}"'
    return response


@bp.get("/matches/export")
@operation(
    summary="Every match's record as NDJSON (operator)",
    tags=["records"],
    query=s.ExportQuerySchema,
    responses={200: "application/x-ndjson: one match record per line", 401: s.ProblemSchema, 403: s.ProblemSchema},
    content_type="application/x-ndjson",
)
def export_many(query: dict):
    records = app().records.export_every(bearer_token(), query.get("status"))

    def lines():
        for record in records:
            yield json.dumps(record, separators=(",", ":")) + "\n"

    return Response(stream_with_context(lines()), mimetype="application/x-ndjson")


def _import_rate() -> None:
    """The cheap checks first: the rate (before the body is read), then the size (by its
    Content-Length), then the record's shape; the replay last."""
    limiter = current_app.extensions["gin_rummy_import_limiter"]
    wait = limiter.take(request.remote_addr or "unknown") if limiter is not None else 0
    if wait:
        seconds = max(1, math.ceil(wait))
        raise Problem(429, "rate_limited", f"too many imports from this client address; retry after {seconds} s",
                      headers={"Retry-After": str(seconds)})
    app().costs.admit(Payer(request.remote_addr))  # a spent CPU budget, a busy instance: before the body


@bp.post("/matches/import")
@operation(
    summary="Import a match record",
    tags=["records"],
    body=s.MatchRecordSchema,
    responses={201: s.ImportResultSchema, 200: s.ImportResultSchema, 409: s.ProblemSchema, 413: s.ProblemSchema,
               422: s.ProblemSchema, 429: s.ProblemSchema, 503: s.ProblemSchema},
    auth=False,
    before=lambda: _import_rate(),
    body_limit=MAX_RECORD_BYTES,
    body_name="the record",
    description=(
        f"At most {MAX_RECORD_EVENTS} events, {MAX_RECORD_HANDS} hands and {MAX_RECORD_BYTES // (1024 * 1024)} MiB "
        "(413 `body_too_large`; 422 `record_too_long`, counted before any check walks the record), and a limited "
        "number of imports per minute from one address (429 `rate_limited`). The CPU-seconds each check takes are "
        "charged to the address: once its budget is spent, 429 `cpu_budget_spent` with Retry-After; while the "
        "instance is checking other records, 503 `busy` with Retry-After. "
        "The record is checked against its JSON Schema, then every event is replayed through the rules; the first "
        "that does not follow is refused with 422 naming its `index` and the `rule` broken, as is an event dated in "
        "the future. A valid record becomes a match (201, with a token per human seat so an unfinished match can be "
        "continued): under the record's own id when its signature verifies (this service's key or a trusted one), "
        "otherwise under an id of its own derived from the record's id and digest (`id`; `record_id` is the id the "
        "record names), so an unsigned or changed copy never takes a genuine record's id. Importing the same record "
        "again answers 200 and no tokens: with the match as it is now when the record is all of it, and otherwise "
        "(the match went on since) with only what the record holds. A different record with the id of a match "
        "already here: 409 `match_exists`. A refusal quotes at most a short excerpt of what it refuses."
    ),
)
def import_one(body):
    imported = app().records.import_record(body, address=request.remote_addr)
    state = imported.state
    answer = {
        "id": str(imported.match_id),
        "record_id": str(imported.record_id),
        "created": imported.created,
        "version": state.version,
        "status": status_of(state),
        "seats": seats_with_tokens(public_seats(state), imported.tokens),
        "invite": invite_json(imported.match_id, imported.invite),
        "provenance": imported.provenance,
    }
    return with_etag(s.shared(s.ImportResultSchema).dump(answer), state.version, 201 if imported.created else 200)


@bp.get("/matches/<match_id>/state")
@operation(
    summary="The full state at a past version",
    tags=["records"],
    query=s.StateQuerySchema,
    responses={200: s.FullStateSchema, 422: s.ProblemSchema, **PROBLEMS},
    description="The operator may ask for any version; a seat for versions inside hands that are over.",
)
def state_at(match_id: uuid.UUID, query: dict):
    body, version = app().records.state_at(bearer_token(), match_id, asked_seat(), query.get("version"))
    return with_etag(s.shared(s.FullStateSchema).dump(body), version)


@bp.get("/matches/<match_id>/hands")
@operation(
    summary="Every hand of the match, summarised",
    tags=["records"],
    responses={200: s.HandListSchema, **PROBLEMS},
)
def hands(match_id: uuid.UUID):
    body, version = app().records.hands(bearer_token(), match_id, asked_seat())
    return with_etag(s.shared(s.HandListSchema).dump(body), version)


@bp.get("/matches/<match_id>/hands/<int:number>")
@operation(
    summary="One hand in full: deal, plays, knock, arrangements, layoffs, score",
    tags=["records"],
    responses={200: s.HandDetailSchema, **PROBLEMS},
    description="Seats see a hand in full once it is over; the operator any hand.",
)
def hand(match_id: uuid.UUID, number: int):
    body, version = app().records.hand(bearer_token(), match_id, asked_seat(), number)
    return with_etag(s.shared(s.HandDetailSchema).dump(body), version)


@bp.get("/matches/<match_id>/audit")
@operation(
    summary="Recompute every hand from the play and check every deal's commitment",
    tags=["records"],
    responses={200: s.AuditSchema, **PROBLEMS},
    description="The operator, or a seat once the match is finished.",
)
def audit_match(match_id: uuid.UUID):
    body, version = app().records.audit(bearer_token(), match_id, asked_seat())
    return with_etag(s.shared(s.AuditSchema).dump(body), version)


@bp.get("/match-record.schema.json")
@operation(
    summary="The JSON Schema of match records",
    tags=["records"],
    responses={200: "The JSON Schema"},
    auth=False,
    content_type="application/schema+json",
)
def record_schema_json():
    return Response(schema_text(), mimetype="application/schema+json")

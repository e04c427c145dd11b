"""Records: export, import, past states, hand-by-hand history and the audit."""

from __future__ import annotations

import json
import math
import uuid

from flask import Blueprint, Response, current_app, request, stream_with_context

from service.engine import fold
from service.matches import public_seats, seat_token, status_of
from service.records.hands import audit, hand_detail, hand_is_over, hand_summary, split_hands
from service.records.records import (
    MAX_RECORD_EVENTS,
    RecordError,
    export_all,
    export_match,
    import_record,
    schema_text,
    stored_event_json,
)
from service.records.text import record_text
from service.store import MatchNotFound
from service.store.provenance import provenance_of

from . import schemas as s
from .auth import Caller, caller_for_match, identify
from .docs import operation
from .errors import Problem
from .matches import PROBLEMS, load_state, match_not_found, parse_match_id, request_json, with_etag

bp = Blueprint("records", __name__)

#: Records are larger than other bodies: a long match holds thousands of events (a
#: record of MAX_RECORD_EVENTS events is about 1.6 MiB).
MAX_RECORD_BYTES = 4 * 1024 * 1024


def _store():
    return current_app.extensions["gin_rummy"].store


def _events(conn, mid: uuid.UUID) -> list[dict]:
    events = [stored_event_json(e) for e in _store().read(mid, conn=conn)]
    if not events:
        raise match_not_found(mid)
    return events


def _finished(events: list[dict]) -> bool:
    return events[-1]["type"] == "match_ended"


def _seat_may_not_see(caller: Caller, what: str) -> Problem:
    return Problem(403, "hidden_until_over", f"{what} would reveal hidden cards: seats see it once it is over")


def full_state(state) -> dict:
    """Everything in a state, hidden cards included (operator, or finished hands)."""
    return {
        "version": state.version,
        "phase": state.phase,
        "turn": state.turn,
        "hand_number": state.hand_number,
        "starter": state.starter,
        "scores": list(state.scores),
        "winner": state.winner,
        "hands": [list(h) for h in state.hands],
        "stock": list(state.stock),
        "discard_pile": list(state.discard_pile),
        "no_return": state.taken_from_discard,
        "commitment": state.commitment,
        "knock": state.knock,
        "defense": state.defense,
        "last_hand": state.last_hand,
    }


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
def export_one(match_id: str):
    mid = parse_match_id(match_id)
    args = s.shared(s.RecordExportQuerySchema).load(request.args.to_dict())
    with _store().transaction() as conn:
        caller = caller_for_match(conn, mid)
        # Refused before every event is read: the state is a snapshot and a few events.
        if not caller.is_operator and not load_state(conn, mid).finished:
            raise _seat_may_not_see(caller, "the record of an unfinished match")
        try:
            record, state = export_match(_store(), mid, conn=conn, signer=current_app.extensions["gin_rummy_signer"])
        except MatchNotFound:
            raise match_not_found(mid) from None
    if args["format"] == "text":
        # Another representation, so another ETag (the view's convention: a suffix after a dot).
        response = Response(record_text(record), mimetype="text/plain")
        response.headers["ETag"] = f'"{state.version}.text"'
    else:
        response = with_etag(record, state.version)
    extension = "txt" if args["format"] == "text" else "json"
    response.headers["Content-Disposition"] = f'attachment; filename="gin-rummy-{mid}.{extension}"'
    return response


@bp.get("/matches/export")
@operation(
    summary="Every match's record as NDJSON (operator)",
    tags=["records"],
    query=s.ExportQuerySchema,
    responses={200: "application/x-ndjson: one match record per line", 401: s.ProblemSchema, 403: s.ProblemSchema},
    content_type="application/x-ndjson",
)
def export_many():
    args = s.shared(s.ExportQuerySchema).load(request.args.to_dict())
    with _store().transaction() as conn:
        caller = identify(conn)
    if not caller.is_operator:
        raise Problem(403, "forbidden", "only the operator exports every match")
    store = _store()

    def lines():
        for record in export_all(store, status=args.get("status"), signer=current_app.extensions["gin_rummy_signer"]):
            yield json.dumps(record, separators=(",", ":")) + "\n"

    return Response(stream_with_context(lines()), mimetype="application/x-ndjson")


@bp.post("/matches/import")
@operation(
    summary="Import a match record",
    tags=["records"],
    body=s.MatchRecordSchema,
    responses={201: s.ImportResultSchema, 200: s.ImportResultSchema, 409: s.ProblemSchema, 413: s.ProblemSchema,
               422: s.ProblemSchema, 429: s.ProblemSchema},
    auth=False,
    description=(
        f"At most {MAX_RECORD_EVENTS} events and {MAX_RECORD_BYTES // (1024 * 1024)} MiB (413 `body_too_large`; "
        "422 `record_too_long`), and a limited number of imports per minute from one address (429 `rate_limited`). "
        "The record is checked against its JSON Schema, then every event is replayed through the rules; the first "
        "that does not follow is refused with 422 naming its `index` and the `rule` broken. A valid record becomes a "
        "match with the same id (201, with a token per human seat so an unfinished match can be continued). "
        "Importing the same record again answers 200 with the existing match and no tokens; a different record "
        "with the id of a match already here, 409 `match_exists`."
    ),
)
def import_one():
    # The cheap checks first: the rate (before the body is read), the size (by its
    # Content-Length), then the record's shape; the replay last.
    limiter = current_app.extensions["gin_rummy_import_limiter"]
    wait = limiter.take(request.remote_addr or "unknown") if limiter is not None else 0
    if wait:
        seconds = max(1, math.ceil(wait))
        raise Problem(429, "rate_limited", f"too many imports from this client address; retry after {seconds} s",
                      headers={"Retry-After": str(seconds)})
    request.max_content_length = MAX_RECORD_BYTES
    record = request_json("the record")
    try:
        imported = import_record(
            _store(), record, seat_token, proceed=current_app.extensions["gin_rummy"].matches.autoplay,
            signer=current_app.extensions["gin_rummy_signer"],
        )
    except RecordError as exc:
        status = 409 if exc.code == "match_exists" else 422
        extra = {} if exc.index is None else {"index": exc.index, "seq": exc.index + 1}
        raise Problem(status, exc.code, str(exc), rule=exc.rule, errors=exc.errors, extra=extra) from None
    state = imported.state
    body = {
        "id": str(imported.match_id),
        "created": imported.created,
        "version": state.version,
        "status": status_of(state),
        "seats": [dict(seat, token=imported.tokens.get(seat["seat"])) for seat in public_seats(state)],
        "invite": None if imported.invite is None else {
            "code": imported.invite, "url": f"{request.host_url}#/join/{imported.match_id}/{imported.invite}"
        },
    }
    with _store().connection() as conn:
        body["provenance"] = provenance_of(conn, imported.match_id).to_json()
    return with_etag(s.shared(s.ImportResultSchema).dump(body), state.version, 201 if imported.created else 200)


@bp.get("/matches/<match_id>/state")
@operation(
    summary="The full state at a past version",
    tags=["records"],
    query=s.StateQuerySchema,
    responses={200: s.FullStateSchema, 422: s.ProblemSchema, **PROBLEMS},
    description="The operator may ask for any version; a seat for versions inside hands that are over.",
)
def state_at(match_id: str):
    mid = parse_match_id(match_id)
    args = s.shared(s.StateQuerySchema).load(request.args.to_dict())
    with _store().transaction() as conn:
        caller = caller_for_match(conn, mid)
        events = _events(conn, mid)
    version = args.get("version", len(events))
    if version > len(events):
        raise Problem(422, "invalid_request", f"the match has {len(events)} events", errors={"version": [f"at most {len(events)}"]})
    if not caller.is_operator and not _finished(events):
        last_end = max((e["seq"] for e in events if e["type"] == "hand_ended"), default=0)
        if version > last_end:
            raise _seat_may_not_see(caller, f"version {version} lies in the hand being played; it")
    return with_etag(s.shared(s.FullStateSchema).dump(full_state(fold(events[:version]))), version)


@bp.get("/matches/<match_id>/hands")
@operation(
    summary="Every hand of the match, summarised",
    tags=["records"],
    responses={200: s.HandListSchema, **PROBLEMS},
)
def hands(match_id: str):
    mid = parse_match_id(match_id)
    with _store().transaction() as conn:
        caller_for_match(conn, mid)
        events = _events(conn, mid)
    body = {"match_id": str(mid), "hands": [hand_summary(h) for h in split_hands(events)]}
    return with_etag(s.shared(s.HandListSchema).dump(body), len(events))


@bp.get("/matches/<match_id>/hands/<int:number>")
@operation(
    summary="One hand in full: deal, plays, knock, arrangements, layoffs, score",
    tags=["records"],
    responses={200: s.HandDetailSchema, **PROBLEMS},
    description="Seats see a hand in full once it is over; the operator any hand.",
)
def hand(match_id: str, number: int):
    mid = parse_match_id(match_id)
    with _store().transaction() as conn:
        caller = caller_for_match(conn, mid)
        events = _events(conn, mid)
    all_hands = split_hands(events)
    if not 1 <= number <= len(all_hands):
        raise Problem(404, "hand_not_found", f"the match has {len(all_hands)} hand(s), not a hand {number}")
    chosen = all_hands[number - 1]
    if not caller.is_operator and not hand_is_over(chosen):
        raise _seat_may_not_see(caller, "a hand still being played")
    return with_etag(s.shared(s.HandDetailSchema).dump(hand_detail(chosen)), len(events))


@bp.get("/matches/<match_id>/audit")
@operation(
    summary="Recompute every hand from the play and check every deal's commitment",
    tags=["records"],
    responses={200: s.AuditSchema, **PROBLEMS},
    description="The operator, or a seat once the match is finished.",
)
def audit_match(match_id: str):
    mid = parse_match_id(match_id)
    with _store().transaction() as conn:
        caller = caller_for_match(conn, mid)
        # Refused before every event is read: the state is a snapshot and a few events.
        if not caller.is_operator and not load_state(conn, mid).finished:
            raise _seat_may_not_see(caller, "the audit of an unfinished match")
        events = _events(conn, mid)
    return with_etag(s.shared(s.AuditSchema).dump({"match_id": str(mid), **audit(events)}), len(events))


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

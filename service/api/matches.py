"""Matches: create, join, view, act, follow (events and a live stream), list, play again;
and the lobby of public matches waiting for a player."""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import uuid
from collections import OrderedDict
from datetime import timedelta

import orjson
import psycopg

from flask import Blueprint, Response, current_app, request, url_for

from service.engine import CommandError, IllegalMoveError, redact_event
from service.engine.cards import CARD_INDEX
from service.live import Closing, Lagged, TooManyStreams, follow
from service.serving import on_hangup
from service.engine.game import MATCH_OVER, deadline
from service.engine.rules import rules_from_json
from service.matches import InviteRefused, NoRematch, StaleVersion, public_seats, view_for
from service.store import ConcurrencyError, MatchNotFound, NewIdempotencyRecord, find_idempotency_record, online
from service.store import players as store_players
from service.store.provenance import provenance_of

from . import metrics
from . import schemas as s
from .auth import Caller, caller_for_match, identify, optional_player
from .docs import operation
from .errors import Problem

bp = Blueprint("matches", __name__)

PROBLEMS = {401: s.ProblemSchema, 403: s.ProblemSchema, 404: s.ProblemSchema}
IF_MATCH = {
    "name": "If-Match",
    "in": "header",
    "schema": {"type": "string"},
    "description": 'The version the client acted on (its ETag, e.g. "12"); a stale one gets 412.',
}
LAST_EVENT_ID = {
    "name": "Last-Event-ID",
    "in": "header",
    "schema": {"type": "string", "pattern": "^[0-9]+$"},
    "description": "The id (seq) of the last event received: the stream resumes after it (instead of `after`).",
}
IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "schema": {"type": "string", "minLength": 1, "maxLength": 200},
    "description": (
        "Any unique string of printable characters per intended action; a retry with the same key returns the "
        "first answer."
    ),
}


def _services():
    return current_app.extensions["gin_rummy"]


def request_json(what: str = "the body"):
    """The request's JSON document: 415 when it is not JSON, 400 when it cannot be read,
    422 when it holds text the database cannot store."""
    if not request.is_json:
        raise Problem(415, "unsupported_media_type", f"send {what} as application/json")
    try:
        data = request.get_json(silent=True)
    except RecursionError:
        raise Problem(400, "malformed_json", f"{what} is nested too deeply") from None
    if data is None:
        raise Problem(400, "malformed_json", f"{what} is not valid JSON")
    if not _may_hold_unstorable(request.get_data(cache=True)):
        return data
    if not storable(data):
        raise Problem(
            422, "invalid_request",
            f"{what} holds a NUL character or an unpaired surrogate (\\u0000, \\ud800...): text cannot contain them",
        )
    return data


#: The ways UTF-8 JSON can spell a NUL character or a surrogate: as an escape, or as a
#: surrogate's own three bytes (ED A0..BF ..), which json.loads lets through.
_SUSPECT = re.compile(rb"\\u(?:0000|[dD][89abcdefABCDEF])|\xed[\xa0-\xbf]")


def _may_hold_unstorable(body: bytes) -> bool:
    """False when the body, as sent, cannot hold a string ``storable`` would refuse: JSON in
    UTF-8 (no NUL byte: a string may not hold a raw control character, and UTF-16 or -32
    would show NUL bytes) with no ``\\u0000``, no surrogate escape and no surrogate's bytes.
    A scan of the bytes costs far less than a walk of every string of a large document."""
    return b"\x00" in body or _SUSPECT.search(body) is not None


def storable(document) -> bool:
    """Whether every string of a JSON document (keys too) can be stored in PostgreSQL text
    and jsonb: no NUL character, and valid UTF-8 (no unpaired surrogate)."""
    stack = [document]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if "\x00" in value or not _utf8(value):
                return False
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return True


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def json_body(schema, data=None) -> dict:
    data = request_json() if data is None else data
    if not isinstance(data, dict):
        raise Problem(422, "invalid_request", "the body must be a JSON object")
    return s.shared(schema).load(data)


def action_body() -> dict:
    """The posted action.  The common ones -- a draw, a pass, a discard, a knock or Gin
    without melds -- are recognised here as ActionSchema would accept them, for a
    fraction of its cost on every action; anything else goes through the schema."""
    data = request_json()
    if type(data) is dict:
        kind, size = data.get("type"), len(data)
        if kind == "pass" and size == 1:
            return data
        if kind == "draw" and size == 2 and data.get("source") in ("stock", "discard"):
            return data
        if kind in ("discard", "knock", "gin") and size == 2 and type(card := data.get("card")) is str and card in CARD_INDEX:
            return data
    return json_body(s.ActionSchema, data)


def query_args(schema) -> dict:
    return s.shared(schema).load(request.args.to_dict())


def match_not_found(match_id) -> Problem:
    return Problem(404, "match_not_found", f"no match {match_id}")


def parse_match_id(raw: str) -> uuid.UUID:
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise match_not_found(repr(raw)) from None


def etag(version: int) -> str:
    return f'"{version}"'


def is_number(text: str) -> bool:
    """Only 0-9: str.isdigit() also accepts digits int() refuses, such as "²"."""
    return text.isascii() and text.isdigit()


def parse_if_match(value: str | None) -> int | None:
    if value is None:
        return None
    raw = value.strip()
    if raw.startswith("W/"):
        raw = raw[2:]
    raw = raw.strip('"').split(".", 1)[0]  # a view's ETag may add a variant after the version
    if not is_number(raw):
        raise Problem(400, "invalid_if_match", f'If-Match must be a version ETag such as "12", got {value!r}')
    return int(raw)


def dumps(body) -> bytes:
    """JSON of a response body (orjson: several times faster than json, and every
    view and event feed is encoded on every request)."""
    return orjson.dumps(body)


def with_etag(body: dict | bytes, version: int, status: int = 200, headers: dict | None = None) -> Response:
    """A JSON response (``body`` a document, or its JSON already encoded) with the version as its ETag."""
    data = body if isinstance(body, bytes) else dumps(body)
    response = current_app.response_class(data, status=status, mimetype="application/json")
    response.headers["ETag"] = etag(version)
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def event_json(stored, seat: int | None) -> dict:
    return redact_event(
        {
            "seq": stored.seq,
            "type": stored.type,
            "schema_version": stored.schema_version,
            "data": stored.data,
            "recorded_at": stored.recorded_at.isoformat(),
        },
        seat,
    )


def provenance_json(conn, mid: uuid.UUID) -> dict:
    """The match's provenance, read once per process: it is written with the match's
    first events (made or imported) and never changes."""
    memo: Memo = current_app.extensions["gin_rummy_provenance"]
    found = memo.get(mid)
    if found is None:
        found = provenance_of(conn, mid).to_json()
        memo.put(mid, found)
    return found


def view_context(conn, state, mid: uuid.UUID, *, stored: bool = False) -> dict:
    """What a view needs beside the state: the time (a timeout claim is listed once the
    deadline has passed), who follows the match live (between two people), and the
    rematch of a finished match.

    ``stored``: the answer to a write already committed.  Then a database failure here
    leaves those two out (null) rather than answer 503 for a move that was made."""
    services = _services()
    context = {"now": services.matches.clock()}
    try:
        context["provenance"] = provenance_json(conn, mid)
        if state.phase == MATCH_OVER:
            context["rematch"] = online.rematch_of(conn, mid)
        elif len(state.seats) == 2 and all(seat["kind"] != "computer" for seat in state.seats):
            context["connected"] = services.presence.seats(conn, mid)
    except psycopg.OperationalError:
        if not stored:
            raise
        context = {"now": context["now"], "degraded": True, "provenance": context.get("provenance")}
    return context


def view_json(state, caller: Caller, match_id: uuid.UUID, context: dict) -> dict:
    seat = caller.seat if caller.seat is not None else _operator_seat()
    # view_for builds the documented SeatView as is (tests/api/test_view_shape.py):
    # no schema dump is needed, and none is paid for on every request.
    body = view_for(state, seat, match_id, **context)
    if caller.is_operator:
        body["hidden"] = {"hands": [list(h) for h in state.hands], "stock": list(state.stock)}
    return body


def _operator_seat() -> int:
    raw = request.args.get("seat", "0")
    if raw not in ("0", "1"):
        raise Problem(422, "invalid_request", "seat must be 0 or 1", errors={"seat": ["must be 0 or 1"]})
    return int(raw)


def load_state(conn, match_id: uuid.UUID):
    try:
        return _services().store.load(match_id, conn=conn)
    except MatchNotFound:
        raise match_not_found(match_id) from None


# --- create ------------------------------------------------------------------------


@bp.post("/matches")
@operation(
    summary="Create a match",
    tags=["matches"],
    body=s.CreateMatchSchema,
    responses={201: s.MatchCreatedSchema, 422: s.ProblemSchema},
    auth=False,
    description=(
        "Every field has a default: `{}` creates a classic match between a person and a medium computer. "
        "The answer holds one bearer token per human seat, shown only this once. To play someone on another "
        "device, make their seat `{\"kind\": \"open\"}`: the answer then carries an `invite` (a code and a link "
        "to the web client's join page) for them, the match waits for them (phase `waiting_for_players`, no "
        "hand dealt) and `public: true` also lists it in the lobby."
    ),
)
def create_match():
    spec = json_body(s.CreateMatchSchema)
    public = spec.pop("public", False)
    if not any(seat.get("kind", "human") == "human" for seat in spec.get("seats") or [{"kind": "human"}]):
        raise Problem(
            422, "invalid_request", "at least one seat must be human", errors={"seats": ["at least one human seat"]}
        )
    if request.headers.get("Authorization"):  # a player creates it: they take its first person's seat
        with _services().store.connection() as conn:
            player = optional_player(conn)
            if player is not None:
                spec = _seat_the_player(conn, spec, player)
    created = _services().matches.create(spec, public=public)
    state = created.state
    first_human = min(created.tokens)
    with _services().store.connection() as conn:
        context = {"now": _services().matches.clock(), "provenance": provenance_json(conn, created.match_id)}
    seats = [dict(seat, token=created.tokens.get(seat["seat"])) for seat in public_seats(state)]
    invite = None
    if created.invite is not None:
        invite = {"code": created.invite, "url": f"{request.host_url}#/join/{created.match_id}/{created.invite}"}
    body = {
        "id": str(created.match_id),
        "version": state.version,
        "rules": state.rules.to_json(complete=True),
        "seats": seats,
        "view": view_for(state, first_human, created.match_id, **context),
        "public": public,
        "invite": invite,
    }
    return with_etag(
        body,
        state.version,
        201,
        {"Location": url_for("matches.get_match", match_id=str(created.match_id)), "Cache-Control": "no-store"},
    )


def _seat_the_player(conn, spec: dict, player_id: uuid.UUID) -> dict:
    """The match body with the calling player on its first person's seat (named after the
    player unless the seat has a name)."""
    seats = [dict(seat) for seat in spec.get("seats") or [{"kind": "human"}, {"kind": "computer", "level": "medium"}]]
    first = next((i for i, seat in enumerate(seats) if seat.get("kind", "human") == "human"), None)
    if first is None:
        raise Problem(422, "no_seat_for_player", "a player's match needs a person's seat (kind human) for the player")
    seats[first]["player"] = str(player_id)
    seats[first].setdefault("name", store_players.get_player(conn, player_id).name)
    return {**spec, "seats": seats}


@bp.post("/matches/<match_id>/join")
@operation(
    summary="Take the open seat of a match",
    tags=["matches"],
    body=s.JoinSchema,
    responses={201: s.JoinedSchema, 403: s.ProblemSchema, 404: s.ProblemSchema, 409: s.ProblemSchema, 422: s.ProblemSchema},
    auth=False,
    description=(
        "With the match's invite `code` (not needed for a public match) and the player's `name`. Answers the "
        "seat taken and its bearer token, shown only this once; the first hand is dealt once every seat is "
        "taken. 403 `invalid_invite` for a wrong code (`invite_required` without one); 409 `seat_taken` when "
        "every seat is taken, also when another player took the last one first."
    ),
)
def join(match_id: str):
    mid = parse_match_id(match_id)
    body = json_body(s.JoinSchema)
    with _services().store.connection() as conn:
        player = optional_player(conn)
        name = body.get("name") or (store_players.get_player(conn, player).name if player else None)
    if name is None:
        raise Problem(422, "invalid_request", "say the name to play under", errors={"name": ["required without a player token"]})
    try:
        joined = _services().matches.join(mid, body.get("code"), name, player)
    except MatchNotFound:
        raise match_not_found(mid) from None
    except InviteRefused as exc:
        raise Problem(403, exc.code, str(exc)) from None
    except IllegalMoveError as exc:
        if exc.rule != "seat_taken":
            raise
        raise Problem(409, "seat_taken", str(exc)) from None
    caller = Caller("seat", mid, joined.seat)
    try:
        with _services().store.connection() as conn:
            context = view_context(conn, joined.state, mid, stored=True)
    except psycopg.OperationalError:  # no connection at all: the seat is taken all the same
        context = {"now": _services().matches.clock()}
    body = {
        "match_id": str(mid),
        "seat": joined.seat,
        "token": joined.token,
        "view": view_json(joined.state, caller, mid, context),
    }
    return with_etag(body, joined.state.version, 201, {"Cache-Control": "no-store"})


@bp.post("/matches/<match_id>/rematch")
@operation(
    summary="Play a finished match again",
    tags=["matches"],
    responses={201: s.RematchSchema, 200: s.RematchSchema, 409: s.ProblemSchema, **PROBLEMS},
    description=(
        "By a seat of a finished match: a new match with the same seats, names and rules, the seats swapped so "
        "that the other one starts. The first seat to ask makes it (201); the other gets the same match (200). "
        "Each gets its seat token in the rematch when it first asks (later: null). The finished match's views "
        "then name it (`rematch`). 409 `no_rematch` while the match is not over, or when it was called off."
    ),
)
def rematch(match_id: str):
    mid = parse_match_id(match_id)
    services = _services()
    with services.store.connection() as conn:
        caller = caller_for_match(conn, mid)
    if caller.is_operator:
        raise Problem(403, "forbidden", "the operator may read every match but plays for no seat")
    try:
        made = services.matches.rematch(mid, caller.seat)
    except MatchNotFound:
        raise match_not_found(mid) from None
    except NoRematch as exc:
        raise Problem(409, "no_rematch", str(exc)) from None
    with services.store.connection() as conn:
        context = view_context(conn, made.state, made.match_id)
    body = {
        "id": str(made.match_id),
        "seat": made.seat,
        "token": made.token,
        "view": view_json(made.state, Caller("seat", made.match_id, made.seat), made.match_id, context),
    }
    return with_etag(body, made.state.version, 201 if made.created else 200, {"Cache-Control": "no-store"})


@bp.get("/lobby")
@operation(
    summary="Public matches waiting for a player",
    tags=["matches"],
    query=s.LobbyQuerySchema,
    responses={200: s.LobbySchema, 422: s.ProblemSchema},
    auth=False,
    description=(
        "Newest first. A match leaves the lobby once its seats are taken, when it is called off, or an hour "
        "after it was made. Join one with POST /matches/{id}/join (no code needed)."
    ),
)
def get_lobby():
    args = query_args(s.LobbyQuerySchema)
    offset = _cursor_offset(args.get("cursor"))
    with _services().store.connection() as conn:
        rows = online.lobby(conn, limit=args["limit"] + 1, offset=offset, max_age=LOBBY_MAX_AGE)
    more = len(rows) > args["limit"]
    items = [
        {
            "id": str(row.match_id),
            # Every parameter, those the recorded rules leave out at their defaults too.
            "rules": rules_from_json(row.rules).to_json(complete=True),
            "creator": next((seat.get("name") for seat in row.seats if seat["kind"] == "human"), None),
            "created_at": row.created_at.isoformat(),
        }
        for row in rows[: args["limit"]]
    ]
    return s.shared(s.LobbySchema).dump({"items": items, "next_cursor": str(offset + len(items)) if more else None})


#: How long a public match stays in the lobby.
LOBBY_MAX_AGE = timedelta(hours=1)


# --- read ----------------------------------------------------------------------------


@bp.get("/matches/<match_id>")
@operation(
    summary="The caller's view of a match",
    tags=["matches"],
    query=s.ViewQuerySchema,
    responses={200: s.SeatViewSchema, 304: "Not modified (If-None-Match matched the view's ETag)", **PROBLEMS},
    description=(
        "A seat sees its own view with its legal actions. The operator sees seat 0's view "
        "(or `?seat=1`) plus a `hidden` object with both hands and the stock. The ETag is the version, "
        "followed after a dot by what changes the view without a move (`t`: a timeout may be claimed; `c`: "
        "the opponent follows the match live; `r` and an id: the rematch), e.g. `\"12.c\"`; If-None-Match "
        "with it answers 304 while the view is the same, and If-Match on an action accepts either form."
    ),
)
def get_match(match_id: str):
    mid = parse_match_id(match_id)
    with _services().store.connection() as conn:
        caller = caller_for_match(conn, mid)
        state = load_state(conn, mid)
        context = view_context(conn, state, mid)
    tag = view_etag(state, caller, context)
    cache = {"ETag": tag, "Cache-Control": "private, no-cache"}  # a hand is never kept by a shared cache
    if request.headers.get("If-None-Match") == tag:
        return Response(status=304, headers=cache)
    return with_etag(encoded_view(state, caller, mid, context), state.version, headers=cache)


def view_etag(state, caller: Caller, context: dict) -> str:
    """A view's ETag: its version, then what else changes the view without a move, after
    a dot -- ``t`` once a timeout may be claimed, ``c`` while the opponent follows the
    match live, ``r`` and the rematch's id once there is one.  (``"12"``, ``"12.tc"``.)"""
    variant = ""
    due = deadline(state)
    if due is not None and context["now"] >= due:
        variant += "t"
    connected = context.get("connected")
    if connected is not None and caller.seat is not None and 1 - caller.seat in connected:
        variant += "c"
    if context.get("rematch") is not None:
        variant += f"r{context['rematch'].hex}"
    return f'"{state.version}.{variant}"' if variant else etag(state.version)


class Memo:
    """What never changes once made, by key (a seat view encoded at a version, a
    match's provenance, a finished hand's analysis); the least recently used are
    forgotten beyond ``size``.  Each app keeps its own (``app.extensions``)."""

    def __init__(self, size: int = 4096):
        self.size = size
        self._known: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            found = self._known.get(key)
            if found is not None:
                self._known.move_to_end(key)
            return found

    def put(self, key, value) -> None:
        with self._lock:
            self._known[key] = value
            while len(self._known) > self.size:
                self._known.popitem(last=False)


def encoded_view(state, caller: Caller, mid: uuid.UUID, context: dict) -> bytes:
    """The caller's view as JSON (a seat's from the memo when it is there: the key holds
    what else the view depends on -- whether a timeout may be claimed, whether the
    opponent is connected, the rematch)."""
    if caller.is_operator or context.pop("degraded", False):  # (a degraded view is not kept)
        return dumps(view_json(state, caller, mid, context))
    memo: Memo = current_app.extensions["gin_rummy_views"]
    due = deadline(state)
    claimable = due is not None and context["now"] >= due
    connected = context.get("connected")
    key = (mid, state.version, caller.seat, claimable, connected is not None and 1 - caller.seat in connected, context.get("rematch"))
    view = memo.get(key)
    if view is None:
        view = dumps(view_json(state, caller, mid, context))
        memo.put(key, view)
    return view


@bp.get("/matches/<match_id>/events")
@operation(
    summary="Events since a version, redacted for the caller, a page at a time",
    tags=["matches"],
    query=s.EventsQuerySchema,
    responses={200: s.EventsPageSchema, 422: s.ProblemSchema, **PROBLEMS},
    description=(
        "The events with seq above `after`, at most `limit` of them (default 500, at most 1000). When more "
        "follow, `next_after` says where the next page starts: pass it as `after`."
    ),
)
def get_events(match_id: str):
    mid = parse_match_id(match_id)
    args = query_args(s.EventsQuerySchema)
    limit = args["limit"]
    with _services().store.connection() as conn:
        caller = caller_for_match(conn, mid)
        events = _services().store.read(mid, after=args["after"], limit=limit + 1, conn=conn)
        # With no events after ``after``, the match was at ``after`` at most when read
        # (the summary, read next, may be newer: its events would be missed).
        version = events[min(len(events), limit) - 1].seq if events else min(args["after"], _version(conn, mid))
    more = len(events) > limit
    body = {
        "match_id": str(mid),
        "version": version,
        "events": [event_json(e, caller.seat) for e in events[:limit]],
        "next_after": version if more else None,
    }
    return with_etag(body, version)


def _version(conn, mid: uuid.UUID) -> int:
    try:
        return _services().store.summary(mid, conn=conn).version
    except MatchNotFound:
        raise match_not_found(mid) from None


@bp.get("/matches/<match_id>/stream")
@operation(
    summary="Live events as Server-Sent Events",
    tags=["matches"],
    query=s.StreamQuerySchema,
    headers=[LAST_EVENT_ID],
    responses={
        200: s.ServerSentEvents(s.EventSchema, "text/event-stream: one `event:` per match event (id = seq, data = the event JSON)"),
        429: s.ProblemSchema,
        **PROBLEMS,
    },
    content_type="text/event-stream",
    description=(
        "Sends the events after `after` (or the Last-Event-ID header), a long backlog in pieces of 500, then "
        "each new one as it is stored, with a `: keep-alive` comment after 15 seconds without one. The stream "
        "closes after `wait` seconds (default 30), when the match ends, or when the client falls more than 256 "
        "events behind; reconnect with Last-Event-ID, on any instance, to continue without a gap. A process "
        "holds at most 4 streams per seat token and 100 per client address at once (by default): beyond "
        "them, 429 `too_many_streams` with Retry-After. A browser's EventSource cannot send the Authorization "
        "header: read the stream with fetch, as the reference client does."
    ),
)
def stream(match_id: str):
    mid = parse_match_id(match_id)
    args = query_args(s.StreamQuerySchema)
    last = request.headers.get("Last-Event-ID") or None
    if last is not None and not is_number(last):
        raise Problem(422, "invalid_request", "Last-Event-ID must be an event id (seq)", errors={"Last-Event-ID": ["not an event id"]})
    after = int(last) if last is not None else args["after"]
    services = _services()
    with services.store.connection() as conn:
        caller = caller_for_match(conn, mid)
        _version(conn, mid)
    try:
        sub = services.hub.open(
            mid, token_key=None if caller.is_operator else f"{mid}:{caller.seat}", address=request.remote_addr,
            seat=caller.seat,
        )
    except TooManyStreams as exc:
        metrics.STREAMS_REFUSED.labels(exc.scope).inc()
        raise Problem(
            429, "too_many_streams", f"{exc} are open at once; close one, or retry later",
            headers={"Retry-After": str(STREAM_RETRY_AFTER)},
        ) from None
    except Closing:
        raise Problem(503, "shutting_down", "this instance is shutting down; retry", headers={"Retry-After": "1"}) from None
    config = current_app.config
    sock = request.environ.get("gunicorn.socket")
    _bound_socket(sock, config)
    chunks = follow(
        sub, after, seconds=args["wait"], heartbeat=float(config["STREAM_HEARTBEAT_SECONDS"]),
        render=sse_frame, seat=caller.seat,
    )
    # A client that hangs up frees its place at once, not at the next heartbeat.
    response = Response(StreamBody(chunks, sub, on_hangup(sock, sub.hung_up)), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"  # nginx: pass events through at once
    return response


#: Seconds a client refused for having too many streams is asked to wait.
STREAM_RETRY_AFTER = 5


def sse_frame(stored, seat: int | None) -> bytes:
    """One event as a Server-Sent Event: its seq as the id, its type as the name."""
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (stored.seq, stored.type.encode(), dumps(event_json(stored, seat)))


class StreamBody:
    """A stream's chunks; closing it (the server does, however the stream ends, even
    one never started) releases its place in the hub.  A follower too far behind
    gets a last comment saying so."""

    def __init__(self, chunks, sub, unwatch):
        self.chunks, self.sub, self.unwatch = chunks, sub, unwatch
        metrics.LIVE_STREAMS.inc()

    def __iter__(self):
        try:
            yield from self.chunks
        except Lagged:
            metrics.STREAMS_LAGGED.inc()
            yield b": too far behind: reconnect with Last-Event-ID\n\n"

    def close(self):
        if not self.sub.closed:
            metrics.LIVE_STREAMS.dec()
        self.unwatch()
        self.chunks.close()
        self.sub.close()


def _bound_socket(sock, config) -> None:
    """A stream's socket: a small send buffer, and a send timeout, so that a client
    that reads nothing costs bounded memory and is dropped after a while."""
    if sock is None:  # not under gunicorn (tests)
        return
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, int(config["STREAM_SEND_BUFFER_BYTES"]))
        sock.settimeout(float(config["STREAM_SEND_TIMEOUT_SECONDS"]))
    except OSError:
        pass


@bp.get("/matches")
@operation(
    summary="Matches the caller may see",
    tags=["matches"],
    query=s.MatchListQuerySchema,
    responses={200: s.MatchListSchema, 401: s.ProblemSchema, 422: s.ProblemSchema},
    description="The operator sees every match, newest first; a seat token sees its own match; a player the matches it holds a seat in.",
)
def list_matches():
    args = query_args(s.MatchListQuerySchema)
    store = _services().store
    offset = _cursor_offset(args.get("cursor"))
    with store.connection() as conn:
        caller = identify(conn)
        if caller.is_operator:
            rows = store.summaries(status=args.get("status"), limit=args["limit"] + 1, offset=offset, conn=conn)
        elif caller.role == "player":
            held = store_players.matches_of(conn, caller.player_id, status=args.get("status"), limit=args["limit"] + 1, offset=offset)
            rows = [store.summary(m.match_id, conn=conn) for m in held]
        else:
            row = store.summary(caller.match_id, conn=conn)
            rows = [row] if offset == 0 and args.get("status") in (None, row.status) else []
    more = len(rows) > args["limit"]
    rows = rows[: args["limit"]]
    items = [_summary_json(r) for r in rows]
    next_cursor = str(offset + len(rows)) if more else None
    return s.shared(s.MatchListSchema).dump({"items": items, "next_cursor": next_cursor})


def _cursor_offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not is_number(cursor) or len(cursor) > 9:
        raise Problem(422, "invalid_request", "cursor must be a next_cursor from a previous page", errors={"cursor": ["invalid"]})
    return int(cursor)


def _summary_json(row) -> dict:
    data = row.to_json()
    data["id"] = data.pop("match_id")
    data["seats"] = [
        {"seat": i, "name": seat.get("name"), "kind": seat.get("kind"), "level": seat.get("level"), "player": seat.get("player")}
        for i, seat in enumerate(data["seats"])
    ]
    return s.shared(s.MatchSummarySchema).dump(data)


# --- act -----------------------------------------------------------------------------


@bp.post("/matches/<match_id>/actions")
@operation(
    summary="Send one action for the caller's seat",
    tags=["matches"],
    body=s.ActionSchema,
    headers=[IF_MATCH, IDEMPOTENCY_KEY],
    responses={
        200: s.ActionResultSchema,
        409: s.ProblemSchema,
        412: s.ProblemSchema,
        422: s.ProblemSchema,
        **PROBLEMS,
    },
    description=(
        "Post any entry of the view's `legal_actions` as is. The computer's replies (and the next deal) are "
        "played in the same request and returned among the events. 409 `illegal_move` names the `rule` broken; "
        "409 `conflict` means another request changed the match first (reload and retry); 412 `version_mismatch` "
        "answers a stale If-Match."
    ),
)
def act(match_id: str):
    mid = parse_match_id(match_id)
    command = action_body()
    expected = parse_if_match(request.headers.get("If-Match"))
    key = request.headers.get("Idempotency-Key")
    if key is not None and not (1 <= len(key) <= 200 and key.isprintable()):
        raise Problem(400, "invalid_idempotency_key", "Idempotency-Key must be 1 to 200 printable characters")
    services = _services()
    store = services.store
    fingerprint = hashlib.sha256(json.dumps([command, expected], sort_keys=True).encode()).hexdigest()

    # A request with a key that was applied before is not looked up first (that would
    # cost every request a query): acting again fails, because the version moved on
    # (412, or 409 from the append), because the action is no longer legal, or, when
    # it is legal again, because the key's record exists (the statement saving the
    # events with the record fails on the key, storing nothing).  Any of those, with a
    # key, looks for the first answer.  No transaction is needed: one statement stores
    # the events, the summary and the record, or nothing.
    caller = None
    try:
        with store.connection() as conn:
            caller = caller_for_match(conn, mid)
            if caller.is_operator:
                raise Problem(403, "forbidden", "the operator may read every match but acts for no seat")
            # Known before the action (read once per process): an answer built after the
            # commit holds it even when the database fails meanwhile, as its retry will.
            provenance_json(conn, mid)
            record = NewIdempotencyRecord(caller.scope, key, fingerprint) if key is not None else None
            state, events = services.matches.act(
                conn, mid, caller.seat, command, expected_version=expected, idempotency=record
            )
            answer = action_answer(state, events, caller, mid, conn)
    except MatchNotFound:
        raise match_not_found(mid) from None
    except (StaleVersion, ConcurrencyError, CommandError, IllegalMoveError) as exc:
        if key is not None:
            with store.connection() as conn:
                replay = _replay(conn, mid, caller, key, fingerprint)
            if replay is not None:
                return replay
        if isinstance(exc, (CommandError, IllegalMoveError)):
            raise
        if isinstance(exc, StaleVersion):
            raise Problem(
                412, "version_mismatch", f"{exc}; reload the match and act on the current version",
                headers={"ETag": etag(exc.current)}, extra={"current_version": exc.current},
            ) from None
        raise Problem(409, "conflict", "another request changed the match first; reload it and retry") from None
    return with_etag(answer, state.version)


def action_answer(state, events, caller: Caller, mid: uuid.UUID, conn) -> bytes:
    """An action's answer, as JSON: the caller's view after it, and every event it caused."""
    view = encoded_view(state, caller, mid, view_context(conn, state, mid, stored=True))
    return b'{"view":%s,"events":%s}' % (view, dumps([event_json(e, caller.seat) for e in events]))


def _replay(conn, mid, caller: Caller, key: str, fingerprint: str) -> Response | None:
    record = find_idempotency_record(conn, mid, caller.scope, key)
    if record is None:
        return None
    if record.fingerprint != fingerprint:
        raise Problem(
            422, "idempotency_key_reused", "this Idempotency-Key was used for a different request in this match"
        )
    replayed = {"Idempotent-Replayed": "true"}
    if record.body is not None:  # stored by an earlier version of the service
        return with_etag(record.body, record.body["view"]["version"], record.status, replayed)
    # The first answer, rebuilt: the view at the request's last event, and its events.
    store = _services().store
    events = store.read(mid, after=record.first_seq - 1, limit=record.last_seq - record.first_seq + 1, conn=conn)
    state = store.state_at(mid, record.last_seq, conn=conn)
    return with_etag(action_answer(state, events, caller, mid, conn), state.version, record.status, replayed)




"""The HTTP toolbox of the routes: reading a request, and writing an answer.

A route reads its path, body and query through ``operation`` (``service.api.docs``),
its bearer token and headers with the helpers here, calls one use case of the
application (``app()``), and answers with ``with_etag`` or ``json_answer``.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import orjson
from flask import Response, current_app, request

from service.application import Application
from service.application.views import dumps, etag
from service.engine.cards import CARD_INDEX

from . import schemas as s
from .errors import Problem


def app() -> Application:
    """The application of this Flask app (``create_app``)."""
    return current_app.extensions["gin_rummy"]


# --- the body ---------------------------------------------------------------------------


def request_json(what: str = "the body") -> Any:
    """The request's JSON document: 415 when it is not JSON, 400 when it cannot be read,
    422 when it holds text the database cannot store."""
    if not request.is_json:
        raise Problem(415, "unsupported_media_type", f"send {what} as application/json")
    try:
        # orjson reads a body several times faster than Flask's json; whatever it refuses
        # (not UTF-8, NaN, integers beyond 64 bits, nesting past its limit, invalid JSON)
        # goes to Flask's reader, which decides as before.
        data = orjson.loads(request.get_data(cache=True))
    except orjson.JSONDecodeError:
        data = None
    if data is None:
        try:
            data = request.get_json(silent=True)
        except RecursionError:
            raise Problem(400, "malformed_json", f"{what} is nested too deeply") from None
    if data is None:
        raise Problem(400, "malformed_json", f"{what} is not valid JSON")
    if not may_hold_unstorable(request.get_data(cache=True)):
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


def may_hold_unstorable(body: bytes) -> bool:
    """False when the body, as sent, cannot hold a string ``storable`` would refuse: JSON in
    UTF-8 (no NUL byte: a string may not hold a raw control character, and UTF-16 or -32
    would show NUL bytes) with no ``\\u0000``, no surrogate escape and no surrogate's bytes.
    A scan of the bytes costs far less than a walk of every string of a large document."""
    return b"\x00" in body or _SUSPECT.search(body) is not None


def storable(document: Any) -> bool:
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


def json_body(schema, what: str = "the body") -> Any:
    """The body: the raw JSON document of an external (JSON Schema) body, else an object
    loaded by the marshmallow ``schema`` (common bodies recognised first, see ``QUICK``)."""
    data = request_json(what)
    if isinstance(schema, s.ExternalSchema):
        return data
    quick = QUICK.get(schema)
    if quick is not None and (known := quick(data)) is not None:
        return known
    if not isinstance(data, dict):
        raise Problem(422, "invalid_request", "the body must be a JSON object")
    return s.shared(schema).load(data)


def quick_action(data: Any) -> dict | None:
    """The common actions -- a draw, a pass, a discard, a knock or Gin without melds --
    as ActionSchema would accept them, for a fraction of its cost on every action (None:
    anything else, which goes through the schema)."""
    if type(data) is dict:
        kind, size = data.get("type"), len(data)
        if kind == "pass" and size == 1:
            return data
        if kind == "draw" and size == 2 and data.get("source") in ("stock", "discard"):
            return data
        if kind in ("discard", "knock", "gin") and size == 2 and type(card := data.get("card")) is str and card in CARD_INDEX:
            return data
    return None


#: Bodies recognised before their schema is applied, by schema.
QUICK = {s.ActionSchema: quick_action}


def query_args(schema) -> dict:
    return s.shared(schema).load(request.args.to_dict())


# --- path, headers, token -------------------------------------------------------------------


def parse_match_id(raw: str) -> uuid.UUID:
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise Problem(404, "match_not_found", f"no match {raw!r}") from None


#: The most digits a number in a request may have: every version, seq and status fits
#: (and PostgreSQL's bigint), and int() is never asked for more than Python reads
#: (4,300 digits, beyond which it raises ValueError).
MAX_DIGITS = 18


def is_number(text: str) -> bool:
    """Only 0-9, at most ``MAX_DIGITS`` of them: str.isdigit() also accepts digits int()
    refuses, such as "²"."""
    return len(text) <= MAX_DIGITS and text.isascii() and text.isdigit()


def cursor_offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not is_number(cursor) or len(cursor) > 9:
        raise Problem(422, "invalid_request", "cursor must be a next_cursor from a previous page", errors={"cursor": ["invalid"]})
    return int(cursor)


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


def bearer_token() -> str:
    """The request's bearer token, or 401."""
    return token_of(request.headers.get("Authorization", ""))


def token_of(header: str) -> str:
    """The token of an Authorization header, or 401."""
    if not header:
        raise Problem(
            401, "unauthorized", "send Authorization: Bearer <token> (a seat token, a player token, a sign-in JWT or the operator token)",
            headers={"WWW-Authenticate": 'Bearer realm="gin-rummy"'},
        )
    token = bearer_of(header)
    if token is None:
        raise Problem(
            401, "unauthorized", "the Authorization header must be 'Bearer <token>'",
            headers={"WWW-Authenticate": 'Bearer realm="gin-rummy", error="invalid_request"'},
        )
    return token


def bearer_of(header: str) -> str | None:
    """The token of a well-formed ``Bearer <token>`` Authorization header, else None."""
    scheme, _, token = header.partition(" ")
    token = token.strip()
    return token if token and scheme.lower() == "bearer" else None


def checked_idempotency_key(key: str | None) -> str | None:
    """An Idempotency-Key header's value, or None; 400 when it is not 1 to 200 printable characters."""
    if key is not None and not (1 <= len(key) <= 200 and key.isprintable()):
        raise Problem(400, "invalid_idempotency_key", "Idempotency-Key must be 1 to 200 printable characters")
    return key


def optional_bearer() -> str | None:
    """The bearer token when the request sends an Authorization header, else None."""
    return bearer_token() if request.headers.get("Authorization") else None


def asked_seat() -> str | None:
    """``?seat=``: the seat a player holding both seats acts for, or the operator's view."""
    if not request.query_string:  # most requests: no query string to parse
        return None
    return request.args.get("seat")


# --- answers ----------------------------------------------------------------------------


def with_etag(body: dict | bytes, version: int, status: int = 200, headers: dict | None = None) -> Response:
    """A JSON response (``body`` a document, or its JSON already encoded) with the version as its ETag."""
    data = encoded(body)
    response = current_app.response_class(data, status=status, mimetype="application/json")
    response.headers["ETag"] = etag(version)
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def encoded(body: Any) -> bytes:
    """An answer's JSON: ``body`` a document, or its JSON already encoded."""
    return body if isinstance(body, bytes) else dumps(body)


NO_STORE = {"Cache-Control": "no-store"}
#: A seat's view: a hand is never kept by a shared cache.
VIEW_CACHE = "private, no-cache"

PROBLEMS = {401: s.ProblemSchema, 403: s.ProblemSchema, 404: s.ProblemSchema}

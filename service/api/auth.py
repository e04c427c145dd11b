"""Who is calling: a seat (by its bearer token) or the operator (token from configuration).

A seat token names its match and is checked by the hash stored for that match (the
database looks the hash up: no comparison in Python sees the token); the operator token
is compared in constant time, as hashes, so not even its length shows in the timing.
A seat token never acts for the other seat, and never reads another match.
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import uuid
from dataclasses import dataclass

from flask import current_app, request

from service.matches import match_of_token
from service.store import hash_token, seat_of_token

from .errors import Problem

OPERATOR = "operator"


@dataclass(frozen=True)
class Caller:
    role: str  # "seat" or "operator"
    match_id: uuid.UUID | None = None
    seat: int | None = None

    @property
    def is_operator(self) -> bool:
        return self.role == OPERATOR

    @property
    def scope(self) -> str:
        return OPERATOR if self.is_operator else f"seat:{self.seat}"


def bearer_token() -> str:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if not header:
        raise Problem(
            401, "unauthorized", "send Authorization: Bearer <token> (a seat token or the operator token)",
            headers={"WWW-Authenticate": 'Bearer realm="gin-rummy"'},
        )
    if scheme.lower() != "bearer" or not token.strip():
        raise Problem(
            401, "unauthorized", "the Authorization header must be 'Bearer <token>'",
            headers={"WWW-Authenticate": 'Bearer realm="gin-rummy", error="invalid_request"'},
        )
    return token.strip()


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def _invalid() -> Problem:
    return Problem(
        401, "invalid_token", "the token is not valid",
        headers={"WWW-Authenticate": 'Bearer realm="gin-rummy", error="invalid_token"'},
    )


def identify(conn) -> Caller:
    """The caller of this request, or 401."""
    token = bearer_token()
    operator = current_app.config.get("OPERATOR_TOKEN")
    if operator and hmac.compare_digest(_digest(token), _digest(operator)):
        return Caller(OPERATOR)
    match_id = match_of_token(token)
    if match_id is None:
        raise _invalid()
    key = (match_id, hash_token(token))
    known: KnownTokens = current_app.extensions["gin_rummy_known_tokens"]
    seat = known.get(key)
    if seat is None:
        seat = seat_of_token(conn, match_id, key[1])
        if seat is None:
            raise _invalid()
        known.add(key, seat)
    return Caller("seat", match_id, seat)


class KnownTokens:
    """Seats already found by their token's hash.  A seat token is never changed or
    withdrawn once issued, so the answer stays true, and remembering it spares every
    later request of that seat a query.  Only hashes are kept (never a token), only
    found ones (a wrong token is looked up each time), and at most ``size``: beyond
    that the oldest is forgotten."""

    def __init__(self, size: int = 100_000):
        self._seats: dict[tuple[uuid.UUID, str], int] = {}
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: tuple[uuid.UUID, str]) -> int | None:
        return self._seats.get(key)

    def add(self, key: tuple[uuid.UUID, str], seat: int) -> None:
        with self._lock:
            self._seats[key] = seat
            if len(self._seats) > self._size:
                del self._seats[next(iter(self._seats))]


def caller_for_match(conn, match_id: uuid.UUID) -> Caller:
    """The caller, who must be the operator or hold a seat of this match."""
    caller = identify(conn)
    if not caller.is_operator and caller.match_id != match_id:
        raise Problem(403, "forbidden", "this token belongs to another match")
    return caller

"""Who is calling: a seat (by its bearer token), a player (by a player token, or a JWT of
the front end's identity provider), or the operator (token from configuration).

A seat token names its match and is checked by the hash stored for that match (the
database looks the hash up: no comparison in Python sees the token); the operator token
is compared in constant time, as hashes, so not even its length shows in the timing.
A seat token never acts for the other seat, and never reads another match.  A player
reads and acts for the seats bound to it, in any match, from any device; one who holds
both seats of a match acts for the seat whose turn it is (``?seat=`` picks the view).
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
import uuid
from dataclasses import dataclass

from flask import current_app, request

from service.matches import match_of_token
from service.players import JwtRefused, JwtVerifier, player_of_token
from service.store import hash_token, seat_of_token
from service.store import players as store_players

from .errors import Problem

OPERATOR = "operator"


@dataclass(frozen=True)
class Caller:
    role: str  # "seat", "player" (no match chosen yet) or "operator"
    match_id: uuid.UUID | None = None
    seat: int | None = None
    player_id: uuid.UUID | None = None

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
    player_id = player_of_token(token)
    if player_id is not None:
        return Caller("player", player_id=_known_player(conn, player_id, token))
    verifier: JwtVerifier | None = current_app.extensions.get("gin_rummy_jwt")
    if verifier is not None and verifier.looks_like_jwt(token):
        return Caller("player", player_id=_signed_in(conn, verifier, token))
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


def _known_player(conn, player_id: uuid.UUID, token: str) -> uuid.UUID:
    key = (player_id, hash_token(token))
    known: KnownTokens = current_app.extensions["gin_rummy_known_tokens"]
    if known.get(key) is None:
        if store_players.player_of_token(conn, player_id, key[1]) is None:
            raise _invalid()
        known.add(key, 1)
    return player_id


def _signed_in(conn, verifier: JwtVerifier, token: str) -> uuid.UUID:
    # A verified token is remembered by its hash until it expires (a signature check
    # costs more than the rest of a request).
    key = (None, hash_token(token))
    known: KnownTokens = current_app.extensions["gin_rummy_known_tokens"]
    found = known.get(key)
    if found is not None and found[1] > time.time():
        return found[0]
    try:
        claims = verifier.claims(token)
        player = verifier.player(conn, claims)
    except JwtRefused as exc:
        raise Problem(
            401, exc.code, str(exc),
            headers={"WWW-Authenticate": f'Bearer realm="gin-rummy", error="invalid_token", error_description="{exc.code}"'},
        ) from None
    known.add(key, (player.id, float(claims["exp"])))
    return player.id


def optional_player(conn) -> uuid.UUID | None:
    """The calling player when the request carries a player's token (or JWT); None
    without an Authorization header, or with a seat's or the operator's token."""
    if not request.headers.get("Authorization"):
        return None
    return identify(conn).player_id


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
    if caller.role == "player":
        seats = store_players.seats_of(conn, match_id, caller.player_id)
        if not seats:
            raise Problem(403, "forbidden", "this player holds no seat of this match")
        return Caller("seat", match_id, _seat_for(match_id, seats), caller.player_id)
    if not caller.is_operator and caller.match_id != match_id:
        raise Problem(403, "forbidden", "this token belongs to another match")
    return caller


def _seat_for(match_id: uuid.UUID, seats: list[int]) -> int:
    """The seat a player holding ``seats`` acts for: the one asked for (``?seat=``), the
    one whose turn it is, or the first."""
    if len(seats) == 1:
        return seats[0]
    asked = request.args.get("seat")
    if asked in ("0", "1") and int(asked) in seats:
        return int(asked)
    state = current_app.extensions["gin_rummy"].store.cached(match_id)
    if state is not None and state.turn in seats:
        return state.turn
    return seats[0]

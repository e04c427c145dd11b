"""Who is calling: a seat (by its token), a player (a player token, or a JWT of the front
end's identity provider), or the operator (the token of the settings).

A seat token names its match and is checked by the hash stored for that match (the
database looks the hash up: no comparison in Python sees the token); the operator token
is compared in constant time, as hashes.  A seat token never acts for the other seat,
and never reads another match.  A player reads and acts for the seats bound to it, in
any match, from any device; one who holds both seats of a match acts for the seat it
asks for (``?seat=``), else the one whose turn it is.

Tokens already found are remembered by their hash (an ``LRU``): a seat token and a
player token are never changed or withdrawn once issued, so the answer stays true, and
remembering it spares every later request a query; a verified JWT is remembered until
it expires or the issuer's key set changes (a signature check costs more than the rest
of a request).  Only hashes are
kept, and only found ones (a wrong token is looked up each time).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

from service.lru import LRU
from service.store import EventStore, seat_of_token
from service.store import players as store_players

from . import tokens
from .errors import Forbidden, Unauthorized
from .signin import JwtVerifier
from .unit_of_work import UnitOfWork

OPERATOR = "operator"

#: Tokens one process remembers having found.
KNOWN_TOKENS = 100_000


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


class Callers:
    def __init__(self, store: EventStore, operator_token: str | None, jwt: JwtVerifier | None):
        self.store = store
        self.operator_token = operator_token
        self.jwt = jwt
        self._known: LRU[tuple[uuid.UUID | None, str], Any] = LRU(KNOWN_TOKENS)

    def forget(self) -> None:
        """Forget every token found (a player was erased: its tokens must not work)."""
        self._known.discard(lambda key: True)

    def identify(self, uow: UnitOfWork, token: str) -> Caller:
        """The caller of ``token``, or Unauthorized."""
        if self.operator_token and tokens.same_secret(token, self.operator_token):
            return Caller(OPERATOR)
        player_id = tokens.player_of_token(token)
        if player_id is not None:
            return Caller("player", player_id=self._known_player(uow, player_id, token))
        if self.jwt is not None and tokens.looks_like_jwt(token):
            return Caller("player", player_id=self._signed_in(uow, self.jwt, token))
        match_id = tokens.match_of_token(token)
        if match_id is None:
            raise Unauthorized()
        key = (match_id, tokens.hash_token(token))
        seat = self._known.get(key)
        if seat is None:
            seat = seat_of_token(uow.conn, match_id, key[1])
            if seat is None:
                raise Unauthorized()
            self._known.put(key, seat)
        return Caller("seat", match_id, seat)

    def _known_player(self, uow: UnitOfWork, player_id: uuid.UUID, token: str) -> uuid.UUID:
        key = (player_id, tokens.hash_token(token))
        if self._known.get(key) is None:
            if store_players.player_of_token(uow.conn, player_id, key[1]) is None:
                raise Unauthorized()
            self._known.put(key, 1)
        return player_id

    def _signed_in(self, uow: UnitOfWork, verifier: JwtVerifier, token: str) -> uuid.UUID:
        key = (None, tokens.hash_token(token))
        found = self._known.get(key)
        # Remembered while it has not expired and the key set that verified it is still
        # the current one (a key withdrawn from the JWKS stops working for it too).
        if found is not None and found[1] > time.time() and found[2] == verifier.generation():
            return found[0]
        verified = verifier.verify(token)  # JwtRefused (Unauthorized) names the check that failed
        player = verifier.player(uow.conn, verified.claims)
        self._known.put(key, (player.id, float(verified.claims["exp"]), verified.generation))
        return player.id

    def player(self, uow: UnitOfWork, token: str) -> uuid.UUID:
        """The calling player, or Forbidden for a seat's or the operator's token."""
        caller = self.identify(uow, token)
        if caller.role != "player" or caller.player_id is None:
            raise Forbidden("this needs a player's token (POST /players), or a sign-in token of the front end")
        return caller.player_id

    def optional_player(self, uow: UnitOfWork, token: str | None) -> uuid.UUID | None:
        """The calling player when ``token`` is a player's (or a JWT); None without a
        token, or with a seat's or the operator's."""
        if not token:
            return None
        return self.identify(uow, token).player_id

    def for_match(self, uow: UnitOfWork, token: str, match_id: uuid.UUID, asked_seat: str | None = None) -> Caller:
        """The caller, who must be the operator or hold a seat of this match."""
        caller = self.identify(uow, token)
        if caller.role == "player":
            assert caller.player_id is not None, "identify gives a player's caller its player"
            seats = store_players.seats_of(uow.conn, match_id, caller.player_id)
            if not seats:
                raise Forbidden("this player holds no seat of this match")
            return Caller("seat", match_id, self._seat_for(match_id, seats, asked_seat), caller.player_id)
        if not caller.is_operator and caller.match_id != match_id:
            raise Forbidden("this token belongs to another match")
        return caller

    def seat_for_match(self, uow: UnitOfWork, token: str, match_id: uuid.UUID, asked_seat: str | None, doing: str) -> Caller:
        """The caller for a seat's own play (the operator acts for no seat: Forbidden)."""
        caller = self.for_match(uow, token, match_id, asked_seat)
        if caller.is_operator:
            raise Forbidden(f"the operator may read every match but {doing}")
        return caller

    def _seat_for(self, match_id: uuid.UUID, seats: list[int], asked: str | None) -> int:
        """The seat a player holding ``seats`` acts for: the one asked for, the one whose
        turn it is, or the first."""
        if len(seats) == 1:
            return seats[0]
        if asked in ("0", "1") and int(asked) in seats:
            return int(asked)
        state = self.store.cached(match_id)
        if state is not None and state.turn in seats:
            return state.turn
        return seats[0]

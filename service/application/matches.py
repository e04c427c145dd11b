"""Matches made and joined: create, join, play again, the lobby, the caller's matches.

Online play: a match may have open seats, taken with ``join`` (by its invite code, whose
hash is kept with the match, or without one when the match is public); a finished match
can be played again (``rematch``) by the same seats, swapped so that the other one
starts, each getting its seat token when it asks.  Both may be sent with an
Idempotency-Key, and a retry then gets the first answer, its token too (``retries``).

Every new match -- made here, or imported (``service.application.records``) -- is
written by ``stage_new_match``: its events, its seat tokens' hashes, the players bound to
its seats, its provenance and its invite, in one unit of work.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from service.bots import BOTS_VERSION
from service.engine import IllegalMoveError, State, decide, fold
from service.engine.game import MATCH_OVER, MAX_SEED, WAITING
from service.engine.rules import rules_from_json
from service.store import (
    ConcurrencyError,
    EventStore,
    NewIdempotencyRecord,
    online,
    save_idempotency_record,
    save_seat_token_once,
    save_seat_tokens,
)
from service.store import players as store_players
from service.store import provenance as provenance_rows
from service.store.provenance import Provenance

from . import tokens
from .actions import fingerprint_of
from .callers import Callers
from .costs import Costs, seconds
from .errors import Conflict, Forbidden, Invalid, NoRematch, RateLimited, SeatTaken
from .play import Play
from .reads import Reads
from .retries import Retries
from .unit_of_work import UnitOfWork
from .views import Views, public_seats, view_for

#: How long a public match stays in the lobby.
LOBBY_MAX_AGE = timedelta(hours=1)

DEFAULT_SEATS = ({"kind": "human"}, {"kind": "computer", "level": "medium"})


@dataclass
class Created:
    match_id: uuid.UUID
    state: State
    #: One bearer token per human seat given one, shown only this once.
    tokens: dict[int, str]
    #: The invite code of a match with an open seat (shown once, like a token).
    invite: str | None
    public: bool
    #: The first person's view.
    view: dict


@dataclass
class Joined:
    match_id: uuid.UUID
    seat: int
    token: str
    state: State
    view: dict
    #: The first answer to this Idempotency-Key, given again.
    replayed: bool = False


@dataclass
class Rematched:
    match_id: uuid.UUID
    seat: int
    #: The caller's seat token in the rematch; None when that seat was given one before.
    token: str | None
    created: bool
    state: State
    view: dict
    #: The first answer to this Idempotency-Key, given again.
    replayed: bool = False


@dataclass
class Page:
    items: list[dict]
    next_cursor: str | None


class _Linked(Exception):
    """The rematch was linked by another request first (its creation is rolled back)."""

    def __init__(self, rematch_id: uuid.UUID):
        self.rematch_id = rematch_id


def start_command(spec: Mapping[str, Any]) -> tuple[dict, list[int]]:
    """The start_match command for a request body, and its human seats (to get tokens)."""
    rules = dict(spec.get("rules") or {})
    if "single_hand" in spec:
        rules["single_hand"] = spec["single_hand"]
    seats, humans = [], []
    for i, given in enumerate(spec.get("seats") or DEFAULT_SEATS):
        seat = dict(given)
        kind = seat.get("kind", "human")
        if kind == "computer":
            # Below 2**53, so a JavaScript client reads the seed (and a record) exactly.
            seat["seed"] = secrets.randbelow(MAX_SEED + 1)
        elif kind == "human":
            humans.append(i)
        seats.append(seat)
    return {"type": "start_match", "rules": rules, "seats": seats}, humans


def rematch_seat(seat: dict) -> dict:
    """A seat of a finished match as a seat of its rematch (a computer gets a new seed;
    a player keeps their seat)."""
    if seat["kind"] == "computer":
        return {"kind": "computer", "level": seat["level"], "name": seat["name"]}
    return {key: seat[key] for key in ("kind", "name", "player") if key in seat}


class MatchService:
    def __init__(
        self, store: EventStore, callers: Callers, views: Views, play: Play, retries: Retries, costs: Costs,
        reads: Reads | None = None,
    ):
        self.store = store
        self.reads = reads or Reads(store)
        self.callers = callers
        self.views = views
        self.play = play
        self.retries = retries
        self.costs = costs

    def stage_new_match(
        self, uow: UnitOfWork, match_id: uuid.UUID, appends: list[dict], *, seat_tokens: Mapping[int, str],
        players: Mapping[int, str], provenance: Provenance, invite: str | None, public: bool = False,
    ) -> None:
        """Stage everything a new match writes: ``appends`` (``UnitOfWork.append``'s
        arguments, in order), the hashes of its seat tokens, the players bound to its
        seats, its provenance and the hash of its invite code."""
        for batch in appends:
            uow.append(match_id, **batch)
        hashes = {seat: tokens.hash_token(token) for seat, token in seat_tokens.items()}
        uow.write(lambda conn: save_seat_tokens(conn, match_id, hashes))
        if players:
            uow.write(lambda conn: store_players.bind_seats(conn, match_id, players))
        uow.write(lambda conn: provenance_rows.save(conn, match_id, provenance))
        if invite is not None:
            code_hash = tokens.hash_token(invite)
            uow.write(lambda conn: online.save_invite(conn, match_id, code_hash, public))

    # --- creating -----------------------------------------------------------------------

    def create(
        self, token: str | None, spec: Mapping[str, Any], *, public: bool = False, address: str | None = None
    ) -> Created:
        """A match from a request body; a player calling (``token``) takes its first
        person's seat.  A match with an open seat (an invite) is counted per client
        address, a public one also per player (``costs``; RateLimited before any write)."""
        seats = spec.get("seats") or DEFAULT_SEATS
        if not any(seat.get("kind", "human") == "human" for seat in seats):
            raise Invalid("at least one seat must be human", errors={"seats": ["at least one human seat"]})
        with UnitOfWork(self.store) as uow:
            player = self.callers.optional_player(uow, token)
            if any(seat.get("kind") == "open" for seat in seats):
                if public and player is not None:
                    self._public_limit(uow, player)
                self.costs.invite(address)
            if player is not None:
                spec = self._seat_the_player(uow, spec, player)
            match_id, state, seat_tokens, invite, moves = self._new_match(uow, spec, public=public)
            uow.commit()
            self.play.stored(uow)
            self.play.report(moves)
            provenance = self.views.provenance(uow.conn, match_id)
        view = view_for(state, min(seat_tokens), match_id, now=self.views.clock(), provenance=provenance)
        return Created(match_id, state, seat_tokens, invite, public, view)

    def _public_limit(self, uow: UnitOfWork, player: uuid.UUID) -> None:
        """RateLimited when the player has as many public matches waiting as allowed."""
        limit = self.costs.settings.public_matches_per_player
        if limit is None:
            return
        count, oldest = online.open_public_of(uow.conn, player, max_age=LOBBY_MAX_AGE)
        if count >= limit:
            assert oldest is not None, "a count above 0 has an oldest entry"
            wait = (oldest + LOBBY_MAX_AGE - datetime.now(UTC)).total_seconds()
            raise RateLimited(
                f"this player has {count} public matches waiting in the lobby, the most allowed; one of them leaves "
                "it when a player joins it, or within the hour",
                code="too_many_public_matches", retry_after=seconds(wait),
            )

    def _new_match(
        self, uow: UnitOfWork, spec: Mapping[str, Any], *, public: bool = False, token_seats: set[int] | None = None,
        flags: Mapping[str, bool] | None = None,
    ) -> tuple[uuid.UUID, State, dict[int, str], str | None, list[str]]:
        """Stage a new match: its id, its state, the seat tokens (of ``token_seats``, or
        every person's seat), its invite code (when a seat is open) and the computer's
        moves in it (to report once it is stored).  ``flags``: how it came to be
        (``paired``, ``rated``; see ``engine.match.MATCH_FLAGS``)."""
        command, humans = start_command(spec)
        command.update(flags or {})
        match_id = uuid.uuid4()
        seat_tokens = {seat: tokens.seat_token(match_id) for seat in humans if token_seats is None or seat in token_seats}
        events = decide(State(), {**command, "at": self.play.stamp(State())})
        state = fold(events)
        moves: list[str] = []
        state, more = self.play.autoplay(match_id, state, [], moves=moves)
        events += more
        invite = tokens.new_invite() if state.phase == WAITING else None
        held = {i: seat["player"] for i, seat in enumerate(state.seats) if "player" in seat}
        computer = any(seat["kind"] == "computer" for seat in state.seats)
        self.stage_new_match(
            uow, match_id, [{"expected_version": 0, "events": events, "actor": "system", "state": state}],
            seat_tokens=seat_tokens, players=held, invite=invite, public=public,
            provenance=Provenance("played", BOTS_VERSION if computer else None, None, None, None),
        )
        return match_id, state, seat_tokens, invite, moves

    def _seat_the_player(self, uow: UnitOfWork, spec: Mapping[str, Any], player_id: uuid.UUID) -> dict:
        """The match body with the calling player on its first person's seat (named after
        the player unless the seat has a name)."""
        seats = [dict(seat) for seat in spec.get("seats") or DEFAULT_SEATS]
        first = next((i for i, seat in enumerate(seats) if seat.get("kind", "human") == "human"), None)
        if first is None:
            raise Invalid("a player's match needs a person's seat (kind human) for the player", code="no_seat_for_player")
        seats[first]["player"] = str(player_id)
        player = store_players.get_player(uow.conn, player_id)
        assert player is not None, "the caller's player exists (players are never deleted)"
        seats[first].setdefault("name", player.name)
        return {**spec, "seats": seats}

    def stage_paired_match(
        self, uow: UnitOfWork, players: list[tuple[uuid.UUID, str]], rules: Mapping[str, Any], *, rated: bool,
    ) -> tuple[uuid.UUID, dict[int, str]]:
        """Stage the match of two paired players (seat 0 for the first): both seats
        bound to their players, as a join binds one, and a seat token for each."""
        seats = [{"kind": "human", "name": name, "player": str(player)} for player, name in players]
        flags = {"paired": True} if rated else {"paired": True, "rated": False}
        match_id, _, seat_tokens, _, _ = self._new_match(uow, {"rules": dict(rules), "seats": seats}, flags=flags)
        return match_id, seat_tokens

    # --- joining ------------------------------------------------------------------------

    def join(
        self, token: str | None, match_id: uuid.UUID, code: str | None, name: str | None, key: str | None = None,
    ) -> Joined:
        """Take an open seat (for the calling player, if a player calls): with the invite
        code, or without one in a public match.  SeatTaken when every seat is taken,
        also when another player took the last one a moment before.  With ``key``, a
        retry is answered as the first request was."""
        with UnitOfWork(self.store) as uow:
            player = self.callers.optional_player(uow, token)
            asked = None
            if key is not None:
                scope = f"join:player:{player}" if player is not None else "join"
                asked = NewIdempotencyRecord(scope, key, fingerprint_of({"code": code, "name": name}, None), 201)
            secret = self.retries.secret(uow.conn) if asked is not None else b""
            if name is None and player is not None:
                known = store_players.get_player(uow.conn, player)
                assert known is not None, "the caller's player exists (players are never deleted)"
                name = known.name
            if name is None:
                raise Invalid("say the name to play under", errors={"name": ["required without a player token"]})
            for attempt in (1, 2):
                found = self.retries.find(uow.conn, match_id, asked) if asked is not None else None
                if found is not None:
                    assert asked is not None and found.first_seq is not None and found.last_seq is not None
                    return self._joined_again(uow, match_id, asked, found.first_seq, found.last_seq, found.sealed_token, secret)
                try:
                    seat, seat_token, state = self._join(uow, match_id, code, name, player, asked, secret)
                    break
                except ConcurrencyError:
                    if attempt == 2:
                        raise
                    # someone else changed the match (joined, most likely): look again
            context = self.views.context(uow.conn, state, match_id, stored=True)
            view = self.views.view(state, seat, match_id, context)
        return Joined(match_id, seat, seat_token, state, view)

    def _joined_again(
        self, uow: UnitOfWork, match_id: uuid.UUID, asked: NewIdempotencyRecord, first_seq: int, last_seq: int,
        sealed: bytes | None, secret: bytes,
    ) -> Joined:
        """The first answer to a join with this key: its seat, its token, its view as then."""
        (joined,) = self.store.read(match_id, after=first_seq - 1, limit=1, conn=uow.conn)
        seat = joined.data["seat"]
        seat_token = self.retries.unseal(uow.conn, secret, match_id, asked, sealed, match_id, seat)
        if seat_token is None:
            raise SeatTaken("this request took its seat before, but the service can no longer give its token again")
        state = self.store.state_at(match_id, last_seq, conn=uow.conn)
        view = self.views.view(state, seat, match_id, self.views.context_then(uow.conn, state, match_id))
        return Joined(match_id, seat, seat_token, state, view, replayed=True)

    def _join(
        self, uow: UnitOfWork, match_id: uuid.UUID, code: str | None, name: str, player: uuid.UUID | None,
        asked: NewIdempotencyRecord | None = None, secret: bytes = b"",
    ):
        state = self.store.load(match_id, conn=uow.conn)
        invite = online.find_invite(uow.conn, match_id)
        if invite is None or state.phase != WAITING:
            raise SeatTaken("no seat of this match is open")
        if not invite.public and not code:
            raise Forbidden("this match is joined with its invite code", code="invite_required")
        # A public match needs no code, but a code given is checked all the same.
        if code and not tokens.invite_matches(code, invite.code_hash):
            raise Forbidden("this is not the match's invite code", code="invalid_invite")
        command = {"type": "join", "name": name, "at": self.play.stamp(state)}
        if player is not None:
            command["player"] = str(player)
        try:
            events = decide(state, command)
        except IllegalMoveError as exc:
            if exc.rule == "seat_taken":
                raise SeatTaken(str(exc)) from None
            raise
        seat = events[0].data["seat"]
        after = fold(events, state)
        moves: list[str] = []
        after, more = self.play.autoplay(match_id, after, events, start=state, conn=uow.conn, moves=moves)
        events += more
        seat_token = tokens.seat_token(match_id)
        uow.append(match_id, state.version, events, actor=f"seat:{seat}", state=after)
        token_hash = tokens.hash_token(seat_token)
        uow.write(lambda conn: save_seat_tokens(conn, match_id, {seat: token_hash}))
        if player is not None:
            uow.write(lambda conn: store_players.bind_seats(conn, match_id, {seat: str(player)}))
        if asked is not None:
            sealed = self.retries.seal(secret, match_id, asked, seat_token)
            first, last = state.version + 1, state.version + len(events)
            uow.write(lambda conn: save_idempotency_record(conn, match_id, asked, first_seq=first, last_seq=last, sealed_token=sealed))
        uow.commit()
        self.play.stored(uow)
        self.play.report(moves)
        return seat, seat_token, after

    # --- playing again --------------------------------------------------------------------

    def rematch(self, token: str, match_id: uuid.UUID, asked_seat: str | None, key: str | None = None) -> Rematched:
        """The match played again by the same seats and rules, swapped so that the other
        seat starts; made by the first seat to ask, found by the second.  Each seat gets
        its token in the rematch when it first asks (with ``key``: also when it asks
        again with that key)."""
        with UnitOfWork(self.store) as uow:
            caller = self.callers.seat_for_match(uow, token, match_id, asked_seat, "plays for no seat")
            assert caller.seat is not None, "seat_for_match refuses the operator: the caller holds a seat"
            asked = None
            if key is not None:
                asked = NewIdempotencyRecord(f"rematch:{caller.scope}", key, fingerprint_of({"type": "rematch"}, None), 201)
            secret = self.retries.secret(uow.conn) if asked is not None else b""
            found = self.retries.find(uow.conn, match_id, asked) if asked is not None else None
            if found is not None:
                assert asked is not None
                return self._rematched_again(uow, match_id, asked, found, secret)
            state = self.store.load(match_id, conn=uow.conn)
            existing = online.rematch_of(uow.conn, match_id)
        if state.phase != MATCH_OVER or state.end_reason == "aborted":
            raise NoRematch("only a match that was played to its end can be played again")
        new_seat = 1 - caller.seat
        if existing is None:
            assert state.rules is not None, "a match over has started: it has its rules"
            spec = {"rules": state.rules.to_json(), "seats": [rematch_seat(state.seats[1]), rematch_seat(state.seats[0])]}
            try:
                with UnitOfWork(self.store) as uow:
                    new_id, made, seat_tokens, _, moves = self._new_match(uow, spec, token_seats={new_seat})

                    def link(conn) -> None:
                        linked = online.link_rematch(conn, match_id, new_id, new_seat)
                        if linked != new_id:  # another seat's request made it first: keep that one
                            raise _Linked(linked)

                    uow.write(link)
                    if asked is not None:
                        sealed = self.retries.seal(secret, match_id, asked, seat_tokens[new_seat])
                        body = {"id": str(new_id), "seat": new_seat, "version": made.version}
                        uow.write(lambda conn: save_idempotency_record(conn, match_id, asked, body=body, sealed_token=sealed))
                    uow.commit()
                    self.play.stored(uow)
                    self.play.report(moves)
                    return self._rematched(uow, new_id, new_seat, seat_tokens.get(new_seat), True, made)
            except _Linked as linked:
                existing = linked.rematch_id
        new_token = tokens.seat_token(existing)
        token_hash = tokens.hash_token(new_token)
        with UnitOfWork(self.store) as uow:
            current = self.store.load(existing, conn=uow.conn)

            def give(conn) -> bool:
                if not save_seat_token_once(conn, existing, new_seat, token_hash):
                    return False
                if asked is not None:
                    body = {"id": str(existing), "seat": new_seat, "version": current.version}
                    sealed = self.retries.seal(secret, match_id, asked, new_token)
                    save_idempotency_record(conn, match_id, asked._replace(status=200), body=body, sealed_token=sealed)
                return True

            saved = uow.write(give, alone=asked is None)
            uow.commit()
            if not saved.value and asked is not None:
                # Given before: by this key's request, racing this one, or without it.
                found = self.retries.find(uow.conn, match_id, asked)
                if found is not None:
                    return self._rematched_again(uow, match_id, asked, found, secret)
            seat_token = new_token if saved.value else None  # None: this seat was given its token before
            return self._rematched(uow, existing, new_seat, seat_token, False, current)

    def _rematched(
        self, uow: UnitOfWork, match_id, seat: int, token: str | None, created: bool, state: State, *, then: bool = False,
    ) -> Rematched:
        context = self.views.context_then(uow.conn, state, match_id) if then else self.views.context(uow.conn, state, match_id)
        view = self.views.view(state, seat, match_id, context)
        return Rematched(match_id, seat, token, created, state, view, replayed=then)

    def _rematched_again(self, uow: UnitOfWork, match_id, asked: NewIdempotencyRecord, found, secret: bytes) -> Rematched:
        """The first answer to a rematch with this key: the rematch, the seat, its token
        (None when the retry secret changed since) and the view as it was then."""
        new_id, seat = uuid.UUID(found.body["id"]), found.body["seat"]
        seat_token = self.retries.unseal(uow.conn, secret, match_id, asked, found.sealed_token, new_id, seat)
        state = self.store.state_at(new_id, found.body["version"], conn=uow.conn)
        return self._rematched(uow, new_id, seat, seat_token, found.status == 201, state, then=True)

    # --- listing ------------------------------------------------------------------------

    def lobby(self, limit: int, offset: int) -> Page:
        rows = self.reads.run(lambda uow: online.lobby(uow.conn, limit=limit + 1, offset=offset, max_age=LOBBY_MAX_AGE))
        items = [
            {
                "id": str(row.match_id),
                # Every parameter, those the recorded rules leave out at their defaults too.
                "rules": rules_from_json(row.rules).to_json(complete=True),
                "creator": next((seat.get("name") for seat in row.seats if seat["kind"] == "human"), None),
                "created_at": row.created_at.isoformat(),
            }
            for row in rows[:limit]
        ]
        return Page(items, str(offset + len(items)) if len(rows) > limit else None)

    def visible(self, token: str, status: str | None, limit: int, offset: int) -> Page:
        """The matches the caller may see: the operator every one, newest first; a seat
        token its own match; a player the matches it holds a seat in."""
        with UnitOfWork(self.store) as uow:
            caller = self.callers.identify(uow, token)
            if caller.is_operator:
                rows = self.store.summaries(status=status, limit=limit + 1, offset=offset, conn=uow.conn)
            elif caller.role == "player":
                assert caller.player_id is not None, "identify gives a player's caller its player"
                held = store_players.matches_of(uow.conn, caller.player_id, status=status, limit=limit + 1, offset=offset)
                rows = [self.store.summary(m.match_id, conn=uow.conn) for m in held]
            else:
                assert caller.match_id is not None, "neither the operator nor a player: a seat's token, of its match"
                row = self.store.summary(caller.match_id, conn=uow.conn)
                rows = [row] if offset == 0 and status in (None, row.status) else []
        items = [_summary_json(row) for row in rows[:limit]]
        return Page(items, str(offset + len(items)) if len(rows) > limit else None)


def _summary_json(row) -> dict:
    data = row.to_json()
    data["id"] = data.pop("match_id")
    data["seats"] = [
        {"seat": i, "name": seat.get("name"), "kind": seat.get("kind"), "level": seat.get("level"), "player": seat.get("player")}
        for i, seat in enumerate(data["seats"])
    ]
    return data


__all__ = ["Conflict", "Created", "Joined", "MatchService", "Page", "Rematched", "public_seats"]

"""The path of one action: load, decide, let the computer answer, append.

This is the application layer between the REST API (or the CLI) and the store: it
creates matches, applies a seat's command, deals new hands and plays the computer's
turns, and writes everything a request caused in one append, so a request either
happened completely or not at all.

Randomness lives here, never in the engine: a deal's deck order and salt come from
the operating system's generator and are recorded in the ``hand_dealt`` event; each
computer seat gets a seed in ``match_started``, and its decisions draw from a
generator seeded by that seed and the match version, so replays and tests are stable.

So does the clock: every command is stamped with the time the service received it
(``at``, from ``clock``, never earlier than the match's last event), which the engine
records in the events of a match played under a clock and judges deadlines by.  Tests
give the service a clock of their own.

Online play: a match may have open seats, taken with ``join`` (by its invite code,
whose hash is kept with the match, or without one when the match is public); a
finished match can be played again (``rematch``) by the same seats, swapped so that
the other one starts, each getting its seat token when it asks.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import secrets
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import psycopg

from service import bots, coach, ratings
from service.serving import off_loop
from service.engine import CommandError, Event, IllegalMoveError, State, check_hint, decide, fold, redact_event, seat_view
from service.engine.game import AWAITING_DEAL, MATCH_OVER, MAX_SEED, WAITING
from service.engine.deals import deal_command
from service.store import ConcurrencyError, EventStore, NewIdempotencyRecord, StoredEvent
from service.store import online, players, provenance
from service.store.provenance import Provenance
from service.store.seat_tokens import hash_token, new_token, save_seat_tokens

#: The computer's levels whose decisions run off the event loop (service.serving).
SLOW_LEVELS = frozenset({"hard"})

#: Upper bound on events one request may cause (a whole computer-only hand is far less).
MAX_EVENTS_PER_REQUEST = 2_000


class StaleVersion(Exception):
    """The client's If-Match version is not the match's current version."""

    def __init__(self, expected: int, current: int):
        super().__init__(f"the match is at version {current}, not {expected}")
        self.expected = expected
        self.current = current


class MatchHooks:
    """What the service reports as it plays, for metrics; this default reports nothing.

    Called after the fact and must not fail: ``action_applied`` once per action in
    a successful append (``by`` is "person" or "computer"), ``bot_decided`` once per
    move the computer chooses, with the seconds it took."""

    def action_applied(self, action_type: str, by: str) -> None:
        pass

    def bot_decided(self, level: str, seconds: float) -> None:
        pass


@dataclass
class Created:
    match_id: uuid.UUID
    state: State
    events: list
    tokens: dict[int, str]
    #: The invite code of a match with an open seat (shown once, like a token).
    invite: str | None = None


class InviteRefused(Exception):
    """A join without the invite code of a match that is not public, or with a wrong one."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class NoRematch(Exception):
    """The match cannot be played again (it is not over, or it never began)."""


@dataclass
class Joined:
    seat: int
    token: str
    state: State
    events: list[StoredEvent]


@dataclass
class Rematched:
    match_id: uuid.UUID
    seat: int
    #: The caller's seat token in the rematch; None when that seat was given one before.
    token: str | None
    created: bool
    state: State


def invite_hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


def seat_token(match_id: uuid.UUID) -> str:
    """A bearer token for one seat: names its match (not secret), then 256 random bits."""
    return f"gr1.{match_id.hex}.{new_token()}"


def match_of_token(token: str) -> uuid.UUID | None:
    """The match a seat token names, or None when it is not shaped like one."""
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != "gr1":
        return None
    try:
        return uuid.UUID(hex=parts[1])
    except ValueError:
        return None


def public_seats(state: State) -> list[dict]:
    """Seats as clients see them: no seeds, no tokens (an open seat has no name yet)."""
    return [
        {"seat": i, "name": s.get("name"), "kind": s["kind"], "level": s.get("level"), "player": s.get("player")}
        for i, s in enumerate(state.seats)
    ]


def status_of(state: State) -> str:
    return "finished" if state.phase == MATCH_OVER else "waiting" if state.phase == WAITING else "active"


def view_for(
    state: State,
    seat: int,
    match_id: uuid.UUID,
    *,
    now: datetime | None = None,
    connected: frozenset[int] | None = None,
    rematch: uuid.UUID | None = None,
    provenance: dict | None = None,
) -> dict:
    """The seat view the API serves, and the only thing a bot ever sees.  ``now`` lets
    a timeout claim be listed once the opponent's deadline has passed; ``connected``
    are the seats with a live stream open (for ``opponent.connected``, which is null
    for a computer); ``rematch`` the match this one is played again as; ``provenance``
    where the match came from (null where it was not asked for)."""
    view = seat_view(state, seat, now=now)
    view["match_id"] = str(match_id)
    view["status"] = status_of(state)
    view["seats"] = public_seats(state)
    opponent = 1 - seat
    person = bool(state.seats) and state.seats[opponent]["kind"] == "human"
    view["opponent"]["connected"] = (opponent in connected) if person and connected is not None else (False if person else None)
    view["rematch"] = str(rematch) if rematch is not None else None
    view["provenance"] = provenance
    return view


def system_clock() -> datetime:
    return datetime.now(timezone.utc)


class MatchService:
    def __init__(
        self,
        store: EventStore,
        deal_rng: random.Random | None = None,
        hooks: MatchHooks | None = None,
        clock: Callable[[], datetime] = system_clock,
    ):
        self.store = store
        # The OS generator by default: deals must not be predictable from earlier ones.
        self.deal_rng = deal_rng or random.SystemRandom()
        self.hooks = hooks or MatchHooks()
        self.ratings = ratings.Folder(store)
        self.clock = clock

    def stamp(self, state: State) -> str:
        """The time of a command on ``state``: now, or the match's last event's time if
        this server's clock is behind it (times in a match never go back)."""
        now = self.clock().astimezone(timezone.utc)
        if state.last_at is not None:
            now = max(now, datetime.fromisoformat(state.last_at))
        return now.isoformat(timespec="milliseconds")

    # --- creating ---------------------------------------------------------------

    def prepare(self, spec: Mapping[str, Any]) -> tuple[dict, dict[int, None]]:
        """The start_match command for a request body, and the human seats (to get tokens)."""
        rules = dict(spec.get("rules") or {})
        if "single_hand" in spec:
            rules["single_hand"] = spec["single_hand"]
        seats_in = spec.get("seats") or [{"kind": "human"}, {"kind": "computer", "level": "medium"}]
        seats, tokens = [], {}
        for i, given in enumerate(seats_in):
            seat = dict(given)
            kind = seat.get("kind", "human")
            if kind == "computer":
                # Below 2**53, so a JavaScript client reads the seed (and a record) exactly.
                seat["seed"] = secrets.randbelow(MAX_SEED + 1)
            elif kind == "human":
                tokens[i] = None  # made once the match id is known
            seats.append(seat)
        return {"type": "start_match", "rules": rules, "seats": seats}, tokens

    def create(
        self,
        spec: Mapping[str, Any],
        *,
        public: bool = False,
        token_seats: set[int] | None = None,
        then: Callable[[psycopg.Connection, uuid.UUID], None] | None = None,
    ) -> Created:
        """Start a match from a request body.  ``token_seats``: the human seats given a
        token now (default all); a match with an open seat gets an invite code, and
        ``public`` lists it in the lobby; ``then(conn, match_id)`` runs in the same
        transaction (to link a rematch)."""
        command, tokens = self.prepare(spec)
        match_id = uuid.uuid4()
        tokens = {seat: seat_token(match_id) for seat in tokens if token_seats is None or seat in token_seats}
        events = decide(State(), {**command, "at": self.stamp(State())})
        state = fold(events)
        moves: list[str] = []
        state, more = self.autoplay(match_id, state, [], moves=moves)
        events += more
        invite = secrets.token_urlsafe(24) if state.phase == WAITING else None  # 192 random bits
        held = {i: seat["player"] for i, seat in enumerate(state.seats) if "player" in seat}
        with self.store.transaction() as conn:
            self.store.append(match_id, 0, events, actor="system", state=state, conn=conn)
            save_seat_tokens(conn, match_id, {seat: hash_token(t) for seat, t in tokens.items()})
            players.bind_seats(conn, match_id, held)
            computer = any(seat["kind"] == "computer" for seat in state.seats)
            provenance.save(conn, match_id, Provenance("played", bots.BOTS_VERSION if computer else None, None, None, None))
            if invite is not None:
                online.save_invite(conn, match_id, invite_hash(invite), public)
            if then is not None:
                then(conn, match_id)
        self._report(moves)
        return Created(match_id, state, events, tokens, invite)

    # --- joining ----------------------------------------------------------------

    def join(self, match_id: uuid.UUID, code: str | None, name: str, player: uuid.UUID | None = None) -> Joined:
        """Take an open seat (for ``player``, when a player joins): with the invite code,
        or without one in a public match.
        Raises InviteRefused, MatchNotFound, or the engine's IllegalMoveError
        (``seat_taken``) when every seat is taken, also when another player took the
        last one a moment before."""
        for attempt in (1, 2):
            with self.store.connection() as conn:
                state = self.store.load(match_id, conn=conn)
                invite = online.find_invite(conn, match_id)
            if invite is None or state.phase != WAITING:
                raise IllegalMoveError("seat_taken", "no seat of this match is open")
            if not invite.public and not code:
                raise InviteRefused("invite_required", "this match is joined with its invite code")
            # A public match needs no code, but a code given is checked all the same.
            if code and not hmac.compare_digest(invite_hash(code), invite.code_hash):
                raise InviteRefused("invalid_invite", "this is not the match's invite code")
            command = {"type": "join", "name": name, "at": self.stamp(state)}
            if player is not None:
                command["player"] = str(player)
            events = decide(state, command)
            seat = events[0].data["seat"]
            after = fold(events, state)
            moves: list[str] = []
            after, more = self.autoplay(match_id, after, events, start=state, moves=moves)
            events += more
            token = seat_token(match_id)
            try:
                with self.store.transaction() as conn:
                    stored = self.store.append(match_id, state.version, events, actor=f"seat:{seat}", state=after, conn=conn)
                    save_seat_tokens(conn, match_id, {seat: hash_token(token)})
                    if player is not None:
                        players.bind_seats(conn, match_id, {seat: str(player)})
            except ConcurrencyError:
                if attempt == 2:
                    raise
                continue  # someone else changed the match (joined, most likely): look again
            self._report(moves)
            return Joined(seat, token, after, stored)
        raise AssertionError("unreachable")

    # --- playing again ------------------------------------------------------------

    def rematch(self, match_id: uuid.UUID, seat: int) -> Rematched:
        """The match played again by the same seats and rules, swapped so that the other
        seat starts; made by the first seat to ask, found by the second.  Each seat
        gets its token in the rematch when it first asks."""
        with self.store.connection() as conn:
            state = self.store.load(match_id, conn=conn)
            existing = online.rematch_of(conn, match_id)
        if state.phase != MATCH_OVER or state.end_reason == "aborted":
            raise NoRematch("only a match that was played to its end can be played again")
        new_seat = 1 - seat
        created = False
        if existing is None:
            seats = [_seat_spec(state.seats[1]), _seat_spec(state.seats[0])]
            spec = {"rules": state.rules.to_json(), "seats": seats}
            linked: list[uuid.UUID] = []

            def link(conn, new_id):
                linked.append(online.link_rematch(conn, match_id, new_id))
                if linked[0] != new_id:  # another seat's request made it first: keep that one
                    raise _Linked()

            try:
                made = self.create(spec, token_seats={new_seat}, then=link)
                return Rematched(made.match_id, new_seat, made.tokens.get(new_seat), True, made.state)
            except _Linked:
                existing = linked[0]
        token = seat_token(existing)
        try:
            with self.store.transaction() as conn:
                save_seat_tokens(conn, existing, {new_seat: hash_token(token)})
        except psycopg.errors.UniqueViolation:
            token = None  # this seat was given its token before
        return Rematched(existing, new_seat, token, created, self.store.load(existing))


    # --- acting -----------------------------------------------------------------

    def act(
        self,
        conn,
        match_id: uuid.UUID,
        seat: int,
        command: Mapping[str, Any],
        *,
        expected_version: int | None = None,
        idempotency: NewIdempotencyRecord | None = None,
    ) -> tuple[State, list[StoredEvent]]:
        """Apply one seat command and the computer's answers; append them all at once.

        ``idempotency``, the request's Idempotency-Key, is saved in the same statement
        as the events, so ``conn`` needs no transaction (the append checks the version).
        Raises StaleVersion, the engine's CommandError / IllegalMoveError, or the
        store's ConcurrencyError when another request appended first (or answered the
        same key).  Returns the new state and the stored events.

        The command is first decided on the state this process last saw of the match
        (no query: the append's version check guards it).  If that fails in any way,
        the state may have been stale, so the match is loaded as committed and the
        command decided again: what the client gets is always the database's answer.
        Without ``expected_version``, the command applies to the match as it is when
        its events are stored.
        """
        cached = self.store.cached(match_id)
        if cached is not None:
            try:
                return self._act(conn, match_id, cached, seat, command, expected_version, idempotency)
            except (StaleVersion, CommandError, IllegalMoveError, ConcurrencyError):
                pass
        state = self.store.load(match_id, conn=conn)
        return self._act(conn, match_id, state, seat, command, expected_version, idempotency)

    def _act(self, conn, match_id, state: State, seat, command, expected_version, idempotency):
        if expected_version is not None and expected_version != state.version:
            raise StaleVersion(expected_version, state.version)
        events = decide(state, {**command, "seat": seat, "at": self.stamp(state)})
        after = fold(events, state)
        moves: list[str] = []
        after, more = self.autoplay(match_id, after, events, start=state, conn=conn, moves=moves)
        events += more
        stored = self.store.append(
            match_id, state.version, events, actor=f"seat:{seat}", state=after, idempotency=idempotency, conn=conn
        )
        self._report(moves, command["type"])
        if after.phase == MATCH_OVER:
            # The match ended: fold it into the ratings (autocommit: it is stored).
            # Readers of ratings catch up too, so a failure here loses nothing.
            self.ratings.fold(next(e.position for e in stored if e.type == "match_ended"))
        return after, stored

    def hint(self, conn, match_id: uuid.UUID, seat: int) -> tuple[dict, State, int, bool]:
        """A hint for ``seat``, the seat to act: the coach's best play and its reason,
        recorded as a ``hint_shown`` event.  Returns the hint, the state after it, the
        event's seq, and whether it is new: asked again before anything else happens,
        the same hint is answered without another event.  Raises IllegalMoveError
        (``hints_off``, ``not_your_turn``) or the store's ConcurrencyError."""
        state = self.store.load(match_id, conn=conn)
        check_hint(state, seat)  # before the coach's work (the hint command checks it again)
        stored = self.store.hand_events(match_id, state, conn=conn)
        last = stored[-1] if stored else None
        if last is not None and last["type"] == "hint_shown" and last["data"]["seat"] == seat:
            return last["data"], state, last["seq"], False
        history = [redact_event(e, seat) for e in stored]
        view = view_for(state, seat, match_id)
        assessment = off_loop(coach.assess, view, history, str(match_id))
        if assessment is None:  # one play only: it is the hint
            only = next(a for a in view["legal_actions"] if a["type"] in coach.PLAYS)
            assessment = coach.Assessment(coach.KINDS[state.phase], only, {coach.key_of(only): 0.0}, "it is the only play")
        command = {"type": "hint", "seat": seat, "action": assessment.best, "reason": assessment.reason, "at": self.stamp(state)}
        events = decide(state, command)
        after = fold(events, state)
        appended = self.store.append(match_id, state.version, events, actor=f"seat:{seat}", state=after, conn=conn)
        return events[0].data, after, appended[0].seq, True

    def autoplay(
        self, match_id: uuid.UUID, state: State, pending: list, start: State | None = None, conn=None,
        moves: list[str] | None = None,
    ):
        """Deal when a deal is due and play computer turns until a person must act.

        ``pending`` are this request's events not yet stored, which follow ``start``
        (the stored state the request began from; None for a new match).  The type of
        each computer move is added to ``moves``, for the hooks once it is stored."""
        new: list[Event] = []
        stored: list[dict] | None = None  # the stored events of start's hand, fetched once
        at = None
        while state.phase != MATCH_OVER and len(new) < MAX_EVENTS_PER_REQUEST:
            at = at or self.stamp(state)  # one time for the request's every event
            if state.phase == AWAITING_DEAL:
                command = {**deal_command(self.deal_rng), "at": at}
            elif state.turn is not None and state.seats[state.turn]["kind"] == "computer":
                base = start.version if start is not None else 0
                if stored is None:
                    stored = self.store.hand_events(match_id, start, conn=conn) if base else []
                history = self.hand_history(state, stored, pending + new, base)
                command = {**self.computer_action(match_id, state, history), "seat": state.turn, "at": at}
                if moves is not None:
                    moves.append(command["type"])
            else:
                break
            events = decide(state, command)
            state = fold(events, state)
            new += events
        return state, new

    def computer_action(self, match_id, state: State, history: list[dict]) -> dict:
        level = state.seats[state.turn]["level"]
        started = time.perf_counter()
        if level in SLOW_LEVELS:
            # Tens of milliseconds at times: off the event loop, which serves meanwhile.
            action = off_loop(computer_decision, match_id, state, history)
        else:
            action = computer_decision(match_id, state, history)
        self.hooks.bot_decided(level, time.perf_counter() - started)
        return action

    def _report(self, computer_moves: list[str], person_move: str | None = None) -> None:
        if person_move is not None:
            self.hooks.action_applied(person_move, "person")
        for move in computer_moves:
            self.hooks.action_applied(move, "computer")

    @staticmethod
    def hand_history(state: State, stored: list[dict], pending: list, base: int) -> list[dict]:
        """The turn's seat's redacted events of the current hand: the stored ones (seq up
        to ``base``), then this request's, numbered on from ``base``."""
        first = state.hand_start_version  # the events after this version belong to the hand
        events = [e for e in stored if e["seq"] > first]
        events += [
            {"seq": base + i + 1, "type": e.type, "data": e.data} for i, e in enumerate(pending) if base + i + 1 > first
        ]
        return [redact_event(e, state.turn) for e in events]


def computer_decision(match_id: uuid.UUID, state: State, history: list[dict]) -> dict:
    """The computer's action for the seat whose turn it is: a pure function of the match
    (its id, its state, the seat's redacted events of the hand), so that an imported
    record's computer moves can be checked by making them again (bots.BOTS_VERSION)."""
    seat = state.turn
    info = state.seats[seat]
    rng = random.Random(f"{info['seed']}:{state.version}")
    return bots.choose_action(view_for(state, seat, match_id), history, info["level"], rng)


class _Linked(Exception):
    """The rematch was linked by another request first (its creation is rolled back)."""


def _seat_spec(seat: dict) -> dict:
    """A seat of a finished match as a seat of its rematch (a computer gets a new seed;
    a player keeps their seat)."""
    if seat["kind"] == "computer":
        return {"kind": "computer", "level": seat["level"], "name": seat["name"]}
    return {key: seat[key] for key in ("kind", "name", "player") if key in seat}

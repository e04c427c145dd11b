"""The path of one action: load, decide, let the computer answer, append.

This is the application layer between the REST API (or the CLI) and the store: it
creates matches, applies a seat's command, deals new hands and plays the computer's
turns, and writes everything a request caused in one append, so a request either
happened completely or not at all.

Randomness lives here, never in the engine: a deal's deck order and salt come from
the operating system's generator and are recorded in the ``hand_dealt`` event; each
computer seat gets a seed in ``match_started``, and its decisions draw from a
generator seeded by that seed and the match version, so replays and tests are stable.
"""

from __future__ import annotations

import random
import secrets
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from service import bots
from service.serving import off_loop
from service.engine import CommandError, Event, IllegalMoveError, State, decide, fold, redact_event, seat_view
from service.engine.game import AWAITING_DEAL, MATCH_OVER, MAX_SEED
from service.engine.simulate import deal_command
from service.store import ConcurrencyError, EventStore, NewIdempotencyRecord, StoredEvent
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
    """Seats as clients see them: no seeds, no tokens."""
    return [
        {"seat": i, "name": s["name"], "kind": s["kind"], "level": s.get("level")} for i, s in enumerate(state.seats)
    ]


def status_of(state: State) -> str:
    return "finished" if state.phase == MATCH_OVER else "active"


def view_for(state: State, seat: int, match_id: uuid.UUID) -> dict:
    """The seat view the API serves, and the only thing a bot ever sees."""
    view = seat_view(state, seat)
    view["match_id"] = str(match_id)
    view["status"] = status_of(state)
    view["seats"] = public_seats(state)
    return view


class MatchService:
    def __init__(self, store: EventStore, deal_rng: random.Random | None = None, hooks: MatchHooks | None = None):
        self.store = store
        # The OS generator by default: deals must not be predictable from earlier ones.
        self.deal_rng = deal_rng or random.SystemRandom()
        self.hooks = hooks or MatchHooks()

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
            if seat.get("kind", "human") == "computer":
                # Below 2**53, so a JavaScript client reads the seed (and a record) exactly.
                seat["seed"] = secrets.randbelow(MAX_SEED + 1)
            else:
                tokens[i] = None  # made once the match id is known
            seats.append(seat)
        return {"type": "start_match", "rules": rules, "seats": seats}, tokens

    def create(self, spec: Mapping[str, Any]) -> Created:
        command, tokens = self.prepare(spec)
        match_id = uuid.uuid4()
        tokens = {seat: seat_token(match_id) for seat in tokens}
        events = decide(State(), command)
        state = fold(events)
        moves: list[str] = []
        state, more = self.autoplay(match_id, state, [], moves=moves)
        events += more
        with self.store.transaction() as conn:
            self.store.append(match_id, 0, events, actor="system", state=state, conn=conn)
            save_seat_tokens(conn, match_id, {seat: hash_token(t) for seat, t in tokens.items()})
        self._report(moves)
        return Created(match_id, state, events, tokens)

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
        events = decide(state, {**command, "seat": seat})
        after = fold(events, state)
        moves: list[str] = []
        after, more = self.autoplay(match_id, after, events, start=state, conn=conn, moves=moves)
        events += more
        stored = self.store.append(
            match_id, state.version, events, actor=f"seat:{seat}", state=after, idempotency=idempotency, conn=conn
        )
        self._report(moves, command["type"])
        return after, stored

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
        while state.phase != MATCH_OVER and len(new) < MAX_EVENTS_PER_REQUEST:
            if state.phase == AWAITING_DEAL:
                command = deal_command(self.deal_rng)
            elif state.turn is not None and state.seats[state.turn]["kind"] == "computer":
                base = start.version if start is not None else 0
                if stored is None:
                    stored = self.store.hand_events(match_id, start, conn=conn) if base else []
                history = self.hand_history(state, stored, pending + new, base)
                command = {**self.computer_action(match_id, state, history), "seat": state.turn}
                if moves is not None:
                    moves.append(command["type"])
            else:
                break
            events = decide(state, command)
            state = fold(events, state)
            new += events
        return state, new

    def computer_action(self, match_id, state: State, history: list[dict]) -> dict:
        seat = state.turn
        info = state.seats[seat]
        rng = random.Random(f"{info['seed']}:{state.version}")
        started = time.perf_counter()
        view = view_for(state, seat, match_id)
        if info["level"] in SLOW_LEVELS:
            # Tens of milliseconds at times: off the event loop, which serves meanwhile.
            action = off_loop(bots.choose_action, view, history, info["level"], rng)
        else:
            action = bots.choose_action(view, history, info["level"], rng)
        self.hooks.bot_decided(info["level"], time.perf_counter() - started)
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

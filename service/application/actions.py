"""The path of one action, and what a seat reads of its match: its view and its events.

``act``: authorise the seat; decide its command on the state this process last saw of
the match (no query: the append's version check guards it), let the computer answer
and deal what is due (``Play.autoplay``), and append every event the request caused in
one statement together with the answer to its Idempotency-Key (``UnitOfWork``: an append
alone needs no transaction).  If deciding on the remembered state fails in any way, the
state may have been stale: the match is loaded as committed and the command decided
again, so what the client gets is always the database's answer.

A request with a key that was applied before is not looked up first (that would cost
every request a query): acting again fails -- the version moved on, the action is no
longer legal, or, when it is legal again, the key's record exists (the statement saving
the events with the record fails on the key, storing nothing) -- and any of those, with
a key, looks for the first answer and rebuilds it from the events it named.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from service import ratings
from service.engine import CommandError, IllegalMoveError, State, decide, fold
from service.engine.game import MATCH_OVER
from service.store import (
    ConcurrencyError,
    EventStore,
    NewIdempotencyRecord,
    StoredEvent,
    find_idempotency_record,
)

from .callers import Caller, Callers
from .errors import Conflict, VersionMismatch
from .play import Play
from .reads import Reads
from .retries import check_reuse
from .unit_of_work import UnitOfWork
from .views import SeatAnswer, Views, dumps, event_json


@dataclass
class ActionResult:
    #: The answer's JSON: the caller's view after the action, and every event it caused.
    body: bytes | dict
    version: int
    status: int = 200
    #: The first answer to this Idempotency-Key, given again.
    replayed: bool = False


@dataclass
class EventsPage:
    body: dict
    version: int


def fingerprint_of(command: Mapping[str, Any], expected: int | None) -> str:
    """What tells a retry of a request from another request reusing its key."""
    return hashlib.sha256(json.dumps([command, expected], sort_keys=True).encode()).hexdigest()


class Actions:
    def __init__(
        self, store: EventStore, callers: Callers, views: Views, play: Play, folder: ratings.Folder,
        reads: Reads | None = None,
    ):
        self.store = store
        self.reads = reads or Reads(store)
        self.callers = callers
        self.views = views
        self.play = play
        self.ratings = folder

    # --- acting -------------------------------------------------------------------------

    def act(
        self, token: str, match_id: uuid.UUID, asked_seat: str | None, command: Mapping[str, Any], *,
        expected_version: int | None = None, key: str | None = None,
    ) -> ActionResult:
        """Apply one seat command and the computer's answers.  Without
        ``expected_version`` the command applies to the match as it is when its events
        are stored.  Raises VersionMismatch, Conflict, the engine's CommandError /
        IllegalMoveError (when no earlier answer to ``key`` explains them)."""
        fingerprint = fingerprint_of(command, expected_version)
        with UnitOfWork(self.store) as uow:
            caller = self.callers.seat_for_match(uow, token, match_id, asked_seat, "acts for no seat")
            assert caller.seat is not None, "seat_for_match refuses the operator: the caller holds a seat"
            # Known before the action (read once per process): an answer built after the
            # commit holds it even when the database fails meanwhile, as its retry will.
            self.views.provenance(uow.conn, match_id)
            record = NewIdempotencyRecord(caller.scope, key, fingerprint) if key is not None else None
            try:
                state, events = self._act(uow, match_id, caller.seat, command, expected_version, record)
            except (VersionMismatch, ConcurrencyError, CommandError, IllegalMoveError) as exc:
                replayed = self._replay(uow, match_id, caller, key, fingerprint) if key is not None else None
                if replayed is not None:
                    return replayed
                if isinstance(exc, ConcurrencyError):
                    raise Conflict("another request changed the match first; reload it and retry") from None
                raise
            return ActionResult(self._answer(uow, state, events, caller, match_id), state.version)

    def _act(self, uow: UnitOfWork, match_id, seat: int, command, expected_version, record) -> tuple[State, list[StoredEvent]]:
        cached = self.store.cached(match_id)
        if cached is not None:
            try:
                return self._decide_and_append(uow, match_id, cached, seat, command, expected_version, record)
            except (VersionMismatch, CommandError, IllegalMoveError, ConcurrencyError):
                pass
        state = self.store.load(match_id, conn=uow.conn)
        return self._decide_and_append(uow, match_id, state, seat, command, expected_version, record)

    def _decide_and_append(self, uow: UnitOfWork, match_id, state: State, seat, command, expected_version, record):
        if expected_version is not None and expected_version != state.version:
            raise VersionMismatch(expected_version, state.version)
        events = decide(state, {**command, "seat": seat, "at": self.play.stamp(state)})
        after = fold(events, state)
        moves: list[str] = []
        after, more = self.play.autoplay(match_id, after, events, start=state, conn=uow.conn, moves=moves)
        events += more
        appended = uow.append(match_id, state.version, events, actor=f"seat:{seat}", state=after, idempotency=record)
        uow.commit()
        self.play.stored(uow)
        self.play.report(moves, command["type"])
        if after.phase == MATCH_OVER:
            # The match ended: fold it into the ratings (it is stored).  Readers of
            # ratings catch up too, so a failure here loses nothing.
            self.ratings.fold(next(e.position for e in appended.events if e.type == "match_ended"))
        return after, appended.events

    def _answer(
        self, uow: UnitOfWork, state: State, events: list[StoredEvent], caller: Caller, match_id, *, then: bool = False,
    ) -> bytes:
        """An action's answer, as JSON: the caller's view after it, and every event it
        caused (``then``: given again, with the view's extras as they were then)."""
        if then:
            context = self.views.context_then(uow.conn, state, match_id)
        else:
            context = self.views.context(uow.conn, state, match_id, stored=True)
        view = self.views.encoded(state, caller.seat, match_id, context)
        return b'{"view":%s,"events":%s}' % (view, dumps([event_json(e, caller.seat) for e in events]))

    def _replay(self, uow: UnitOfWork, match_id, caller: Caller, key: str, fingerprint: str) -> ActionResult | None:
        record = find_idempotency_record(uow.conn, match_id, caller.scope, key)
        if record is None:
            return None
        check_reuse(record, fingerprint)
        if record.body is not None:  # stored by an earlier version of the service
            return ActionResult(record.body, record.body["view"]["version"], record.status, True)
        # The first answer, rebuilt: the view at the request's last event as it was then, and its events.
        assert record.first_seq is not None and record.last_seq is not None, "the table's CHECK: without a body, its events"
        count = record.last_seq - record.first_seq + 1
        events = self.store.read(match_id, after=record.first_seq - 1, limit=count, conn=uow.conn)
        state = self.store.state_at(match_id, record.last_seq, conn=uow.conn)
        return ActionResult(self._answer(uow, state, events, caller, match_id, then=True), state.version, record.status, True)

    # --- reading ------------------------------------------------------------------------

    def view(self, token: str, match_id: uuid.UUID, asked_seat: str | None) -> SeatAnswer:
        """The caller's view (the operator's: the seat asked for, with the hidden cards)."""
        with UnitOfWork(self.store) as uow:
            caller = self.callers.for_match(uow, token, match_id, asked_seat)
            state = self.store.load(match_id, conn=uow.conn)
            context = self.views.context(uow.conn, state, match_id)
        return self.views.answer(state, caller.seat, match_id, context, operator_asked=asked_seat)

    def events(self, token: str, match_id: uuid.UUID, asked_seat: str | None, after: int, limit: int) -> EventsPage:
        """The events after ``after``, at most ``limit``, redacted for the caller."""
        with UnitOfWork(self.store) as uow:
            caller = self.callers.for_match(uow, token, match_id, asked_seat)
            # A finished match's events no longer change: a standby may read them.
            finished = self.reads.replica is not None and self.store.summary(match_id, conn=uow.conn).status == "finished"
            if not finished:
                events, version = self._events(uow, match_id, after, limit)
        if finished:
            events, version = self.reads.run(lambda uow: self._events(uow, match_id, after, limit))
        more = len(events) > limit
        body = {
            "match_id": str(match_id),
            "version": version,
            "events": [event_json(e, caller.seat) for e in events[:limit]],
            "next_after": version if more else None,
        }
        return EventsPage(body, version)

    def _events(self, uow: UnitOfWork, match_id: uuid.UUID, after: int, limit: int) -> tuple[list[StoredEvent], int]:
        """Up to ``limit + 1`` events after ``after``, and the version they were read at."""
        events = self.store.read(match_id, after=after, limit=limit + 1, conn=uow.conn)
        # With no events after ``after``, the match was at ``after`` at most when read
        # (the summary, read next, may be newer: its events would be missed).
        if events:
            return events, events[min(len(events), limit) - 1].seq
        return events, min(after, self.store.summary(match_id, conn=uow.conn).version)

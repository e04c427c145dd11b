"""The event store: append with an expected version, load by folding, read, follow.

An append is one SQL statement (so in autocommit it is its own transaction, one round
trip): it inserts the events and, when the batch changes them, writes the match summary
and (when a hand is dealt) a snapshot.  The primary key ``(match_id, seq)`` decides
races: of two appends at the same expected version, the second fails on it and gets
``ConcurrencyError``.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime
from typing import Any, NamedTuple
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb
from psycopg_pool import ConnectionPool

from service.engine import Event, State, fold

from . import players as _players
from . import summaries as _summaries
from .cache import DEFAULT_SIZE, Entry, StateCache, hand_tail, keeps_hand_events
from .database import conninfo_of, kept_cursor
from .errors import ConcurrencyError, MatchNotFound
from .events import COLUMNS, StoredEvent, current_data, stored_events
from .idempotency import NewIdempotencyRecord
from .notifications import Announcer, payload
from .summaries import (
    INSERT_SUMMARY,
    SUMMARY_EVENTS,
    UPDATE_SUMMARY,
    MatchSummary,
    summary_changes,
)
from .upcasting import current_version

# The layout of the engine's State: snapshots of another layout are ignored (they are
# caches; the load then folds more events).  Raise the leading number when evolve
# changes what a field means without changing the fields (2: last_hand has doubled).
SNAPSHOT_FORMAT = "2-" + hashlib.sha256(",".join(State().__dict__).encode()).hexdigest()[:12]

# The rows of a batch, as ``e (n, type, schema_version, data, recorded_at)``: one event
# (most appends) as plain parameters, more as parallel arrays -- their data as one JSON
# array, taken apart by the server: a jsonb[] parameter is sent as text with every
# element's quotes escaped again, which costs the client as much as the rest of a long
# import's write.
ONE_EVENT = """(VALUES (1, %(type)s::text, %(schema_version)s::int, %(data)s::jsonb, %(recorded_at)s::timestamptz))
    AS e (n, type, schema_version, data, recorded_at)"""
MANY_EVENTS = """unnest(%(type)s::text[], %(schema_version)s::int[],
        ARRAY(SELECT d.value FROM jsonb_array_elements(%(data)s::jsonb) WITH ORDINALITY AS d (value, i) ORDER BY d.i),
        %(recorded_at)s::timestamptz[])
    WITH ORDINALITY AS e (type, schema_version, data, recorded_at, n)"""

INSERT_EVENTS = """
    INSERT INTO events (match_id, seq, type, schema_version, data, actor, recorded_at)
    SELECT %(match_id)s, %(expected)s::int + e.n::int, e.type, e.schema_version, e.data, %(actor)s::text,
           COALESCE(e.recorded_at, statement_timestamp())
    FROM {rows}
    -- The key refuses a stale version; this refuses one that is ahead (it would leave
    -- a gap), and refuses to follow an event written by a younger transaction: then
    -- (tx, position), the global order, keeps each match's events in seq order.
    WHERE %(expected)s::int = 0 OR EXISTS (
        SELECT FROM events previous
        WHERE previous.match_id = %(match_id)s AND previous.seq = %(expected)s::int
          AND previous.tx <= pg_current_xact_id()
    )
    ORDER BY e.n
    RETURNING seq, position, recorded_at
"""

# Written only if the events were (the relation ``appended`` has rows).
INSERT_SNAPSHOT = """
    INSERT INTO snapshots (match_id, version, format, state)
    SELECT %(match_id)s, %(version)s::int, %(format)s::text, %(state)s::jsonb
    WHERE EXISTS (SELECT FROM appended)
    ON CONFLICT DO NOTHING
"""


# Written only if the events were; a second answer for the same key fails the whole
# statement on the key, like a second append at the same version.
INSERT_IDEMPOTENCY_RECORD = """
    INSERT INTO idempotency_keys (match_id, scope, key, fingerprint, status, first_seq, last_seq)
    SELECT %(match_id)s, %(idempotency_scope)s, %(idempotency_key)s, %(idempotency_fingerprint)s,
           %(idempotency_status)s, %(expected)s::int + 1, %(last_seq)s::int
    WHERE EXISTS (SELECT FROM appended)
"""


@functools.cache
def append_sql(many: bool, summary: str | None, snapshot: bool, remembered: bool = False) -> str:
    """One statement storing a batch (of one event or ``many``), with its summary change
    ('insert', 'update' or None), snapshot and idempotency record if it has them: most
    actions are one event that changes neither, and only insert."""
    insert = INSERT_EVENTS.format(rows=MANY_EVENTS if many else ONE_EVENT)
    if summary is None and not snapshot and not remembered:
        return insert
    parts = [f"appended AS ({insert})"]
    if summary == "insert":
        parts += [
            "created AS (SELECT recorded_at AS created_at FROM appended ORDER BY seq LIMIT 1)",
            f"summary AS ({INSERT_SUMMARY})",
        ]
    elif summary == "update":
        parts.append(f"summary AS ({UPDATE_SUMMARY})")
    if snapshot:
        parts.append(f"snapshot AS ({INSERT_SNAPSHOT})")
    if remembered:
        parts.append(f"remembered AS ({INSERT_IDEMPOTENCY_RECORD})")
    return "WITH " + ",\n".join(parts) + "\nSELECT seq, position, recorded_at FROM appended"


# The state at a version: the latest snapshot at or below it (if any), and the events
# after that up to the version as one JSON array of [seq, type, schema_version, data]
# (one value to decode, not one per event).
LOAD = """
WITH snapshot AS (
    SELECT version, state FROM snapshots
    WHERE match_id = %(match_id)s AND format = %(format)s AND version <= %(version)s
    ORDER BY version DESC LIMIT 1
)
SELECT (SELECT state FROM snapshot),
       (SELECT json_agg(json_build_array(seq, type, schema_version, data) ORDER BY seq) FROM events
        WHERE match_id = %(match_id)s AND seq > COALESCE((SELECT version FROM snapshot), 0)
          AND seq <= %(version)s)
"""
#: The version LOAD reads up to for the latest state.
LATEST = 2**31 - 1

# The events after a cached version, the same way (NULL when there are none).
CATCH_UP = """
SELECT json_agg(json_build_array(seq, type, schema_version, data) ORDER BY seq) FROM events
WHERE match_id = %(match_id)s AND seq > %(after)s
"""

READ = f"SELECT {COLUMNS} FROM events WHERE match_id = %s AND seq > %s ORDER BY seq"
READ_PAGE = f"SELECT {COLUMNS} FROM events WHERE match_id = %s AND seq > %s ORDER BY seq LIMIT %s"
READ_RANGE = f"SELECT {COLUMNS} FROM events WHERE match_id = %s AND seq > %s AND seq <= %s ORDER BY seq"

# The global order and its horizon are explained in events.py.
READ_ALL = f"""
SELECT {COLUMNS} FROM events
WHERE (tx, position) > (%(tx)s::xid8, %(position)s::bigint)
  AND tx < pg_snapshot_xmin(pg_current_snapshot())
ORDER BY tx, position
LIMIT %(limit)s
"""


class Page(NamedTuple):
    """Events in global order, and the cursor to pass as ``after`` for the next page."""

    events: list[StoredEvent]
    after: int


def _event(event: Event | Mapping[str, Any]) -> Event:
    return event if isinstance(event, Event) else Event(event["type"], event["data"])


def _brief(event: StoredEvent) -> dict:
    return {"seq": event.seq, "type": event.type, "data": event.data}


class EventStore:
    """Every method takes an optional ``conn``: a connection in a transaction from
    :meth:`transaction`, to act within it; without one, the method uses a pooled
    connection on its own (an append is then a transaction of its own)."""

    def __init__(self, pool: ConnectionPool | None, *, cache_size: int = DEFAULT_SIZE):
        # pool=None: a store that does no I/O (the OpenAPI document's app needs one).
        self.pool = pool
        self.cache = StateCache(cache_size)
        # Notifications of appends made inside transaction(), by connection, sent
        # once it commits.
        self._unannounced: dict[int, list[str]] = {}
        self._checking = threading.Lock()
        self._checker: threading.Thread | None = None

    @functools.cached_property
    def announcer(self) -> Announcer:
        """Sends the notifications of this store's appends (made at the first one)."""
        return Announcer.of(conninfo_of(self.pool))

    @contextmanager
    def transaction(self, conn: psycopg.Connection | None = None) -> Iterator[psycopg.Connection]:
        """A transaction (on ``conn``, a connection with none open, or a pooled one): the
        appends, seat tokens and idempotency records written through the connection
        yielded commit together, or not at all.  Its appends are announced
        (notifications.py) once it has committed."""
        with self._connection(conn) as conn:
            pending = self._unannounced[id(conn)] = []
            try:
                with conn.transaction():
                    yield conn
            finally:
                del self._unannounced[id(conn)]
            self.announcer.announce(pending)

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A pooled connection with no transaction open, for reads: each statement is
        its own transaction and sees what committed before it (and a request saves the
        two round trips of BEGIN and COMMIT)."""
        with self._pooled() as conn:
            yield conn

    @contextmanager
    def _connection(self, conn: psycopg.Connection | None) -> Iterator[psycopg.Connection]:
        if conn is not None:
            yield conn
        else:
            with self._pooled() as pooled:
                yield pooled

    @contextmanager
    def _pooled(self) -> Iterator[psycopg.Connection]:
        """A connection from the pool.  When the server was restarted, every idle
        connection in the pool is dead, yet the pool learns it only as each is used and
        fails.  So the first failure has the pool test all its idle connections at once,
        in the background, and replace the dead ones: one request fails (the API answers
        503), not one per pooled connection.  (Testing each connection as it is handed
        out would cost every request a round trip.)"""
        assert self.pool is not None, "a store made with pool=None (the OpenAPI document's) does no I/O"
        try:
            with self.pool.connection() as conn:
                yield conn
        except psycopg.OperationalError:
            self._check_pool()
            raise

    def _check_pool(self) -> None:
        with self._checking:
            if self._checker is not None and self._checker.is_alive():
                return
            self._checker = threading.Thread(target=self._run_check, name="pool-check", daemon=True)
            self._checker.start()

    def _run_check(self) -> None:
        with suppress(Exception):  # the server still down: the next failure checks again
            assert self.pool is not None, "only _pooled, which had a pool, starts the check"
            self.pool.check()

    # --- writing ------------------------------------------------------------------

    def append(
        self,
        match_id: UUID,
        expected_version: int,
        events: Sequence[Event | Mapping[str, Any]],
        *,
        actor: str | None = None,
        recorded_at: Sequence[datetime] | None = None,
        state: State | None = None,
        idempotency: NewIdempotencyRecord | None = None,
        stored_as: Sequence[tuple[int, Mapping[str, Any]]] | None = None,
        conn: psycopg.Connection | None = None,
    ) -> list[StoredEvent]:
        """Store ``events`` as seq ``expected_version + 1`` onwards, or raise ``ConcurrencyError``.

        ``stored_as``, one ``(schema version, data)`` per event, stores each as it was
        recorded elsewhere (an imported record's older schema versions are kept, and
        upcast on every read like any stored event); ``events`` are then the same
        events at the current versions, for the read models.

        ``recorded_at``, one time per event, gives their times: those of events
        recorded elsewhere (an imported match record), or the time an action's answer
        was made (so the answer stored with it names the same times); by default the
        database's clock stamps them.  ``state``, the state after these events when the caller has folded it
        already, saves loading the match again for a snapshot.  ``idempotency``, the
        answer to the request that caused these events, is saved with them in the same
        statement (then the append needs no transaction around it); if that request's
        key has an answer already, nothing is stored and ``ConcurrencyError`` is raised.  After a ``ConcurrencyError`` raised inside :meth:`transaction`, that
        transaction can only be rolled back (leaving the ``with`` block by the exception
        does it).
        """
        batch = [_event(e) for e in events]
        if not batch:
            raise ValueError("append needs at least one event")
        if recorded_at is not None and len(recorded_at) != len(batch):
            raise ValueError(f"{len(batch)} events but {len(recorded_at)} recorded_at times")
        versions = [current_version(e.type) for e in batch]
        if stored_as is not None and len(stored_as) != len(batch):
            raise ValueError(f"{len(batch)} events but {len(stored_as)} stored forms")
        written = [(v, e.data) for v, e in zip(versions, batch)] if stored_as is None else stored_as
        many = len(batch) > 1
        params = {
            "match_id": match_id,
            "expected": expected_version,
            "actor": actor,
            "type": [e.type for e in batch] if many else batch[0].type,
            "schema_version": [v for v, _ in written] if many else written[0][0],
            "data": Jsonb([d for _, d in written]) if many else Jsonb(written[0][1]),
            "recorded_at": (list(recorded_at) if many else recorded_at[0]) if recorded_at is not None else None,
        }
        types = {e.type for e in batch}
        summary = ("insert" if "match_started" in types else "update") if types & SUMMARY_EVENTS else None
        snapshot = "hand_dealt" in types
        if summary:
            params.update(summary_changes(batch))
        if idempotency is not None:
            params.update(
                idempotency_scope=idempotency.scope,
                idempotency_key=idempotency.key,
                idempotency_fingerprint=idempotency.fingerprint,
                idempotency_status=idempotency.status,
                last_seq=expected_version + len(batch),
            )
        with self._connection(conn) as c:
            if snapshot:
                if state is None or state.version != expected_version + len(batch):
                    state = self._state_after(c, match_id, expected_version, batch)
                params.update(version=state.version, format=SNAPSHOT_FORMAT, state=Jsonb(state.to_json()))
            try:
                rows = kept_cursor(c).execute(append_sql(many, summary, snapshot, idempotency is not None), params).fetchall()
            except psycopg.errors.UniqueViolation as exc:
                if exc.diag.table_name == "idempotency_keys":
                    assert idempotency is not None, "only an append with an idempotency record writes idempotency_keys"
                    message = f"the request with idempotency key {idempotency.key!r} in match {match_id} was answered first"
                else:
                    message = f"match {match_id} is past version {expected_version}: another append came first"
                raise ConcurrencyError(match_id, expected_version, message) from exc
            if not rows:
                raise self._refusal(c, match_id, expected_version)
            # Only a committed state may be cached, or announced: inside a transaction,
            # the append is not yet (and may never be) what other requests see.
            committed = c.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            note = payload(match_id, expected_version + len(batch))
            if committed:
                self.announcer.announce([note])
            elif id(c) in self._unannounced:
                self._unannounced[id(c)].append(note)
        rows.sort()
        stored = [
            StoredEvent(match_id, seq, e.type, version, e.data, actor, time, position)
            for e, version, (seq, position, time) in zip(batch, versions, rows, strict=True)
        ]
        if committed and state is not None and state.version == expected_version + len(batch):
            self._remember(match_id, state, expected_version, [_brief(e) for e in stored])
        return stored

    def _remember(self, match_id: UUID, state: State, before: int, new: list[dict]) -> None:
        """Cache ``state``, reached from version ``before`` by the ``new`` events."""
        known = self.cache.get(match_id)
        earlier = known.hand_events if known is not None and known.state.version == before else None
        self.cache.put(match_id, Entry(state, hand_tail(state, earlier, new)))

    def _state_after(self, conn, match_id: UUID, expected_version: int, events: list[Event]) -> State:
        """The state a snapshot of this append would hold."""
        try:
            state = self._load(conn, match_id)
        except MatchNotFound:
            state = State()
        if state.version != expected_version:
            raise ConcurrencyError(
                match_id, expected_version, f"match {match_id} is at version {state.version}, not {expected_version}"
            )
        return fold(events, state)

    @staticmethod
    def _refusal(conn, match_id: UUID, expected_version: int) -> ConcurrencyError:
        row = conn.execute("SELECT COALESCE(max(seq), 0) FROM events WHERE match_id = %s", (match_id,)).fetchone()
        version = row[0]
        if version == expected_version:
            message = (
                f"match {match_id} was appended to after this transaction began writing: retry in a new transaction"
            )
        else:
            message = f"match {match_id} is at version {version}, not {expected_version}"
        return ConcurrencyError(match_id, expected_version, message)

    # --- reading ------------------------------------------------------------------

    def load(self, match_id: UUID, *, conn: psycopg.Connection | None = None) -> State:
        """The match's state as committed now: the cached state with the events after
        it folded in, else the latest snapshot with the events after it."""
        with self._connection(conn) as c:
            return self._load(c, match_id)

    def cached(self, match_id: UUID) -> State | None:
        """The state this process last saw of the match, unchecked (it may be stale:
        see cache.py), or None."""
        entry = self.cache.get(match_id)
        return entry.state if entry is not None else None

    def hand_events(self, match_id: UUID, state: State, *, conn: psycopg.Connection | None = None) -> list[dict]:
        """``{"seq", "type", "data"}`` of the stored events of ``state``'s hand up to its
        version (from the cache when it holds them)."""
        entry = self.cache.get(match_id)
        if entry is not None and entry.state.version == state.version and entry.hand_events is not None:
            return list(entry.hand_events)
        with self._connection(conn) as c:
            events = [
                _brief(e)
                for e in stored_events(c, c.execute(READ_RANGE, (match_id, state.hand_start_version, state.version)))
            ]
        if entry is not None and entry.state.version == state.version and keeps_hand_events(state):
            self.cache.put(match_id, Entry(entry.state, tuple(events)))
        return events

    def _load(self, conn, match_id: UUID) -> State:
        entry = self.cache.get(match_id)
        if entry is not None:
            (rows,) = kept_cursor(conn).execute(CATCH_UP, {"match_id": match_id, "after": entry.state.version}).fetchone()
            if rows is None:
                return entry.state
            new = self._decoded(conn, match_id, rows)
            state = fold(new, entry.state)
            self.cache.put(match_id, Entry(state, hand_tail(state, entry.hand_events, new)))
            return state
        state, new = self._load_at(conn, match_id, LATEST)
        self.cache.put(match_id, Entry(state, hand_tail(state, None, new)))
        return state

    def _load_at(self, conn, match_id: UUID, version: int) -> tuple[State, list[dict]]:
        """The state at ``version`` (at most; the latest for LATEST), and the events
        folded onto its snapshot."""
        params = {"match_id": match_id, "format": SNAPSHOT_FORMAT, "version": version}
        snapshot, rows = kept_cursor(conn).execute(LOAD, params).fetchone()
        if snapshot is None and rows is None:
            raise MatchNotFound(match_id)
        new = self._decoded(conn, match_id, rows or ())
        return fold(new, State.from_json(snapshot) if snapshot is not None else None), new

    def state_at(self, match_id: UUID, version: int, *, conn: psycopg.Connection | None = None) -> State:
        """The match's state at ``version`` (or at its last version, if that is lower)."""
        with self._connection(conn) as c:
            return self._load_at(c, match_id, version)[0]

    @staticmethod
    def _decoded(conn, match_id: UUID, rows) -> list[dict]:
        return [
            {"seq": seq, "type": etype, "data": current_data(conn, match_id, seq, etype, version, data)}
            for seq, etype, version, data in rows
        ]

    def read(
        self, match_id: UUID, after: int = 0, limit: int | None = None, *, raw: bool = False,
        conn: psycopg.Connection | None = None,
    ) -> list[StoredEvent]:
        """The match's events with seq above ``after``, in order (empty if there are
        none); at most ``limit`` of them when given.  ``raw``: at the schema versions
        they were stored at (a record's export), not upcast."""
        with self._connection(conn) as c:
            if limit is None:
                return list(stored_events(c, c.execute(READ, (match_id, after)), raw=raw))
            return list(stored_events(c, c.execute(READ_PAGE, (match_id, after, limit)), raw=raw))

    def read_all(self, after: int = 0, limit: int = 1000, *, conn: psycopg.Connection | None = None) -> Page:
        """Up to ``limit`` events of all matches that follow ``after`` in the global order.

        ``after`` is 0 (the beginning) or a cursor returned by an earlier call.  Calling
        again with each returned cursor yields every committed event exactly once.
        """
        with self._connection(conn) as c:
            tx = "0"
            if after:
                row = c.execute("SELECT tx::text FROM events WHERE position = %s", (after,)).fetchone()
                if row is None:
                    raise ValueError(f"no event has position {after}")
                (tx,) = row
            rows = c.execute(READ_ALL, {"tx": tx, "position": after, "limit": limit})
            events = list(stored_events(c, rows))
        return Page(events, events[-1].position if events else after)

    def summary(self, match_id: UUID, *, conn: psycopg.Connection | None = None) -> MatchSummary:
        with self._connection(conn) as c:
            found = _summaries.summary(c, match_id)
        if found is None:
            raise MatchNotFound(match_id)
        return found

    def summaries(
        self,
        *,
        status: str | None = None,
        limit: int = 50,
        offset: int = 0,
        newest_first: bool = True,
        conn: psycopg.Connection | None = None,
    ) -> list[MatchSummary]:
        """Match summaries by creation time, optionally only 'active' or 'finished' ones."""
        with self._connection(conn) as c:
            return _summaries.summaries(c, status=status, limit=limit, offset=offset, newest_first=newest_first)

    def rebuild_projections(self) -> int:
        """Recreate the read models kept with the events (the match summaries and which
        player holds which seat) from the events alone; returns the number of summaries.
        The ratings, folded from these, are rebuilt by ``service.ratings.rebuild``."""
        with self.transaction() as conn:
            count = _summaries.rebuild(conn)
            _players.rebuild_bindings(conn)
            return count

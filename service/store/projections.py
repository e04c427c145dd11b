"""Read models folded from the events in the global order, each with a cursor.

A projection (the ratings: service/ratings.py; the notifications: service/feed.py) reads
the events it folds in the global order (``tx``, ``position``; service/store/events.py)
from where its last call stopped (its row of ``projection_cursors``), in one transaction
holding its advisory lock, so that one process at a time folds them and each event
counts once.  ``catch_up`` runs that loop for a projection; ``folded`` says whether an
event has been read; ``Folder`` folds soon after an append, retrying in the background
while the global order's horizon still hides the new events.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from psycopg_pool import PoolClosed

from .event_store import EventStore

log = logging.getLogger(__name__)

BATCH = 1000


@dataclass(frozen=True)
class Projection:
    """``cursor``: its row in ``projection_cursors``; ``lock_key``: its advisory lock;
    ``query``: its events after ``%(tx)s``/``%(position)s``, at most ``%(limit)s``, in the
    global order and below the horizon, each row ending with the event's position;
    ``apply(conn, rows)``: folds a batch of them, returning how many counted."""

    name: str
    cursor: str
    lock_key: int
    query: str
    apply: Callable[..., int]


def catch_up(store: EventStore, projection: Projection, batch: int = BATCH, *, wait: bool = False) -> int:
    """Fold the events not yet folded; what ``apply`` counted (0 also when another
    process holds the projection at the moment, unless ``wait``: then after it, so
    that a reader sees every event below the horizon folded)."""
    counted = 0
    take = "SELECT true FROM (SELECT pg_advisory_xact_lock(%s)) AS waited" if wait else "SELECT pg_try_advisory_xact_lock(%s)"
    while True:
        with store.transaction() as conn:
            locked = conn.execute(take, (projection.lock_key,)).fetchone()
            assert locked is not None, "a SELECT of one value and no FROM returns one row"
            if not locked[0]:
                return counted
            row = conn.execute("SELECT position FROM projection_cursors WHERE name = %s", (projection.cursor,)).fetchone()
            position = row[0] if row else 0
            tx = "0"
            if position:
                last = conn.execute("SELECT tx::text FROM events WHERE position = %s", (position,)).fetchone()
                assert last is not None, "the cursor is the position of an event, and events are never deleted"
                tx = last[0]
            rows = conn.execute(projection.query, {"tx": tx, "position": position, "limit": batch}).fetchall()
            if rows:
                counted += projection.apply(conn, rows)
                conn.execute(
                    "INSERT INTO projection_cursors (name, position) VALUES (%s, %s)"
                    " ON CONFLICT (name) DO UPDATE SET position = excluded.position",
                    (projection.cursor, rows[-1][-1]),
                )
        if len(rows) < batch:
            return counted


def catch_up_quietly(store: EventStore, projection: Projection, *, wait: bool = False) -> None:
    """catch_up, for after an action: a failure is logged (the next call catches up)."""
    try:
        catch_up(store, projection, wait=wait)
    except PoolClosed:
        pass  # the process is shutting down; the next one catches up
    except Exception as exc:  # the match's events are stored whatever happens here
        log.warning("could not update the %s: %s", projection.name, type(exc).__name__)


FOLDED = """
SELECT EXISTS (
    SELECT FROM projection_cursors c JOIN events last ON last.position = c.position, events e
    WHERE c.name = %(cursor)s AND e.position = %(position)s AND (e.tx, e.position) <= (last.tx, last.position)
)
"""


def folded(store: EventStore, cursor: str, position: int) -> bool:
    """Whether the event at ``position`` has been read by the projection of ``cursor``."""
    with store.connection() as conn:
        row = conn.execute(FOLDED, {"cursor": cursor, "position": position}).fetchone()
        assert row is not None, "SELECT EXISTS (...) returns one row"
        return row[0]


FOLDED_AMONG = """
SELECT e.position FROM projection_cursors c JOIN events last ON last.position = c.position, events e
WHERE c.name = %(cursor)s AND e.position = ANY(%(positions)s) AND (e.tx, e.position) <= (last.tx, last.position)
"""


def folded_among(store: EventStore, cursor: str, positions: list[int]) -> set[int]:
    """Which of ``positions`` the projection of ``cursor`` has read (one query)."""
    if not positions:
        return set()
    with store.connection() as conn:
        return {row[0] for row in conn.execute(FOLDED_AMONG, {"cursor": cursor, "positions": positions}).fetchall()}


def restart(conn, projection: Projection, *tables: str) -> None:
    """In ``conn``'s transaction: wait for the projection's lock, empty ``tables``
    (statements: ``DELETE FROM ...`` with any condition) and forget its cursor."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (projection.lock_key,))
    for table in tables:
        conn.execute(f"DELETE FROM {table}")
    conn.execute("DELETE FROM projection_cursors WHERE name = %s", (projection.cursor,))


class Folder:
    """Folds new events into a projection soon after they are stored.

    The projection reads only below the oldest transaction still open on the server
    (the global order's horizon, service/store/events.py), so right after an append its
    events may not be readable yet: a request still in flight elsewhere holds the
    horizon back for a moment.  The first attempt is made at once, in the request
    (``background`` false: the ratings) or by this process's folder thread as soon as
    it is free (``background`` true: the notifications, which every action feeds, so
    that an action never waits for them and one catch-up folds every action made while
    the last one ran).  An event not folded by it is tried again every 0.1 s for up to
    a minute (readers of the projection catch up too, so nothing is lost after that)."""

    RETRY_SECONDS = 0.1
    GIVE_UP_SECONDS = 60.0

    def __init__(self, store: EventStore, projection: Projection, *, background: bool = False):
        self.store = store
        self.projection = projection
        self.background = background
        self._pending: dict[int, float] = {}  # position -> when it was asked for
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def _catch_up(self) -> None:
        """One catch-up (a projection's own Folder may do more after it)."""
        catch_up_quietly(self.store, self.projection)

    def fold(self, position: int) -> None:
        if not self.background:
            self._catch_up()
            try:
                if folded(self.store, self.projection.cursor, position):
                    return
            except Exception as exc:
                log.warning("could not check the %s: %s", self.projection.name, type(exc).__name__)
        with self._lock:
            self._pending[position] = time.monotonic()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"{self.projection.cursor}-folder", daemon=True)
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        first = self.background  # a new request's events: at once, not after a pause
        while True:
            self._wake.wait()
            if not first:
                time.sleep(self.RETRY_SECONDS)
            self._wake.clear()
            self._catch_up()
            with self._lock:
                waiting = dict(self._pending)
            try:
                done = folded_among(self.store, self.projection.cursor, list(waiting))
            except Exception:
                done = set()
            now = time.monotonic()
            with self._lock:
                for position, since in waiting.items():
                    if position in done or now - since > self.GIVE_UP_SECONDS:
                        self._pending.pop(position, None)
                behind = bool(set(self._pending) & set(waiting))  # held back by the horizon: retry after a pause
                first = self.background and not behind
                if self._pending:
                    self._wake.set()

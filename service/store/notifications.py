"""New events announced with PostgreSQL NOTIFY, and one listener per process.

Every append that commits is followed by ``NOTIFY gin_rummy_events, '<match id> <seq>'``
(the match and its new last seq).  Not by a trigger or inside the append's
transaction, on purpose: PostgreSQL serialises the commits of transactions that
notify, disk flush included, so announcing inside the append would limit a server to
one action per disk flush (measured: a quarter fewer actions per second at 16
clients).  The ``Announcer`` sends them after the commit, from a thread (a greenlet
under gevent) and a connection of its own, as few statements as it can (all the
notifications waiting when it wakes, in one): the request that appended only queues
a line, and a notifying commit with nothing to flush holds PostgreSQL's lock for a
moment.  What it costs: a process killed between an append and its notification
announces nothing; streams of that match notice the events when they next read the
database (at the latest when they reconnect).

``Listener`` holds the one ``LISTEN`` connection of a process and calls back with each
(match id, seq) announced, from its own thread.  It reconnects by itself after an
outage and then calls ``on_reconnect``: notifications sent meanwhile are lost, so
whoever waits on them must look at the database again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from uuid import UUID

import psycopg

log = logging.getLogger(__name__)

CHANNEL = "gin_rummy_events"
# One statement for a batch of notifications (one transaction, one commit).
NOTIFY = "SELECT pg_notify('gin_rummy_events', note) FROM unnest(%s::text[]) AS note"
#: Most notifications one statement sends.
BATCH = 500
#: How long the announcer lets notifications gather before sending them.
GATHER_SECONDS = 0.002


def payload(match_id: UUID, seq: int) -> str:
    return f"{match_id} {seq}"


def parse(text: str) -> tuple[UUID, int] | None:
    """(match id, seq) of a payload, or None when it is not one of ours."""
    match_id, _, seq = text.partition(" ")
    try:
        return UUID(match_id), int(seq)
    except ValueError:
        return None


class Announcer:
    """Sends queued notifications in the background, on a connection of its own.
    ``Announcer.of(conninfo)``: the one of this process for that database."""

    _instances: dict[str, Announcer] = {}
    _instances_lock = threading.Lock()

    @classmethod
    def of(cls, conninfo: str) -> Announcer:
        with cls._instances_lock:
            found = cls._instances.get(conninfo)
            if found is None:
                found = cls._instances[conninfo] = cls(conninfo)
            return found

    def __init__(self, conninfo: str, *, retry_seconds: float = 1.0, limit: int = 100_000):
        self.conninfo = conninfo
        self.retry_seconds = retry_seconds
        self.limit = limit
        self._queue: list[str] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._thread: threading.Thread | None = None

    def announce(self, notes: list[str]) -> None:
        """Queue notifications of committed appends (never blocks)."""
        if not notes:
            return
        with self._lock:
            if len(self._queue) < self.limit:  # a database long down: drop, don't grow
                self._queue.extend(notes)
            self._idle.clear()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="gin-rummy-announcer", daemon=True)
                self._thread.start()
        self._wake.set()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until everything queued has been sent (or given up); True if it was."""
        return self._idle.wait(timeout)

    def _take(self) -> list[str]:
        with self._lock:
            batch, self._queue = self._queue[:BATCH], self._queue[BATCH:]
            if not batch:
                self._idle.set()
            return batch

    def _run(self) -> None:
        conn = None
        while True:
            self._wake.wait()
            # A moment for more to queue up: one statement then announces them all
            # (a few milliseconds of delivery latency, for a statement per batch
            # instead of one per action when requests come in fast).
            time.sleep(GATHER_SECONDS)
            self._wake.clear()
            while batch := self._take():
                try:
                    if conn is None or conn.closed:
                        conn = psycopg.connect(self.conninfo, autocommit=True, connect_timeout=5)
                    conn.execute(NOTIFY, (batch,))
                except psycopg.Error as exc:
                    # Listeners recover by reading the database after an outage.
                    log.warning("could not announce %d new event(s): %s", len(batch), type(exc).__name__)
                    if conn is not None:
                        conn.close()
                    conn = None
                    time.sleep(self.retry_seconds)


class Listener:
    """``LISTEN gin_rummy_events`` on a connection of its own, in a daemon thread."""

    def __init__(
        self,
        conninfo: str,
        on_event: Callable[[UUID, int], None],
        on_reconnect: Callable[[], None],
        *,
        retry_seconds: float = 1.0,
    ):
        self.conninfo = conninfo
        self.on_event = on_event
        self.on_reconnect = on_reconnect
        self.retry_seconds = retry_seconds
        self.connected = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="gin-rummy-listener", daemon=True)

    def start(self) -> Listener:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.conninfo, autocommit=True, connect_timeout=5) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.connected.set()
                    self.on_reconnect()
                    while not self._stop.is_set():
                        # A timeout, so that stop() is noticed and a dead server is found.
                        for note in conn.notifies(timeout=5.0):
                            parsed = parse(note.payload)
                            if parsed is not None:
                                self.on_event(*parsed)
                        conn.execute("SELECT 1")
            except psycopg.Error as exc:
                if self.connected.is_set() and not self._stop.is_set():
                    log.warning("lost the LISTEN connection (%s); reconnecting", type(exc).__name__)
                self.connected.clear()
            except Exception:  # a callback failed: keep listening, say so
                log.exception("a listener callback failed")
                self.connected.clear()
            if not self._stop.is_set():
                time.sleep(self.retry_seconds)

"""Reads from a standby that is never behind what a caller was answered.

A replicated PostgreSQL (``GIN_RUMMY_REPLICA_DATABASE_URL``) can take the heavy reads
off the primary, but a standby replays the primary's WAL a little later, so a caller who
was just answered 200 for a move could read the match from before it.  So before each
replica read :meth:`Replica.connection` asks the primary for its current WAL position
(``pg_current_wal_lsn()``: past the commit record of every transaction acknowledged so
far) and waits, at most ``wait_seconds``, until the standby has replayed that far
(``pg_last_wal_replay_lsn()``).  A standby that is still behind then, or cannot be
reached, is not used: the connection yielded is None and the caller reads the primary.

Why the primary's position rather than the position of the caller's own last write
(carried in a header or token): it needs nothing from the client, and it also covers
what other callers were answered (a move the opponent made, then told the caller of).
It costs one short query on the primary per replica read.

A server that is not in recovery (``prefer-standby`` found no standby and fell back to
the primary) is caught up by definition.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from .event_store import EventStore

T = TypeVar("T")

#: The primary's position: every acknowledged commit lies before it.
PRIMARY_POSITION = "SELECT pg_current_wal_lsn()::text"
#: Whether the server has replayed up to a position (or is no standby at all).
CAUGHT_UP = "SELECT NOT pg_is_in_recovery() OR coalesce(pg_last_wal_replay_lsn() >= %s::pg_lsn, false)"

#: The errors after which a read is made again on the primary: the standby is out of
#: reach (OperationalError, PoolTimeout), or cancelled the read because replaying the
#: primary's changes conflicted with it (SQLSTATE 40001, or 40P01 for a lock).
FAILURES = (psycopg.OperationalError, psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected, PoolTimeout)

#: Seconds the standby is left alone after it failed a read (out of reach, every read
#: would first wait for a connection to it).
AFTER_FAILURE = 1.0


#: How a replica read went, as reported: ``replica`` (read on the standby), ``behind``
#: (the standby had not caught up within the wait: read on the primary), ``failed``
#: (the standby failed the read, out of reach or in a conflict: read again on the
#: primary), ``skipped`` (read on the primary: the standby failed one within
#: AFTER_FAILURE seconds).
OUTCOMES = ("replica", "behind", "failed", "skipped")


def _unreported(outcome: str, waited: float) -> None:
    pass


class Replica:
    """A pool on a standby (``pool``), used only once it has caught up with the primary
    of ``store``; else, and when it fails a read, ``store`` reads."""

    def __init__(
        self, pool: ConnectionPool, store: EventStore, *, wait_seconds: float = 1.0,
        report: Callable[[str, float], None] = _unreported,
    ):
        self.pool = pool
        self.store = store
        self.wait_seconds = wait_seconds
        #: Called once per read with its outcome (OUTCOMES) and the seconds it waited for the standby.
        self.report = report
        self._failed_until = 0.0

    def run(self, read: Callable[[psycopg.Connection], T]) -> T:
        """``read(conn)`` on the standby once it has replayed everything the primary
        had committed when called; on the primary when it is still behind after
        ``wait_seconds``, or when it failed the read (then ``read`` runs twice: it
        only reads)."""
        target = self.position()  # on the primary: it failing is the request failing
        if time.monotonic() >= self._failed_until:
            try:
                with self._caught_up(target) as conn:
                    if conn is not None:
                        return read(conn)
            except FAILURES:
                self.report("failed", 0.0)
                self._failed_until = time.monotonic() + AFTER_FAILURE
        else:
            self.report("skipped", 0.0)
        with self.store.connection() as conn:
            return read(conn)

    def position(self) -> str:
        """The primary's current WAL position."""
        with self.store.connection() as conn:
            row = conn.execute(PRIMARY_POSITION).fetchone()
        assert row is not None, "SELECT returns a row"
        return row[0]

    @contextmanager
    def _caught_up(self, target: str) -> Iterator[psycopg.Connection | None]:
        started = time.monotonic()
        with self.pool.connection(timeout=max(self.wait_seconds, 0.1)) as conn:
            caught_up = self._wait(conn, target, started + self.wait_seconds)
            self.report("replica" if caught_up else "behind", time.monotonic() - started)
            yield conn if caught_up else None

    @staticmethod
    def _wait(conn: psycopg.Connection, target: str, deadline: float) -> bool:
        pause = 0.0005
        while True:
            row = conn.execute(CAUGHT_UP, (target,)).fetchone()
            if row is not None and row[0]:
                return True
            now = time.monotonic()
            if now >= deadline:
                return False
            time.sleep(min(pause, deadline - now))  # the last look is at the deadline itself
            pause = min(pause * 2, 0.01)

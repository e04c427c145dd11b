"""Idempotency records: the answer given to a request sent with an Idempotency-Key.

Saved by the same statement as the events the request caused
(``EventStore.append(..., idempotency=NewIdempotencyRecord(...))``), so a retry either
finds the record or finds nothing was done.  The record names those events (their
first and last seq), not the answer: the answer was the caller's view at the last of
them and the events themselves, which the API rebuilds exactly.  Of two identical requests racing, one
appends and the other fails with ``ConcurrencyError`` (on the version or on the key),
and then finds the record.  Records are kept at least ``IDEMPOTENCY_RETENTION`` (24 hours),
then purged (``gin-rummy db purge-idempotency``, and hourly by the service itself).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple
from uuid import UUID

from psycopg.types.json import Jsonb

from . import limits
from .periodic import run_periodically

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    """A stored answer: the events it caused (seq ``first_seq`` to ``last_seq``), from
    which it is rebuilt, or (records from before those were kept) its ``body``."""

    fingerprint: str
    status: int
    body: Any
    created_at: datetime
    first_seq: int | None = None
    last_seq: int | None = None
    #: A join's or a rematch's seat token, sealed (``service.application.retries``).
    sealed_token: bytes | None = None


class NewIdempotencyRecord(NamedTuple):
    """The request with an Idempotency-Key to remember, saved by ``EventStore.append(...,
    idempotency=...)`` in the same statement as its events, with their seqs: the answer
    to a retry is rebuilt from those events, so it need not be stored."""

    scope: str
    key: str
    fingerprint: str
    status: int = 200


def find_idempotency_record(conn, match_id: UUID, scope: str, key: str) -> IdempotencyRecord | None:
    row = conn.execute(
        "SELECT fingerprint, status, body, created_at, first_seq, last_seq, sealed_token FROM idempotency_keys"
        " WHERE match_id = %s AND scope = %s AND key = %s",
        (match_id, scope, key),
    ).fetchone()
    return IdempotencyRecord(*row) if row else None


def save_idempotency_record(
    conn, match_id: UUID, record: NewIdempotencyRecord, *, first_seq: int | None = None, last_seq: int | None = None,
    body: Any = None, sealed_token: bytes | None = None,
) -> None:
    """Save a record by itself (a join's or a rematch's, in its transaction): the events
    it caused, or its ``body``; and the seat token it gave, sealed."""
    conn.execute(
        "INSERT INTO idempotency_keys (match_id, scope, key, fingerprint, status, body, first_seq, last_seq, sealed_token)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (match_id, record.scope, record.key, record.fingerprint, record.status, Jsonb(body) if body is not None else None,
         first_seq, last_seq, sealed_token),
    )


def service_secret(conn, name: str, make: Callable[[], bytes]) -> bytes:
    """The service's own secret ``name``: made (``make``) by the first process to ask,
    the same for every process after."""
    conn.execute("INSERT INTO service_secrets (name, secret) VALUES (%s, %s) ON CONFLICT DO NOTHING", (name, make()))
    row = conn.execute("SELECT secret FROM service_secrets WHERE name = %s", (name,)).fetchone()
    assert row is not None, "inserted unless there was one: rows of service_secrets are never deleted"
    return bytes(row[0])


# How long an answer is kept at least: a client retrying later than this with the same
# key acts anew.  Records older than this are deleted by ``purge_idempotency_records``.
IDEMPOTENCY_RETENTION = timedelta(hours=24)

PURGE = """
DELETE FROM idempotency_keys
WHERE ctid IN (
    SELECT ctid FROM idempotency_keys
    WHERE created_at < statement_timestamp() - %(older_than)s::interval
    LIMIT %(batch)s
)
"""


def purge_idempotency_records(pool, older_than: timedelta = IDEMPOTENCY_RETENTION, batch: int = 5000) -> int:
    """Delete the records older than ``older_than``, ``batch`` rows a transaction (short
    transactions: appends saving new records never wait long); returns how many."""
    deleted = 0
    while True:
        with pool.connection() as conn:
            count = conn.execute(PURGE, {"older_than": older_than, "batch": batch}).rowcount
        deleted += count
        if count < batch:
            return deleted


def purge_periodically(pool, every: float = 3600.0, older_than: timedelta = IDEMPOTENCY_RETENTION) -> threading.Event:
    """Purge (the answers to old keys, and the limits' idle buckets) in a daemon thread
    every ``every`` seconds (``periodic.run_periodically``); set the returned event to stop."""

    def purge() -> None:
        deleted = purge_idempotency_records(pool, older_than)
        with pool.connection() as conn:
            forgotten = limits.purge(conn)  # the limits' buckets untouched for a day
        log.info("idempotency purge deleted %d records and %d idle limit buckets", deleted, forgotten)

    return run_periodically("idempotency purge", every, purge)

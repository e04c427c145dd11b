"""Webhooks' rows: the operator's endpoints and the outbox of deliveries to them.

The outbox (``webhook_deliveries``) is written by ``enqueue`` in the transaction that
stores the notifications (service/feed.py folds them from the global order of the
events, under its advisory lock): a notification stored is a delivery owed to every
endpoint that takes its kind, once, since the row's key is (endpoint, notification) and
the notification's id is the same however often it is folded.  An endpoint owes only
the notifications made after it was added (``created_at``), so a rebuild of the feeds
never sends the history again.

A process delivers what is due by ``claim`` (``FOR UPDATE SKIP LOCKED``: two processes
never take one row at once) and ``finish``.  A claim counts the attempt and moves its
next attempt past a lease at once, in its own short transaction: a process killed while
it sends leaves the row to be claimed again once the lease is over (at least once, never
lost), and no transaction is held open while a receiver answers.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from psycopg.types.json import Jsonb

#: pg advisory lock key of the endpoints named by the settings ("gin-hook" in ASCII).
SETTINGS_LOCK_KEY = 0x67696E2D686F6F6B
#: The id of an endpoint named by the settings, from its URL (the same in every process).
SETTINGS_NAMESPACE = uuid.UUID("6f1b0a52-2c55-4d36-9a0e-0c7f1b9e5d21")


@dataclass(frozen=True)
class Endpoint:
    id: uuid.UUID
    url: str
    secret: str
    kinds: tuple[str, ...]
    origin: str
    description: str
    created_at: datetime


@dataclass(frozen=True)
class Due:
    """A delivery claimed: what to send, where, and which attempt this is."""

    endpoint_id: uuid.UUID
    notification_id: int
    kind: str
    payload: dict
    created_at: datetime
    attempt: int
    url: str
    secret: str


@dataclass(frozen=True)
class Delivery:
    """A row of the delivery log."""

    endpoint_id: uuid.UUID
    notification_id: int
    kind: str
    payload: dict
    created_at: datetime
    state: str
    attempts: int
    next_attempt_at: datetime | None
    last_attempt_at: datetime | None
    last_status: int | None
    last_error: str | None
    finished_at: datetime | None


ENDPOINT = "id, url, secret, kinds, origin, description, created_at"


def _endpoint(row) -> Endpoint:
    return Endpoint(row[0], row[1], row[2], tuple(row[3]), row[4], row[5], row[6])


def endpoints(conn) -> list[Endpoint]:
    return [_endpoint(row) for row in conn.execute(f"SELECT {ENDPOINT} FROM webhook_endpoints ORDER BY created_at, id")]


def endpoint(conn, endpoint_id: uuid.UUID) -> Endpoint | None:
    row = conn.execute(f"SELECT {ENDPOINT} FROM webhook_endpoints WHERE id = %s", (endpoint_id,)).fetchone()
    return _endpoint(row) if row else None


def add(conn, url: str, secret: str, kinds: Sequence[str], description: str = "") -> Endpoint:
    row = conn.execute(
        f"INSERT INTO webhook_endpoints (id, url, secret, kinds, origin, description) VALUES (%s, %s, %s, %s, 'operator', %s)"
        f" RETURNING {ENDPOINT}",
        (uuid.uuid4(), url, secret, list(kinds), description),
    ).fetchone()
    return _endpoint(row)


def remove(conn, endpoint_id: uuid.UUID) -> bool:
    """Delete an endpoint and its deliveries (the log with it)."""
    return conn.execute("DELETE FROM webhook_endpoints WHERE id = %s", (endpoint_id,)).rowcount == 1


def settings_id(url: str) -> uuid.UUID:
    return uuid.uuid5(SETTINGS_NAMESPACE, url)


def sync(conn, configured: Iterable[tuple[str, str, Sequence[str]]]) -> None:
    """Make the endpoints the settings made exactly ``configured`` (url, secret, kinds):
    one per URL, keeping its id and the time it was first added."""
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (SETTINGS_LOCK_KEY,))
    ids = []
    for url, secret, kinds in configured:
        ids.append(settings_id(url))
        conn.execute(
            "INSERT INTO webhook_endpoints (id, url, secret, kinds, origin, description)"
            " VALUES (%s, %s, %s, %s, 'settings', 'GIN_RUMMY_WEBHOOKS')"
            " ON CONFLICT (id) DO UPDATE SET secret = excluded.secret, kinds = excluded.kinds",
            (ids[-1], url, secret, list(kinds)),
        )
    conn.execute("DELETE FROM webhook_endpoints WHERE origin = 'settings' AND NOT (id = ANY(%s))", (ids,))


@dataclass(frozen=True)
class Owed:
    """A notification just stored, as ``enqueue`` takes it."""

    notification_id: int
    kind: str
    payload: dict
    created_at: datetime


INSERT = (
    "INSERT INTO webhook_deliveries (endpoint_id, notification_id, kind, payload, created_at)"
    " SELECT * FROM unnest(%s::uuid[], %s::bigint[], %s::text[], %s::jsonb[], %s::timestamptz[])"
    " ON CONFLICT (endpoint_id, notification_id) DO NOTHING"
)


def enqueue(conn, owed: Sequence[Owed]) -> int:
    """In the notifications' transaction: a delivery of each to every endpoint that
    takes its kind and was added before it was made.  The rows written."""
    if not owed:
        return 0
    targets = conn.execute("SELECT id, kinds, created_at FROM webhook_endpoints").fetchall()
    rows = [
        (endpoint_id, each.notification_id, each.kind, Jsonb(each.payload), each.created_at)
        for each in owed
        for endpoint_id, kinds, since in targets
        if each.kind in kinds and since <= each.created_at
    ]
    if rows:
        conn.execute(INSERT, [list(column) for column in zip(*rows)])  # one statement, one round trip
    return len(rows)


CLAIM = """
WITH due AS (
    SELECT endpoint_id, notification_id FROM webhook_deliveries
    WHERE state = 'pending' AND next_attempt_at <= now()
      AND (%(endpoint)s::uuid IS NULL OR endpoint_id = %(endpoint)s)
    ORDER BY next_attempt_at
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE webhook_deliveries d
SET attempts = d.attempts + 1, last_attempt_at = now(), next_attempt_at = now() + %(lease)s
FROM due, webhook_endpoints e
WHERE d.endpoint_id = due.endpoint_id AND d.notification_id = due.notification_id AND e.id = d.endpoint_id
RETURNING d.endpoint_id, d.notification_id, d.kind, d.payload, d.created_at, d.attempts, e.url, e.secret
"""


def claim(conn, limit: int, lease: timedelta, endpoint_id: uuid.UUID | None = None) -> list[Due]:
    """Up to ``limit`` deliveries due (to ``endpoint_id``, or to any endpoint), each an
    attempt counted and kept from every other process for ``lease`` (commit at once:
    nothing is held while they are sent)."""
    params = {"limit": limit, "lease": lease, "endpoint": endpoint_id}
    return [Due(*row) for row in conn.execute(CLAIM, params).fetchall()]


def endpoint_ids(conn) -> list[uuid.UUID]:
    return [row[0] for row in conn.execute("SELECT id FROM webhook_endpoints ORDER BY id")]


FINISH = """
UPDATE webhook_deliveries
SET state = %(state)s, last_status = %(status)s, last_error = %(error)s,
    next_attempt_at = coalesce(%(next)s, next_attempt_at),
    finished_at = CASE WHEN %(state)s = 'pending' THEN NULL ELSE now() END
WHERE endpoint_id = %(endpoint)s AND notification_id = %(notification)s
  AND state = 'pending' AND (attempts = %(attempt)s OR %(state)s = 'delivered')
"""


def finish(conn, due: Due, state: str, status: int | None, error: str | None, next_attempt: datetime | None) -> bool:
    """Record an attempt's outcome: ``delivered``, ``failed``, or ``pending`` again at
    ``next_attempt``.  A later attempt (this one's lease ran out) is not overwritten,
    unless this one delivered.  Whether the row changed."""
    params = {
        "state": state, "status": status, "error": error, "next": next_attempt,
        "endpoint": due.endpoint_id, "notification": due.notification_id, "attempt": due.attempt,
    }
    return conn.execute(FINISH, params).rowcount == 1


def redeliver(conn, endpoint_id: uuid.UUID, notification_id: int) -> bool:
    """A failed (or delivered) delivery made pending again, due now."""
    return conn.execute(
        "UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = now(), finished_at = NULL"
        " WHERE endpoint_id = %s AND notification_id = %s",
        (endpoint_id, notification_id),
    ).rowcount == 1


DELIVERY = (
    "endpoint_id, notification_id, kind, payload, created_at, state, attempts,"
    " CASE WHEN state = 'pending' THEN next_attempt_at END, last_attempt_at, last_status, last_error, finished_at"
)


def log(conn, endpoint_id: uuid.UUID, state: str | None, before: int | None, limit: int) -> list[Delivery]:
    """The endpoint's deliveries, newest notification first, below ``before``."""
    rows = conn.execute(
        f"SELECT {DELIVERY} FROM webhook_deliveries WHERE endpoint_id = %(endpoint)s"
        " AND (%(state)s::text IS NULL OR state = %(state)s) AND (%(before)s::bigint IS NULL OR notification_id < %(before)s)"
        " ORDER BY notification_id DESC LIMIT %(limit)s",
        {"endpoint": endpoint_id, "state": state, "before": before, "limit": limit},
    ).fetchall()
    return [Delivery(*row) for row in rows]


def delivery(conn, endpoint_id: uuid.UUID, notification_id: int) -> Delivery | None:
    row = conn.execute(
        f"SELECT {DELIVERY} FROM webhook_deliveries WHERE endpoint_id = %s AND notification_id = %s",
        (endpoint_id, notification_id),
    ).fetchone()
    return Delivery(*row) if row else None


def counts(conn, endpoint_id: uuid.UUID) -> dict[str, Any]:
    """The endpoint's deliveries by state, and the oldest still pending."""
    rows = conn.execute(
        "SELECT state, count(*), min(created_at) FROM webhook_deliveries WHERE endpoint_id = %s GROUP BY state", (endpoint_id,)
    ).fetchall()
    by_state = {state: (count, oldest) for state, count, oldest in rows}
    pending = by_state.get("pending", (0, None))
    return {
        "pending": pending[0], "delivered": by_state.get("delivered", (0,))[0], "failed": by_state.get("failed", (0,))[0],
        "oldest_pending": pending[1],
    }


def purge(conn, older_than: timedelta) -> int:
    """Forget deliveries finished longer ago than ``older_than``."""
    return conn.execute(
        "DELETE FROM webhook_deliveries WHERE state <> 'pending' AND finished_at < now() - %s", (older_than,)
    ).rowcount


def body(payload: dict) -> str:
    """The JSON text sent (and signed)."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)

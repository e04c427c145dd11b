"""Idempotency records: the answer given to a request sent with an Idempotency-Key.

Saved in the same transaction as the append the request caused, so a retry either finds
the answer or finds nothing was done.  Of two identical requests racing, one appends and
the other fails with ``ConcurrencyError`` (at the append, or here at the key), and on
retry finds the record.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

import psycopg
from psycopg.types.json import Jsonb

from .errors import ConcurrencyError


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    fingerprint: str
    status: int
    body: Any
    created_at: datetime


def find_idempotency_record(conn, match_id: UUID, scope: str, key: str) -> IdempotencyRecord | None:
    row = conn.execute(
        "SELECT fingerprint, status, body, created_at FROM idempotency_keys"
        " WHERE match_id = %s AND scope = %s AND key = %s",
        (match_id, scope, key),
    ).fetchone()
    return IdempotencyRecord(*row) if row else None


def save_idempotency_record(
    conn, match_id: UUID, scope: str, key: str, fingerprint: str, status: int, body: Any
) -> None:
    """Raises ``ConcurrencyError`` if a record for this key was saved first."""
    try:
        conn.execute(
            "INSERT INTO idempotency_keys (match_id, scope, key, fingerprint, status, body)"
            " VALUES (%s, %s, %s, %s, %s, %s)",
            (match_id, scope, key, fingerprint, status, Jsonb(body)),
        )
    except psycopg.errors.UniqueViolation as exc:
        raise ConcurrencyError(
            match_id, None, f"a request with idempotency key {key!r} for {scope} in match {match_id} came first"
        ) from exc

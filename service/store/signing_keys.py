"""The Ed25519 keys this service signs exports with, when it makes its own (``signing_keys``).

The newest key not retired signs; every key, retired or not, is published, so that
records signed before a rotation stay verifiable.  Private keys are kept as their 32
raw bytes: whoever reads this table can sign as the service (configure a key file
instead to keep the key out of the database; see ``service.records.signing``).
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

#: pg advisory lock key for making the first key ("gin-keys" in ASCII).
LOCK_KEY = 0x67696E2D6B657973


class StoredKey(NamedTuple):
    key_id: str
    private_key: bytes
    created_at: datetime
    retired_at: datetime | None


def keys(conn) -> list[StoredKey]:
    """Every key, the signing one first (the newest not retired)."""
    rows = conn.execute(
        "SELECT key_id, private_key, created_at, retired_at FROM signing_keys"
        " ORDER BY retired_at IS NOT NULL, created_at DESC, key_id"
    ).fetchall()
    return [StoredKey(key_id, bytes(private), created, retired) for key_id, private, created, retired in rows]


def add(conn, key_id: str, private_key: bytes, *, retire_others: bool) -> None:
    if retire_others:
        conn.execute("UPDATE signing_keys SET retired_at = statement_timestamp() WHERE retired_at IS NULL")
    conn.execute("INSERT INTO signing_keys (key_id, private_key) VALUES (%s, %s)", (key_id, private_key))

"""Seat tokens: who may act for a seat.  Only a hash of each token is stored.

A token is 32 random bytes, so a plain SHA-256 is enough (there is nothing to guess a
dictionary word from), and the lookup is by hash, so no comparison leaks timing.

>>> hash_token("abc") == hash_token("abc") != hash_token("abd")
True
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from uuid import UUID


def new_token() -> str:
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def save_seat_tokens(conn, match_id: UUID, token_hashes: Mapping[int, str]) -> None:
    """Store ``{seat: hash_token(token)}`` for the match (seats without a token: omitted)."""
    conn.cursor().executemany(
        "INSERT INTO seat_tokens (match_id, seat, token_hash) VALUES (%s, %s, %s)",
        [(match_id, seat, token_hash) for seat, token_hash in token_hashes.items()],
    )


def seat_of_token(conn, match_id: UUID, token_hash: str) -> int | None:
    """The seat whose token has this hash in this match, or None."""
    row = conn.execute(
        "SELECT seat FROM seat_tokens WHERE match_id = %s AND token_hash = %s", (match_id, token_hash)
    ).fetchone()
    return row[0] if row else None

"""Seat tokens: who may act for a seat.  Only a hash of each token is stored.

The tokens themselves, their format and their hash: ``service.application.tokens``.
The lookup is by hash, so no comparison in Python sees a token or leaks its timing.
"""

from __future__ import annotations

from collections.abc import Mapping
from uuid import UUID


def save_seat_tokens(conn, match_id: UUID, token_hashes: Mapping[int, str]) -> None:
    """Store ``{seat: token hash}`` for the match (seats without a token: omitted)."""
    conn.cursor().executemany(
        "INSERT INTO seat_tokens (match_id, seat, token_hash) VALUES (%s, %s, %s)",
        [(match_id, seat, token_hash) for seat, token_hash in token_hashes.items()],
    )


def save_seat_token_once(conn, match_id: UUID, seat: int, token_hash: str) -> bool:
    """Store the seat's token hash unless the seat has one already; whether it was stored."""
    row = conn.execute(
        "INSERT INTO seat_tokens (match_id, seat, token_hash) VALUES (%s, %s, %s)"
        " ON CONFLICT DO NOTHING RETURNING seat",
        (match_id, seat, token_hash),
    ).fetchone()
    return row is not None


def seat_of_token(conn, match_id: UUID, token_hash: str) -> int | None:
    """The seat whose token has this hash in this match, or None."""
    row = conn.execute(
        "SELECT seat FROM seat_tokens WHERE match_id = %s AND token_hash = %s", (match_id, token_hash)
    ).fetchone()
    return row[0] if row else None

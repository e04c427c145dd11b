"""What online play keeps beside the events: invites and the lobby, rematches, and who
is following a match live.

None of it is event data.  An invite code is a secret (only its hash is kept, like a
seat token's); the lobby is a listing; a rematch links two matches; a live follower is
a connection, not a fact of the game.

- ``save_invite(conn, match_id, code_hash, public)`` / ``find_invite(conn, match_id)``
- ``lobby(conn, limit, offset, max_age)``: public matches still waiting, newest first;
  ``open_public_of(conn, player_id, max_age)``: how many of them a player holds a seat
  of, and when the oldest of those entered the lobby
- ``link_rematch(conn, match_id, rematch_id, offered_seat)``: the rematch, or the one another request
  linked first; ``rematch_of(conn, match_id)``
- ``follow`` / ``unfollow`` / ``refresh_follows``: a process's live followers of each
  seat; ``connected_seats(conn, match_id, within)``: the seats followed by any process
  that refreshed its rows lately (a process that died stops refreshing, and its rows
  age out)
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import NamedTuple
from uuid import UUID


class Invite(NamedTuple):
    code_hash: str
    public: bool
    created_at: datetime


def save_invite(conn, match_id: UUID, code_hash: str, public: bool) -> None:
    conn.execute(
        "INSERT INTO match_invites (match_id, code_hash, public) VALUES (%s, %s, %s)", (match_id, code_hash, public)
    )


def find_invite(conn, match_id: UUID) -> Invite | None:
    row = conn.execute(
        "SELECT code_hash, public, created_at FROM match_invites WHERE match_id = %s", (match_id,)
    ).fetchone()
    return Invite(*row) if row else None


class LobbyEntry(NamedTuple):
    match_id: UUID
    rules: dict
    seats: list
    created_at: datetime


LOBBY = """
SELECT i.match_id, e.data -> 'rules', s.seats, i.created_at
FROM match_invites i
JOIN match_summaries s ON s.match_id = i.match_id
JOIN events e ON e.match_id = i.match_id AND e.seq = 1
WHERE i.public AND s.status = 'waiting' AND i.created_at > statement_timestamp() - %(max_age)s::interval
ORDER BY i.created_at DESC, i.match_id
LIMIT %(limit)s OFFSET %(offset)s
"""


def lobby(conn, *, limit: int, offset: int, max_age: timedelta) -> list[LobbyEntry]:
    rows = conn.execute(LOBBY, {"limit": limit, "offset": offset, "max_age": max_age}).fetchall()
    return [LobbyEntry(*row) for row in rows]


def open_public_of(conn, player_id: UUID, *, max_age: timedelta) -> tuple[int, datetime | None]:
    row = conn.execute(
        "SELECT count(*), min(i.created_at) FROM match_invites i"
        " JOIN match_players p ON p.match_id = i.match_id"
        " JOIN match_summaries s ON s.match_id = i.match_id"
        " WHERE p.player_id = %(player)s AND i.public AND s.status = 'waiting'"
        " AND i.created_at > statement_timestamp() - %(max_age)s::interval",
        {"player": player_id, "max_age": max_age},
    ).fetchone()
    return int(row[0]), row[1]


def link_rematch(conn, match_id: UUID, rematch_id: UUID, offered_seat: int | None = None) -> UUID:
    """Record ``rematch_id`` as the rematch of ``match_id`` (asked for by the player of
    ``offered_seat``, a seat of the rematch) unless one is recorded; the one recorded
    either way."""
    row = conn.execute(
        "INSERT INTO rematches (match_id, rematch_id, offered_seat) VALUES (%s, %s, %s) ON CONFLICT (match_id) DO NOTHING"
        " RETURNING rematch_id",
        (match_id, rematch_id, offered_seat),
    ).fetchone()
    if row:
        return row[0]
    linked = rematch_of(conn, match_id)
    # The insert found a rematch recorded (rows of rematches are never deleted).
    assert linked is not None, "ON CONFLICT DO NOTHING inserted nothing: a rematch is recorded"
    return linked


def rematch_of(conn, match_id: UUID) -> UUID | None:
    row = conn.execute("SELECT rematch_id FROM rematches WHERE match_id = %s", (match_id,)).fetchone()
    return row[0] if row else None


def follow(conn, match_id: UUID, seat: int, process: str) -> None:
    conn.execute(
        "INSERT INTO live_followers (match_id, seat, process) VALUES (%s, %s, %s)"
        " ON CONFLICT (match_id, seat, process) DO UPDATE SET seen_at = statement_timestamp()",
        (match_id, seat, process),
    )


def unfollow(conn, match_id: UUID, seat: int, process: str) -> None:
    conn.execute(
        "DELETE FROM live_followers WHERE match_id = %s AND seat = %s AND process = %s", (match_id, seat, process)
    )


def refresh_follows(conn, process: str) -> None:
    conn.execute("UPDATE live_followers SET seen_at = statement_timestamp() WHERE process = %s", (process,))


def connected_seats(conn, match_id: UUID, within: timedelta) -> frozenset[int]:
    rows = conn.execute(
        "SELECT DISTINCT seat FROM live_followers WHERE match_id = %s AND seen_at > statement_timestamp() - %s",
        (match_id, within),
    ).fetchall()
    return frozenset(row[0] for row in rows)

"""Players: guests and signed-in people, the seats they hold, their ratings.

- A guest is made with a player token (only its hash is kept); a person signed in by
  the front end's own identity provider is found by ``subject`` (issuer and subject of
  their token), made on first sight.
- ``match_players`` binds seats to players, as ``match_started`` and ``seat_joined``
  record it; written with those events, rebuilt from them.
- ``player_ratings``, ``rated_opponents`` and ``rating_history`` are written by the
  ratings projection (``service.ratings``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import NamedTuple
from uuid import UUID

from .events import COLUMNS, stored_events


class Player(NamedTuple):
    id: UUID
    name: str
    signed_in: bool  # by the front end's identity provider (else a guest)
    created_at: datetime


class Rating(NamedTuple):
    rating: float
    deviation: float
    volatility: float
    matches: int
    wins: int
    opponents: int = 0  # distinct opponents established when played (``rated_opponents``)


SELECT_PLAYER = "SELECT id, name, subject IS NOT NULL, created_at FROM players"


def create_guest(conn, player_id: UUID, name: str, token_hash: str) -> Player:
    row = conn.execute(
        "INSERT INTO players (id, name, token_hash) VALUES (%s, %s, %s) RETURNING id, name, false, created_at",
        (player_id, name, token_hash),
    ).fetchone()
    return Player(*row)


def player_of_token(conn, player_id: UUID, token_hash: str) -> Player | None:
    row = conn.execute(SELECT_PLAYER + " WHERE id = %s AND token_hash = %s", (player_id, token_hash)).fetchone()
    return Player(*row) if row else None


def player_of_subject(conn, subject: str, new_id: UUID, name: str) -> Player:
    """The player signed in as ``subject``, made (as ``new_id``, ``name``) on first sight."""
    row = conn.execute(
        "INSERT INTO players (id, name, subject) VALUES (%s, %s, %s) ON CONFLICT (subject) DO NOTHING"
        " RETURNING id, name, true, created_at",
        (new_id, name, subject),
    ).fetchone()
    if row is None:
        row = conn.execute(SELECT_PLAYER + " WHERE subject = %s", (subject,)).fetchone()
    return Player(*row)


def get_player(conn, player_id: UUID) -> Player | None:
    row = conn.execute(SELECT_PLAYER + " WHERE id = %s", (player_id,)).fetchone()
    return Player(*row) if row else None


def rename(conn, player_id: UUID, name: str) -> Player | None:
    row = conn.execute(
        "UPDATE players SET name = %s WHERE id = %s RETURNING id, name, subject IS NOT NULL, created_at",
        (name, player_id),
    ).fetchone()
    return Player(*row) if row else None


def bind_seats(conn, match_id: UUID, players: Mapping[int, str]) -> None:
    """Record which player holds which seat (``{seat: player id}``)."""
    conn.cursor().executemany(
        "INSERT INTO match_players (match_id, seat, player_id) VALUES (%s, %s, %s)",
        [(match_id, seat, player) for seat, player in players.items()],
    )


def seats_of(conn, match_id: UUID, player_id: UUID) -> list[int]:
    rows = conn.execute(
        "SELECT seat FROM match_players WHERE match_id = %s AND player_id = %s ORDER BY seat", (match_id, player_id)
    ).fetchall()
    return [row[0] for row in rows]


class PlayerMatch(NamedTuple):
    match_id: UUID
    seat: int
    status: str
    created_at: datetime


def matches_of(conn, player_id: UUID, *, status: str | None, limit: int, offset: int) -> list[PlayerMatch]:
    """The matches a player holds a seat in, those waiting for the player's move first
    (``match_turns``, folded with the notifications), then newest first (one row per
    match: its lowest seat held)."""
    rows = conn.execute(
        "SELECT match_id, seat, status, created_at FROM ("
        " SELECT DISTINCT ON (s.created_at, s.match_id) s.match_id, p.seat, s.status, s.created_at,"
        " (t.player_id IS NOT DISTINCT FROM p.player_id) AS mine"
        " FROM match_players p JOIN match_summaries s ON s.match_id = p.match_id"
        " LEFT JOIN match_turns t ON t.match_id = s.match_id"
        " WHERE p.player_id = %(player)s AND (%(status)s::text IS NULL OR s.status = %(status)s::text)"
        " ORDER BY s.created_at DESC, s.match_id, p.seat) listed"
        " ORDER BY mine DESC, created_at DESC, match_id LIMIT %(limit)s OFFSET %(offset)s",
        {"player": player_id, "status": status, "limit": limit, "offset": offset},
    ).fetchall()
    return [PlayerMatch(*row) for row in rows]


OPPONENTS = "(SELECT count(*) FROM rated_opponents o WHERE o.player_id = r.player_id)"


def rating_of(conn, player_id: UUID) -> Rating | None:
    row = conn.execute(
        f"SELECT rating, deviation, volatility, matches, wins, {OPPONENTS} FROM player_ratings r WHERE player_id = %s",
        (player_id,),
    ).fetchone()
    return Rating(*row) if row else None


class RatingChange(NamedTuple):
    """A row of a player's rating history; ``opponent_name`` None: no such player now."""

    position: int
    match_id: UUID
    opponent_id: UUID
    opponent_name: str | None
    result: str
    rating_before: float
    rating: float
    deviation: float
    rated_at: datetime


def rating_history(conn, player_id: UUID, before: int | None, limit: int) -> list[RatingChange]:
    """The player's rated matches, the newest first, those before ``before`` (a position)."""
    rows = conn.execute(
        "SELECT h.position, h.match_id, h.opponent_id, p.name, h.result, h.rating_before, h.rating, h.deviation, h.rated_at"
        " FROM rating_history h LEFT JOIN players p ON p.id = h.opponent_id"
        " WHERE h.player_id = %s AND (%s::bigint IS NULL OR h.position < %s) ORDER BY h.position DESC LIMIT %s",
        (player_id, before, before, limit),
    ).fetchall()
    return [RatingChange(*row) for row in rows]


class BoardEntry(NamedTuple):
    player_id: UUID
    name: str
    rating: Rating


def leaderboard(
    conn, *, min_matches: int, max_deviation: float, min_opponents: int, limit: int, offset: int
) -> list[BoardEntry]:
    """The players with ``min_matches`` rated matches, a deviation of ``max_deviation``
    or less and ``min_opponents`` distinct established opponents, best first."""
    rows = conn.execute(
        f"SELECT * FROM (SELECT p.id, p.name, r.rating, r.deviation, r.volatility, r.matches, r.wins, {OPPONENTS} AS opponents"
        " FROM player_ratings r JOIN players p ON p.id = r.player_id WHERE r.matches >= %s AND r.deviation <= %s) board"
        " WHERE opponents >= %s ORDER BY rating DESC, id LIMIT %s OFFSET %s",
        (min_matches, max_deviation, min_opponents, limit, offset),
    ).fetchall()
    return [BoardEntry(row[0], row[1], Rating(*row[2:])) for row in rows]


def rebuild_bindings(conn) -> int:
    """Recreate ``match_players`` from the events alone; ``conn`` in a transaction.

    An imported match's events name players as its record does, but bind no seat: a
    record could name anyone (a player who joins an imported match is bound, since
    that join happened here)."""
    conn.execute("LOCK TABLE match_players IN EXCLUSIVE MODE")
    conn.execute("DELETE FROM match_players")
    rows = []
    cursor = conn.execute(
        f"SELECT {COLUMNS} FROM events WHERE type IN ('match_started', 'seat_joined')"
        " AND actor IS DISTINCT FROM 'import' ORDER BY match_id, seq"
    )
    for event in stored_events(conn, cursor):
        if event.type == "match_started":
            rows += [(event.match_id, i, s["player"]) for i, s in enumerate(event.data["seats"]) if "player" in s]
        elif "player" in event.data:
            rows.append((event.match_id, event.data["seat"], event.data["player"]))
    conn.cursor().executemany("INSERT INTO match_players (match_id, seat, player_id) VALUES (%s, %s, %s)", rows)
    return len(rows)

"""Ratings: Glicko-2 (the ``glicko2`` package, τ = 0.5), folded from ``match_ended`` events.

A match is rated when both seats are held by players (``match_players``), two different
ones, it did not use hints (no ``hint_shown`` event), and it was not called off.  Each
rated match is a rating period of one game for each player, scored 1 for the winner and
0 for the loser (a resignation and a timeout are losses like any other; a single hand
that ends dead is a draw, 0.5 each), against the opponent's rating as it was before the
match.  New players start at 1500, deviation 350, volatility 0.06.

The ratings are a read model: ``catch_up`` reads the ``match_ended`` events in the
global order (``tx``, ``position``; see service/store/events.py) from where the last
call stopped (``projection_cursors``), in one transaction holding an advisory lock, so
that one process at a time folds them and each match counts once.  ``rebuild`` starts
again from nothing and gives exactly the same numbers.
"""

from __future__ import annotations

import logging
import math
from uuid import UUID

import glicko2

from service.store import EventStore

log = logging.getLogger(__name__)

CURSOR = "ratings"
#: pg advisory lock key of the ratings projection ("gin-ratings" in ASCII, folded to 63 bits).
LOCK_KEY = 0x67696E2D72617469
START = (1500.0, 350.0, 0.06)
BATCH = 1000

MATCH_ENDS = """
SELECT e.match_id, e.data, e.position FROM events e
WHERE e.type = 'match_ended' AND (e.tx, e.position) > (%(tx)s::xid8, %(position)s::bigint)
  AND e.tx < pg_snapshot_xmin(pg_current_snapshot())
ORDER BY e.tx, e.position
LIMIT %(limit)s
"""


def rated_players(conn, match_id: UUID) -> tuple[UUID, UUID] | None:
    """The players of seats 0 and 1 if the match counts for ratings, else None."""
    rows = dict(conn.execute("SELECT seat, player_id FROM match_players WHERE match_id = %s", (match_id,)).fetchall())
    if set(rows) != {0, 1} or rows[0] == rows[1]:
        return None
    hinted = conn.execute(
        "SELECT EXISTS (SELECT FROM events WHERE match_id = %s AND type = 'hint_shown')", (match_id,)
    ).fetchone()[0]
    return None if hinted else (rows[0], rows[1])


def _rating(conn, player_id: UUID) -> tuple[float, float, float, int, int]:
    row = conn.execute(
        "SELECT rating, deviation, volatility, matches, wins FROM player_ratings WHERE player_id = %s", (player_id,)
    ).fetchone()
    return tuple(row) if row else (*START, 0, 0)


class _Player(glicko2.Player):
    """The library's player with step 5 of Glickman's paper as written: the function
    whose root is the new volatility, f(x) = e^x (Δ² − φ² − v − e^x) / 2(φ² + v + e^x)²
    − (x − a)/τ², has the deviation φ where glicko2 2.1.0 reads the rating μ.  (The
    effect is small: on the paper's example, 0.00001 of a rating point.)"""

    def _f(self, x, delta, v, a):
        ex = math.exp(x)
        phi2 = self._Player__rd ** 2
        return ex * (delta**2 - phi2 - v - ex) / (2 * (phi2 + v + ex) ** 2) - (x - a) / self._tau**2


def glicko2_game(player: tuple[float, float, float], opponent: tuple[float, float, float], score: float) -> tuple[float, float, float]:
    """One player's rating, deviation and volatility after one game against ``opponent``."""
    updated = _Player(rating=player[0], rd=player[1], vol=player[2])
    updated.update_player([opponent[0]], [opponent[1]], [score])
    return updated.rating, updated.rd, updated.vol


def _apply(conn, match_id: UUID, data: dict) -> bool:
    if data["reason"] == "aborted":
        return False
    players = rated_players(conn, match_id)
    if players is None:
        return False
    before = [_rating(conn, p) for p in players]
    winner = data["winner"]
    for seat, player in enumerate(players):
        score = 0.5 if winner is None else 1.0 if winner == seat else 0.0
        rating, deviation, volatility = glicko2_game(before[seat][:3], before[1 - seat][:3], score)
        matches, wins = before[seat][3] + 1, before[seat][4] + (winner == seat)
        conn.execute(
            "INSERT INTO player_ratings (player_id, rating, deviation, volatility, matches, wins)"
            " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (player_id) DO UPDATE SET rating = excluded.rating,"
            " deviation = excluded.deviation, volatility = excluded.volatility, matches = excluded.matches,"
            " wins = excluded.wins",
            (player, rating, deviation, volatility, matches, wins),
        )
    return True


def catch_up(store: EventStore) -> int:
    """Fold the match ends not yet folded; the number of rated matches folded (0 also
    when another process holds the projection at the moment)."""
    rated = 0
    while True:
        with store.transaction() as conn:
            if not conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (LOCK_KEY,)).fetchone()[0]:
                return rated
            row = conn.execute("SELECT position FROM projection_cursors WHERE name = %s", (CURSOR,)).fetchone()
            position = row[0] if row else 0
            tx = "0"
            if position:
                tx = conn.execute("SELECT tx::text FROM events WHERE position = %s", (position,)).fetchone()[0]
            rows = conn.execute(MATCH_ENDS, {"tx": tx, "position": position, "limit": BATCH}).fetchall()
            for match_id, data, position in rows:
                rated += _apply(conn, match_id, data)
            if rows:
                conn.execute(
                    "INSERT INTO projection_cursors (name, position) VALUES (%s, %s)"
                    " ON CONFLICT (name) DO UPDATE SET position = excluded.position",
                    (CURSOR, position),
                )
        if len(rows) < BATCH:
            return rated


def catch_up_quietly(store: EventStore) -> None:
    """catch_up, for after an action: a failure is logged (the next call catches up)."""
    try:
        catch_up(store)
    except Exception as exc:  # the match's events are stored whatever happens here
        log.warning("could not update the ratings: %s", type(exc).__name__)


def rebuild(store: EventStore) -> int:
    """Recompute every rating from the events alone; the number of rated matches."""
    with store.transaction() as conn:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        conn.execute("DELETE FROM player_ratings")
        conn.execute("DELETE FROM projection_cursors WHERE name = %s", (CURSOR,))
    return catch_up(store)

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
import threading
import time
from uuid import UUID

import glicko2
from psycopg_pool import PoolClosed

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
            locked = conn.execute("SELECT pg_try_advisory_xact_lock(%s)", (LOCK_KEY,)).fetchone()
            assert locked is not None, "a SELECT of one value and no FROM returns one row"
            if not locked[0]:
                return rated
            row = conn.execute("SELECT position FROM projection_cursors WHERE name = %s", (CURSOR,)).fetchone()
            position = row[0] if row else 0
            tx = "0"
            if position:
                last = conn.execute("SELECT tx::text FROM events WHERE position = %s", (position,)).fetchone()
                assert last is not None, "the cursor is the position of an event, and events are never deleted"
                tx = last[0]
            rows = conn.execute(MATCH_ENDS, {"tx": tx, "position": position, "limit": BATCH}).fetchall()
            for match_id, data, position in rows:  # noqa: B007 - the last position is the cursor, stored below
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
    except PoolClosed:
        pass  # the process is shutting down; the next one catches up
    except Exception as exc:  # the match's events are stored whatever happens here
        log.warning("could not update the ratings: %s", type(exc).__name__)


FOLDED = """
SELECT EXISTS (
    SELECT FROM projection_cursors c JOIN events last ON last.position = c.position, events e
    WHERE c.name = %(cursor)s AND e.position = %(position)s AND (e.tx, e.position) <= (last.tx, last.position)
)
"""


def folded(store: EventStore, position: int) -> bool:
    """Whether the event at ``position`` has been read by the ratings projection."""
    with store.connection() as conn:
        row = conn.execute(FOLDED, {"cursor": CURSOR, "position": position}).fetchone()
        assert row is not None, "SELECT EXISTS (...) returns one row"
        return row[0]


class Folder:
    """Folds a match's end into the ratings soon after it is stored.

    The projection reads only below the oldest transaction still open on the server
    (the global order's horizon, service/store/events.py), so right after a match ends
    its end may not be readable yet: a request still in flight elsewhere holds the
    horizon back for a moment.  The first attempt is made at once; if the end is not
    folded by it, a background thread of this process tries again every 0.1 s for up
    to a minute (readers of ratings catch up too, so nothing is lost after that)."""

    RETRY_SECONDS = 0.1
    GIVE_UP_SECONDS = 60.0

    def __init__(self, store: EventStore):
        self.store = store
        self._pending: dict[int, float] = {}  # position -> when it was asked for
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def fold(self, position: int) -> None:
        catch_up_quietly(self.store)
        try:
            if folded(self.store, position):
                return
        except Exception as exc:
            log.warning("could not check the ratings: %s", type(exc).__name__)
        with self._lock:
            self._pending[position] = time.monotonic()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ratings-folder", daemon=True)
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            time.sleep(self.RETRY_SECONDS)
            catch_up_quietly(self.store)
            with self._lock:
                waiting = dict(self._pending)
            for position, since in waiting.items():
                try:
                    done = folded(self.store, position)
                except Exception:
                    done = False
                if done or time.monotonic() - since > self.GIVE_UP_SECONDS:
                    with self._lock:
                        self._pending.pop(position, None)
            with self._lock:
                if not self._pending:
                    self._wake.clear()


def rebuild(store: EventStore) -> int:
    """Recompute every rating from the events alone; the number of rated matches."""
    with store.transaction() as conn:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        conn.execute("DELETE FROM player_ratings")
        conn.execute("DELETE FROM projection_cursors WHERE name = %s", (CURSOR,))
    return catch_up(store)

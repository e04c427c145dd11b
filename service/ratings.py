"""Ratings: Glicko-2 (the ``glicko2`` package, τ = 0.5), folded from ``match_ended`` events.

A match is rated when all of these hold:

- both seats are held by players (``match_players``), two different ones, and under
  ``GIN_RUMMY_RATED_PLAYERS=signed-in`` both are signed in by the identity provider
  (``all``, the default, rates guests too);
- both seats played: each seat made at least one move of its own before the end, a
  move being one of the match's events ``upcard_passed``, ``card_drawn``,
  ``card_discarded``, ``knocked`` (a knock or Gin) or a ``defended`` that is not
  ``automatic`` (a layoff the defender chose), with that seat in its ``seat``.  A
  resignation, an abort, a timeout claim and a hint are not moves, nor is a defense the
  service made for the defender.  So a match resigned, timed out or called off before
  one of its seats moved counts for neither (as chess servers abort a game whose side
  never moved);
- it did not use hints (no ``hint_shown`` event), it was not called off, and it is not
  casual (``rated: false`` in ``match_started``: a matchmaking ticket that asked for an
  unrated match).

Each rated match is a rating period of one game for each player, scored 1 for the
winner and 0 for the loser (a resignation and a timeout are losses like any other; a
single hand that ends dead is a draw, 0.5 each), against the opponent's rating as it
was before the match.  New players start at 1500, deviation 350, volatility 0.06.

A rating is *established* when its deviation is at most ``ESTABLISHED_DEVIATION``
(110, the provisional line of chess servers), else provisional.  Each rated match
against an opponent established before it adds that opponent to the player's
``rated_opponents`` (once per opponent).  The leaderboard lists the players with an
established rating, at least 5 rated matches and at least
``GIN_RUMMY_LEADERBOARD_MIN_OPPONENTS`` (3) distinct established opponents, so a crowd
of fresh identities, provisional all, lifts no one onto it.

Each rated match also adds a row per player to ``rating_history``: the rating before
and after, the opponent and the result, keyed by the ``match_ended`` event's position
(``GET /players/{id}/ratings``).

The ratings are a read model: ``catch_up`` reads the ``match_ended`` events in the
global order (``tx``, ``position``; see service/store/events.py) from where the last
call stopped (``projection_cursors``), in one transaction holding an advisory lock, so
that one process at a time folds them and each match counts once.  Everything a match's
rating depends on is in its events and in who its players are, so ``rebuild`` starts
again from nothing and gives exactly the same numbers, under the same
``GIN_RUMMY_RATED_PLAYERS``.  Every process of a deployment must run with the same
value: a change applies to the match ends folded after it, and ``gin-rummy projections
rebuild`` (run with the new value) folds every match again under it.  The leaderboard's
least opponents is read, not folded: a change applies at once, with no rebuild.
"""

from __future__ import annotations

import logging
import math
from datetime import datetime
from uuid import UUID

import glicko2

from service.store import EventStore, projections
from service.store.projections import Projection

log = logging.getLogger(__name__)

CURSOR = "ratings"
#: pg advisory lock key of the ratings projection ("gin-ratings" in ASCII, folded to 63 bits).
LOCK_KEY = 0x67696E2D72617469
START = (1500.0, 350.0, 0.06)
#: A rating with a deviation at most this is established (else provisional).
ESTABLISHED_DEVIATION = 110.0
#: Whose matches are rated (``Settings.rated_players``).
RATED_PLAYERS = ("all", "signed-in")
BATCH = 1000

MATCH_ENDS = """
SELECT e.match_id, e.data, e.recorded_at, e.position FROM events e
WHERE e.type = 'match_ended' AND (e.tx, e.position) > (%(tx)s::xid8, %(position)s::bigint)
  AND e.tx < pg_snapshot_xmin(pg_current_snapshot())
ORDER BY e.tx, e.position
LIMIT %(limit)s
"""


#: A seat's own moves: events of these types name it in ``seat`` (a ``defended`` only
#: when the defender chose its layoffs, not ``automatic``).
MOVES = """
type IN ('upcard_passed', 'card_drawn', 'card_discarded', 'knocked')
OR (type = 'defended' AND (data->>'automatic')::boolean IS NOT TRUE)
"""

MATCH_FACTS = f"""
SELECT bool_or(type = 'hint_shown' OR (type = 'match_started' AND data->'rated' = 'false'::jsonb)), count(DISTINCT (data->>'seat')::int) FILTER (WHERE {MOVES})
FROM events WHERE match_id = %s
"""


def rated_players(conn, match_id: UUID, who: str = "all") -> tuple[UUID, UUID] | None:
    """The players of seats 0 and 1 if the match counts for ratings, else None;
    ``who``: ``all`` players are rated, or only ``signed-in`` ones."""
    rows = dict(conn.execute("SELECT seat, player_id FROM match_players WHERE match_id = %s", (match_id,)).fetchall())
    if set(rows) != {0, 1} or rows[0] == rows[1]:
        return None
    if who == "signed-in":
        # A deleted player signed in then counts as signed in: their stand-in's matches stay rated.
        signed_in = conn.execute(
            "SELECT (SELECT count(*) FROM players WHERE id = ANY(%(ids)s) AND subject IS NOT NULL)"
            " + (SELECT count(DISTINCT pseudonym_id) FROM erased_seats WHERE pseudonym_id = ANY(%(ids)s) AND signed_in)",
            {"ids": [rows[0], rows[1]]},
        ).fetchone()[0]
        if signed_in != 2:
            return None
    hinted, seats_that_moved = conn.execute(MATCH_FACTS, (match_id,)).fetchone()
    return None if hinted or seats_that_moved != 2 else (rows[0], rows[1])


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


HISTORY = (
    "INSERT INTO rating_history (player_id, position, match_id, opponent_id, result, rating_before, rating, deviation,"
    " volatility, rated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"
)


def _apply(conn, match_id: UUID, data: dict, who: str, at: datetime, position: int) -> bool:
    if data.get("reason") == "aborted":
        return False
    players = rated_players(conn, match_id, who)
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
        result = "draw" if winner is None else "won" if winner == seat else "lost"
        conn.execute(HISTORY, (player, position, match_id, players[1 - seat], result, before[seat][0], rating, deviation, volatility, at))
        if before[1 - seat][1] <= ESTABLISHED_DEVIATION:
            conn.execute(
                "INSERT INTO rated_opponents (player_id, opponent_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (player, players[1 - seat]),
            )
    return True


def projection(who: str = "all") -> Projection:
    """The ratings as a projection of the match ends, rating the matches of ``who``."""

    def apply(conn, rows) -> int:
        return sum(_apply(conn, match_id, data, who, at, position) for match_id, data, at, position in rows)

    return Projection("ratings", CURSOR, LOCK_KEY, MATCH_ENDS, apply)


def catch_up(store: EventStore, who: str = "all") -> int:
    """Fold the match ends not yet folded; the number of rated matches folded (0 also
    when another process holds the projection at the moment).  ``who``: whose matches
    are rated (``RATED_PLAYERS``)."""
    return projections.catch_up(store, projection(who), BATCH)


def catch_up_quietly(store: EventStore, who: str = "all") -> None:
    """catch_up, for after an action: a failure is logged (the next call catches up)."""
    projections.catch_up_quietly(store, projection(who))


def folded(store: EventStore, position: int) -> bool:
    """Whether the event at ``position`` has been read by the ratings projection."""
    return projections.folded(store, CURSOR, position)


class Folder(projections.Folder):
    """Folds a match's end into the ratings soon after it is stored (see
    ``service.store.projections.Folder``)."""

    def __init__(self, store: EventStore, who: str = "all"):
        super().__init__(store, projection(who))


def rebuild(store: EventStore, who: str = "all") -> int:
    """Recompute every rating from the events alone, rating the matches of ``who``
    (``RATED_PLAYERS``); the number of rated matches."""
    with store.transaction() as conn:
        projections.restart(conn, projection(who), "player_ratings", "rated_opponents", "rating_history")
    return catch_up(store, who)

"""Token buckets kept in PostgreSQL, shared by every worker process and instance, and
the coach's analyses of finished hands.

``take(conn, scope, key, per_second, burst, amount=1, need=1)``: the bucket of
``(scope, key)`` refilled at ``per_second`` up to ``burst`` since it was last taken
from; when it holds at least ``need``, ``amount`` is taken from it (it may go below 0:
a cost charged after the work that cost it) and the answer is 0, else nothing is
taken and the answer is the seconds until it would hold ``need``.  One statement on an
allowed take (an upsert of one row, its row lock held only by that statement), two on
a refusal.

``purge(conn)`` forgets buckets full again (untouched longer than their refill needs
at the slowest rate kept, ``FORGET_AFTER``), so the table holds only recent keys.

``analyses(conn, match_id, analyser, hands)`` / ``save_analyses(conn, match_id,
analyser, {hand: decisions})``: the decisions of finished hands, one row per seat
(each weighed from that seat's view only); only hands that are over are ever saved.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import timedelta
from uuid import UUID

from psycopg.types.json import Jsonb

#: A bucket untouched this long is deleted by ``purge`` (the longest refill of the
#: defaults is an hour's; a bucket forgotten starts again full).
FORGET_AFTER = timedelta(days=1)

_REFILLED = "LEAST(%(burst)s::float8, b.tokens + extract(epoch FROM statement_timestamp() - b.at) * %(rate)s::float8)"

TAKE = f"""
INSERT INTO rate_buckets AS b (scope, key, tokens, at)
VALUES (%(scope)s, %(key)s, %(burst)s::float8 - %(amount)s::float8, statement_timestamp())
ON CONFLICT (scope, key) DO UPDATE
SET tokens = {_REFILLED} - %(amount)s::float8, at = statement_timestamp()
WHERE {_REFILLED} >= %(need)s::float8
RETURNING tokens
"""

LEFT = f"SELECT {_REFILLED} FROM rate_buckets b WHERE scope = %(scope)s AND key = %(key)s"


def take(conn, scope: str, key: str, per_second: float, burst: float, *, amount: float = 1.0, need: float = 1.0) -> float:
    values = {"scope": scope, "key": key, "rate": per_second, "burst": burst, "amount": amount, "need": need}
    if need > burst:
        return math.inf
    if conn.execute(TAKE, values).fetchone() is not None:
        return 0.0
    row = conn.execute(LEFT, values).fetchone()
    left = float(row[0]) if row else float(burst)
    return max(0.0, (need - left) / per_second) or 1e-3


def purge(conn, older_than: timedelta = FORGET_AFTER) -> int:
    return conn.execute("DELETE FROM rate_buckets WHERE at < statement_timestamp() - %s", (older_than,)).rowcount


def analyses(conn, match_id: UUID, analyser: str, hands: Iterable[int]) -> dict[int, list[dict]]:
    """Each of ``hands`` kept: hand -> its decisions in the order they were taken."""
    rows = conn.execute(
        "SELECT hand, seat, decisions FROM hand_analyses WHERE match_id = %s AND analyser = %s AND hand = ANY(%s)",
        (match_id, analyser, list(hands)),
    ).fetchall()
    seats: dict[int, dict[int, list[dict]]] = {}
    for hand, seat, decisions in rows:
        seats.setdefault(hand, {})[seat] = decisions
    # A hand is kept with both seats' rows (saved together); the decisions merge by seq.
    return {
        hand: sorted((d for each in by_seat.values() for d in each), key=lambda d: d["seq"])
        for hand, by_seat in seats.items() if len(by_seat) == 2
    }


def save_analyses(conn, match_id: UUID, analyser: str, hands: Mapping[int, list[dict]]) -> None:
    """Keep the analyses of hands that are over (the caller's guarantee), a row per seat."""
    rows = [
        (match_id, hand, analyser, seat, Jsonb([d for d in decisions if d["seat"] == seat]))
        for hand, decisions in hands.items() for seat in (0, 1)
    ]
    if rows:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO hand_analyses (match_id, hand, analyser, seat, decisions) VALUES (%s, %s, %s, %s, %s)"
                " ON CONFLICT DO NOTHING",
                rows,
            )

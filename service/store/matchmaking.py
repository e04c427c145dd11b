"""Matchmaking tickets: rows with an owner (``matchmaking_tickets``, migration 0012).

Every statement that takes a ticket for a pairing locks its row ``FOR UPDATE SKIP
LOCKED``: a ticket another transaction is pairing is passed over, never waited for, so
two replicas never pair one ticket twice and a pairer never waits on another (no
deadlock).  A cancel is an ``UPDATE ... WHERE status = 'waiting'``: it waits for a
pairing that holds the row, then finds it paired and changes nothing.  The rating range
a ticket accepts widens with its age, computed here from the time given (the service's
clock), never the database's.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

COLUMNS = (
    "id, player_id, kind, fit, spec, rating, status, created_at, polled_at, ended_at, match_id, seat, sealed_token"
)


@dataclass(frozen=True)
class Ticket:
    id: uuid.UUID
    player_id: uuid.UUID
    kind: str
    fit: str
    spec: dict[str, Any]
    rating: float
    status: str
    created_at: datetime
    polled_at: datetime
    ended_at: datetime | None
    match_id: uuid.UUID | None
    seat: int | None
    sealed_token: bytes | None


@dataclass(frozen=True)
class Widening:
    """The rating range of a ticket ``age`` seconds old: ``base`` plus ``step`` every
    ``every`` seconds, at most ``most`` points either side."""

    base: float
    step: float
    every: float
    most: float

    def width(self, age_seconds: float) -> float:
        return min(self.most, self.base + self.step * (max(age_seconds, 0.0) // self.every))


def _ticket(row) -> Ticket:
    sealed = bytes(row[12]) if row[12] is not None else None
    return Ticket(
        row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9], row[10], row[11], sealed,
    )


class OpenTicket(Exception):
    """The player has a waiting ticket of this kind already."""


def insert(conn, ticket_id: uuid.UUID, player_id: uuid.UUID, kind: str, fit: str, spec: dict, rating: float, now: datetime) -> Ticket:
    """A new waiting ticket; OpenTicket when the player has one of this kind waiting
    (the partial unique index decides, so two racing requests cannot both make one)."""
    row = conn.execute(
        f"INSERT INTO matchmaking_tickets (id, player_id, kind, fit, spec, rating, created_at, polled_at)"
        f" VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (player_id, kind) WHERE status = 'waiting' DO NOTHING"
        f" RETURNING {COLUMNS}",
        (ticket_id, player_id, kind, fit, Jsonb(spec), rating, now, now),
    ).fetchone()
    if row is None:
        raise OpenTicket()
    return _ticket(row)


def get(conn, ticket_id: uuid.UUID) -> Ticket | None:
    row = conn.execute(f"SELECT {COLUMNS} FROM matchmaking_tickets WHERE id = %s", (ticket_id,)).fetchone()
    return _ticket(row) if row else None


def tickets_of(conn, player_id: uuid.UUID) -> list[Ticket]:
    """Every ticket of the player, oldest first."""
    rows = conn.execute(f"SELECT {COLUMNS} FROM matchmaking_tickets WHERE player_id = %s ORDER BY created_at, id", (player_id,))
    return [_ticket(row) for row in rows.fetchall()]


def waiting_of(conn, player_id: uuid.UUID, kind: str) -> Ticket | None:
    row = conn.execute(
        f"SELECT {COLUMNS} FROM matchmaking_tickets WHERE player_id = %s AND kind = %s AND status = 'waiting'",
        (player_id, kind),
    ).fetchone()
    return _ticket(row) if row else None


def lapse(conn, *, player_id: uuid.UUID | None = None, stale_before: datetime, now: datetime) -> int:
    """Mark the live tickets not polled since ``stale_before`` lapsed (one player's, or all)."""
    mine = "AND player_id = %(player)s" if player_id is not None else ""
    cur = conn.execute(
        "UPDATE matchmaking_tickets SET status = 'lapsed', ended_at = %(now)s"
        f" WHERE status = 'waiting' AND kind = 'live' AND polled_at < %(stale)s {mine}",
        {"player": player_id, "stale": stale_before, "now": now},
    )
    return cur.rowcount


def polled(conn, ticket_id: uuid.UUID, now: datetime) -> None:
    """The owner asked after its waiting ticket: it is kept (a live one for another while)."""
    conn.execute(
        "UPDATE matchmaking_tickets SET polled_at = greatest(polled_at, %s) WHERE id = %s AND status = 'waiting'",
        (now, ticket_id),
    )


def cancel(conn, ticket_id: uuid.UUID, now: datetime) -> bool:
    """Cancel a waiting ticket; False when it was not waiting (paired, lapsed, cancelled).
    A pairing holding the row is waited for, and then the ticket is no longer waiting."""
    cur = conn.execute(
        "UPDATE matchmaking_tickets SET status = 'cancelled', ended_at = %s WHERE id = %s AND status = 'waiting'",
        (now, ticket_id),
    )
    return cur.rowcount == 1


def lock_waiting(conn, ticket_id: uuid.UUID, fresh_since: datetime) -> Ticket | None:
    """The ticket, locked for this transaction, if it is waiting (and, if live, fresh)
    and no other transaction is pairing it; else None."""
    row = conn.execute(
        f"SELECT {COLUMNS} FROM matchmaking_tickets WHERE id = %s AND status = 'waiting'"
        " AND (kind <> 'live' OR polled_at >= %s) FOR UPDATE SKIP LOCKED",
        (ticket_id, fresh_since),
    ).fetchone()
    return _ticket(row) if row else None


#: The waiting tickets that fit, nearest in rating first, on one side of the rating
#: (``{side}``: ``>=`` and ascending, or ``<`` and descending).  Each side is a walk of the
#: (fit, rating) index from the rating outwards that stops at the first rows passing the
#: filter: its cost does not grow with the crowd waiting (an oldest-first walk would pass
#: over every older ticket out of range, again on every pairing).
FITTING = """
SELECT id, rating FROM matchmaking_tickets
WHERE status = 'waiting' AND fit = %(fit)s AND player_id <> %(player)s AND id <> %(id)s
  AND (kind <> 'live' OR polled_at >= %(fresh)s)
  AND rating {side} %(rating)s AND rating BETWEEN %(rating)s - %(width)s AND %(rating)s + %(width)s
  AND abs(rating - %(rating)s) <= least(
      %(most)s, %(base)s + %(step)s * floor(greatest(extract(epoch FROM %(now)s - created_at), 0) / %(every)s))
ORDER BY rating {order}, created_at
LIMIT %(limit)s
"""
#: How many of the nearest on each side are tried (another pairing may hold some).
NEAREST = 8

LOCK_FITTING = f"""
SELECT {COLUMNS} FROM matchmaking_tickets
WHERE id = %s AND status = 'waiting' AND (kind <> 'live' OR polled_at >= %s)
FOR UPDATE SKIP LOCKED
"""


def lock_fitting(
    conn, ticket: Ticket, widening: Widening, now: datetime, fresh_since: datetime,
) -> tuple[Ticket | None, bool]:
    """The waiting ticket nearest in rating that fits ``ticket`` -- the same kind, rules
    and rating choice, another player, each rating within the other's range now --
    locked for this transaction, or None when there is none that no other transaction is
    pairing; and whether some fitting one was passed over (held by another transaction,
    or paired or cancelled meanwhile).  The candidates are read without a lock, then
    locked one by one (``SKIP LOCKED``, the row read again)."""
    width = widening.width((now - ticket.created_at).total_seconds())
    params = {
        "fit": ticket.fit, "player": ticket.player_id, "id": ticket.id, "fresh": fresh_since, "rating": ticket.rating,
        "width": width, "most": widening.most, "base": widening.base, "step": widening.step,
        "every": widening.every, "now": now, "limit": NEAREST,
    }
    found = []
    for side, order in ((">=", "ASC"), ("<", "DESC")):
        found += conn.execute(FITTING.format(side=side, order=order), params).fetchall()
    for candidate_id, _ in sorted(found, key=lambda row: abs(row[1] - ticket.rating)):
        row = conn.execute(LOCK_FITTING, (candidate_id, fresh_since)).fetchone()
        if row is not None:
            return _ticket(row), False
    return None, bool(found)


def mark_paired(conn, ticket_id: uuid.UUID, match_id: uuid.UUID, seat: int, sealed_token: bytes, now: datetime) -> None:
    conn.execute(
        "UPDATE matchmaking_tickets SET status = 'paired', ended_at = %s, match_id = %s, seat = %s, sealed_token = %s"
        " WHERE id = %s AND status = 'waiting'",
        (now, match_id, seat, sealed_token, ticket_id),
    )


def forget_tokens(conn, paired_before: datetime) -> int:
    """Drop the sealed seat tokens of tickets paired before ``paired_before``."""
    cur = conn.execute(
        "UPDATE matchmaking_tickets SET sealed_token = NULL WHERE status = 'paired' AND sealed_token IS NOT NULL"
        " AND ended_at < %s",
        (paired_before,),
    )
    return cur.rowcount


def waiting_ids(conn, limit: int) -> list[uuid.UUID]:
    """Up to ``limit`` waiting tickets, drawn at random (a background round of pairing:
    over rounds every ticket is tried, however many wait)."""
    rows = conn.execute(
        "SELECT id FROM matchmaking_tickets WHERE status = 'waiting' ORDER BY random() LIMIT %s", (limit,)
    ).fetchall()
    return [row[0] for row in rows]

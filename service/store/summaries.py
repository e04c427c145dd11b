"""The match summary read model: one row per match, for listing and finding matches.

A row holds what follows from the few events that change it: the preset, seats and
creation time from ``match_started`` (status ``waiting`` while a seat is open), each
``seat_joined`` (the seat's name; ``active`` once no seat is open), the hand number from
the latest ``hand_dealt``, scores, status, winner and how it ended (``end_reason``) from
the latest ``hand_ended`` / ``match_ended``.  An append
whose batch holds such events writes the row in the same statement that stores them
(``INSERT_SUMMARY`` when the batch starts the match, else ``UPDATE_SUMMARY``); the other
appends, most of them, leave it alone.  The version and the time of the last change are
read with the row from the match's last event (one index probe), so no action has to
rewrite the row just to count.

``summary_changes`` says what a run of events sets.  ``rebuild`` applies it to each
whole stream, so rebuilt rows equal the ones written batch by batch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby
from operator import attrgetter
from typing import Any
from uuid import UUID

from psycopg.types.json import Jsonb

from service.engine import Event

from .events import COLUMNS, stored_events

STATUSES = ("waiting", "active", "finished")

#: The event types a summary follows.
SUMMARY_EVENTS = frozenset({"match_started", "seat_joined", "hand_dealt", "hand_ended", "match_ended"})


@dataclass(frozen=True, slots=True)
class MatchSummary:
    match_id: UUID
    status: str
    preset: str
    seats: list
    scores: list[int]
    hand_number: int
    winner: int | None
    version: int
    created_at: datetime
    updated_at: datetime
    end_reason: str | None = None
    #: The match this one is played again as (``rematches``), if any.
    rematch: UUID | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "match_id": str(self.match_id),
            "status": self.status,
            "preset": self.preset,
            "seats": self.seats,
            "scores": self.scores,
            "hand_number": self.hand_number,
            "winner": self.winner,
            "version": self.version,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "end_reason": self.end_reason,
            "rematch": str(self.rematch) if self.rematch else None,
        }


def summary_changes(events: Iterable[Event]) -> dict[str, Any]:
    """The summary columns a run of events sets (None: left as it was), as query parameters."""
    changes: dict[str, Any] = {
        "started": False,
        "preset": None,
        "seats": None,
        "joined": None,  # {seat index (text): seat} taken in these events, for an update
        "waiting": None,  # True, False, or None: left as it was
        "hand_number": None,
        "scores": None,
        "finished": False,
        "winner": None,
        "end_reason": None,
    }
    seats: list | None = None
    joined: dict[str, dict] = {}
    for etype, data in events:
        if etype == "match_started":
            seats = list(data["seats"])
            changes.update(started=True, preset=data["rules"]["preset"])
        elif etype == "seat_joined":
            seat = {"name": data["name"], "kind": "human", **({"player": data["player"]} if "player" in data else {})}
            joined[str(data["seat"])] = seat
            if seats is not None:
                seats[data["seat"]] = seat
        elif etype == "hand_dealt":
            changes["hand_number"] = data["hand"]
            changes["waiting"] = False
        elif etype == "hand_ended":
            changes["scores"] = data["scores"]
        elif etype == "match_ended":
            changes.update(finished=True, winner=data["winner"], scores=data["scores"], end_reason=data["reason"])
    if seats is not None:
        changes["seats"] = Jsonb(seats)
        changes["waiting"] = any(seat["kind"] == "open" for seat in seats)
    elif joined:
        changes["joined"] = Jsonb(joined)
    return changes


# Reads the creation time from a relation named ``created`` (one row, or none: then
# nothing is written).  A stream without ``match_started`` has no summary.
INSERT_SUMMARY = """
    INSERT INTO match_summaries (match_id, status, preset, seats, scores, hand_number, winner, end_reason, created_at)
    SELECT %(match_id)s,
           CASE WHEN %(finished)s::boolean THEN 'finished' WHEN %(waiting)s::boolean THEN 'waiting' ELSE 'active' END,
           %(preset)s::text, %(seats)s::jsonb, COALESCE(%(scores)s::int[], '{0,0}'),
           COALESCE(%(hand_number)s::int, 0), %(winner)s::int, %(end_reason)s::text, created.created_at
    FROM created WHERE %(started)s::boolean
"""

# Changes the row only if the relation named ``appended`` (the stored events) has rows.
UPDATE_SUMMARY = """
    UPDATE match_summaries s
    SET status = CASE WHEN %(finished)s::boolean THEN 'finished'
                      WHEN %(waiting)s::boolean IS FALSE THEN 'active' ELSE s.status END,
        seats = CASE WHEN %(joined)s::jsonb IS NULL THEN s.seats ELSE (
            SELECT jsonb_agg(COALESCE(%(joined)s::jsonb -> (i - 1)::text, seat) ORDER BY i)
            FROM jsonb_array_elements(s.seats) WITH ORDINALITY AS x (seat, i)
        ) END,
        scores = COALESCE(%(scores)s::int[], s.scores),
        hand_number = COALESCE(%(hand_number)s::int, s.hand_number),
        winner = CASE WHEN %(finished)s::boolean THEN %(winner)s::int ELSE s.winner END,
        end_reason = CASE WHEN %(finished)s::boolean THEN %(end_reason)s::text ELSE s.end_reason END
    WHERE s.match_id = %(match_id)s AND EXISTS (SELECT FROM appended)
"""

REBUILD_SUMMARY = f"""
    WITH created (created_at) AS (VALUES (%(created_at)s::timestamptz))
    {INSERT_SUMMARY}
"""

# The row, with the version and time of the match's last event.
SELECT_SUMMARIES = """
    SELECT s.match_id, s.status, s.preset, s.seats, s.scores, s.hand_number, s.winner,
           last.seq, s.created_at, last.recorded_at, s.end_reason, r.rematch_id
    FROM match_summaries s
    CROSS JOIN LATERAL (
        SELECT seq, recorded_at FROM events e WHERE e.match_id = s.match_id ORDER BY seq DESC LIMIT 1
    ) last
    LEFT JOIN rematches r ON r.match_id = s.match_id
"""


def summary(conn, match_id: UUID) -> MatchSummary | None:
    row = conn.execute(SELECT_SUMMARIES + " WHERE s.match_id = %s", (match_id,)).fetchone()
    return MatchSummary(*row) if row else None


def summaries(
    conn, *, status: str | None = None, limit: int = 50, offset: int = 0, newest_first: bool = True
) -> list[MatchSummary]:
    """By creation time (newest first, or oldest); ``status`` 'active' or 'finished' filters."""
    if status is not None and status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}, got {status!r}")
    # Both orders read the index on (created_at DESC, match_id), forwards or backwards.
    order = "s.created_at DESC, s.match_id" if newest_first else "s.created_at, s.match_id DESC"
    rows = conn.execute(
        SELECT_SUMMARIES + " WHERE %(status)s::text IS NULL OR s.status = %(status)s::text"
        f" ORDER BY {order} LIMIT %(limit)s OFFSET %(offset)s",
        {"status": status, "limit": limit, "offset": offset},
    ).fetchall()
    return [MatchSummary(*row) for row in rows]


def rebuild(conn) -> int:
    """Recreate every summary from the events alone; ``conn`` must be in a transaction.

    Returns the number of summaries.
    """
    # EXCLUSIVE lets readers read the old rows but makes appends that write a summary
    # wait until the rebuild commits; it also waits for such appends already running,
    # so the events read below include all of theirs.
    conn.execute("LOCK TABLE match_summaries IN EXCLUSIVE MODE")
    conn.execute("DELETE FROM match_summaries")
    rows = []
    with conn.cursor(name="rebuild_summaries") as cursor:
        cursor.itersize = 2000
        cursor.execute(
            f"SELECT {COLUMNS} FROM events WHERE type = ANY(%s) ORDER BY match_id, seq", (sorted(SUMMARY_EVENTS),)
        )
        for match_id, group in groupby(stored_events(conn, cursor), key=attrgetter("match_id")):
            stream = list(group)
            rows.append(
                {**summary_changes(e.event for e in stream), "match_id": match_id, "created_at": stream[0].recorded_at}
            )
            if len(rows) == 500:
                conn.cursor().executemany(REBUILD_SUMMARY, rows)
                rows = []
    conn.cursor().executemany(REBUILD_SUMMARY, rows)
    return conn.execute("SELECT count(*) FROM match_summaries").fetchone()[0]

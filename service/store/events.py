"""Stored events as read back: upcast to the current schema version, with their metadata.

The global order for catch-up readers
-------------------------------------
Positions come from a sequence, so they are drawn in one order and committed in
another: a transaction may commit position 11 while position 10 is still in flight.  A
reader that kept "the highest position seen" would then skip 10 for ever.

Instead of a lock that forces commit order to equal position order (which would make
every append wait for the previous one's commit, and its disk flush), each row records
the transaction that wrote it (``tx``, a 64-bit id that never wraps), and readers:

- order events by ``(tx, position)``, and
- return only events whose ``tx`` is below ``pg_snapshot_xmin(pg_current_snapshot())``,
  the oldest transaction still running.  Every transaction below it has finished, so
  no event can later appear below that horizon: whatever commits later has a ``tx`` at
  or above it, and sorts after everything already returned.

The cursor is the position of the last event returned; a reader continues after that
event's ``(tx, position)``.  Within one match the feed keeps ``seq`` order because an
append refuses to follow an event written by a younger transaction (``INSERT_EVENTS``
in event_store.py).  A long-running transaction anywhere on the server delays the feed
(never reorders it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from service.engine import Event

from .erasure import overlay
from .upcasting import current_version, upcast

#: The columns every reading query selects, in the order ``stored_events`` expects.
COLUMNS = "match_id, seq, type, schema_version, data, actor, recorded_at, position"


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as stored: its place in its match (``seq``) and in the global order
    (``position``), its data at the current schema version, who caused it and when."""

    match_id: UUID
    seq: int
    type: str
    schema_version: int
    data: dict
    actor: str | None
    recorded_at: datetime
    position: int

    @property
    def event(self) -> Event:
        return Event(self.type, self.data)

    def to_json(self) -> dict[str, Any]:
        return {
            "match_id": str(self.match_id),
            "seq": self.seq,
            "position": self.position,
            "type": self.type,
            "schema_version": self.schema_version,
            "data": self.data,
            "actor": self.actor,
            "recorded_at": self.recorded_at.isoformat(),
        }


class MatchHistory:
    """The events of one match before seq ``before``, looked up for an upcaster that
    needs them."""

    def __init__(self, conn, match_id: UUID, before: int):
        self.conn = conn
        self.match_id = match_id
        self.before = before

    def knock(self) -> dict:
        row = self.conn.execute(
            "SELECT schema_version, data FROM events WHERE match_id = %s AND type = 'knocked' AND seq < %s"
            " ORDER BY seq DESC LIMIT 1",
            (self.match_id, self.before),
        ).fetchone()
        if row is None:
            raise LookupError(f"match {self.match_id} has no knock before event {self.before}")
        return upcast("knocked", row[0], row[1], self)

    def deal(self, hand: int) -> dict:
        row = self.conn.execute(
            "SELECT schema_version, data FROM events"
            " WHERE match_id = %s AND type = 'hand_dealt' AND (data->>'hand')::int = %s",
            (self.match_id, hand),
        ).fetchone()
        if row is None:
            raise LookupError(f"match {self.match_id} has no deal of hand {hand}")
        return upcast("hand_dealt", row[0], row[1], self)


def current_data(conn, match_id: UUID, seq: int, event_type: str, version: int, data: dict) -> dict:
    """The data of stored event ``seq`` at the current schema version of its type (and
    with the seats of deleted players erased: service/store/erasure.py)."""
    data = overlay(conn, match_id, event_type, data)
    if version == current_version(event_type):
        return data
    return upcast(event_type, version, data, MatchHistory(conn, match_id, seq))


def stored_events(conn, rows: Iterable[tuple], raw: bool = False) -> Iterator[StoredEvent]:
    """StoredEvents from rows of ``COLUMNS`` (``raw``: as stored, not upcast)."""
    for match_id, seq, etype, version, data, actor, recorded_at, position in rows:
        if not raw:
            data, version = current_data(conn, match_id, seq, etype, version, data), current_version(etype)
        else:
            data = overlay(conn, match_id, etype, data)  # as stored, but never a deleted player's name
        yield StoredEvent(match_id, seq, etype, version, data, actor, recorded_at, position)

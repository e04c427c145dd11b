"""A player's own data, in one download (``GET /players/me/data``).

Everything the service holds about the calling player, as lines of JSON (NDJSON), each
``{"type": T, T: the object}``, in this order:

- ``player``: the player as ``GET /players/me`` answers it (id, name, signed in or a
  guest, when made, the rating);
- ``rating_change``: each rated match, newest first, as ``GET /players/{id}/ratings``
  lists it;
- ``match``: each match the player holds a seat in, as "My games" lists them (those
  waiting for the player's move first, then newest first), with the seat and the
  status, and as that seat may see it: a finished match's complete signed record (as
  ``GET /matches/{id}/export`` answers a seat), an unfinished one's events redacted for
  the seat (as ``GET /matches/{id}/events``: no card the seat may not see yet);
- ``notification``: each notification of the player's feed, oldest first;
- ``ticket``: each matchmaking ticket the player posted, oldest first (never a token).

Tokens are not part of it (the service keeps only their hashes).  The lines are made
as they are sent, a match at a time, so a long history costs no more memory than one
match.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

from service import feed
from service.store import EventStore
from service.store import matchmaking as tickets
from service.store import players as store_players

from .callers import Callers
from .matchmaking import ticket_json
from .players import Players
from .records import Records
from .unit_of_work import UnitOfWork
from .views import event_json

#: Rows read at once from a list (matches, notifications, rating changes).
PAGE = 200


class PersonalData:
    def __init__(
        self, store: EventStore, callers: Callers, players: Players, records: Records, poll: timedelta,
        clock: Callable[[], datetime],
    ):
        self.store = store
        self.clock = clock
        self.callers = callers
        self.players = players
        self.records = records
        self.poll = poll

    def export(self, token: str) -> tuple[uuid.UUID, Iterator[dict]]:
        """The calling player's id and the lines of their data (the caller is checked
        before the first line is made)."""
        with UnitOfWork(self.store) as uow:
            player_id = self.callers.player(uow, token)
        return player_id, self._lines(token, player_id, self.clock())

    def _lines(self, token: str, player_id: uuid.UUID, now: datetime) -> Iterator[dict]:
        feed.catch_up_quietly(self.store)  # the notifications, and whose move each match waits for
        yield line("player", self.players.me(token))
        before = None
        while True:
            page = self.players.rating_history(player_id, before, PAGE)
            yield from (line("rating_change", item) for item in page.items)
            if page.next_cursor is None:
                break
            before = int(page.next_cursor)
        yield from self._matches(player_id)
        after = 0
        while True:
            rows = feed.read(self.store, player_id, after, PAGE)
            yield from (line("notification", row.to_json()) for row in rows)
            if len(rows) < PAGE:
                break
            after = rows[-1].seq
        with self.store.connection() as conn:
            own = tickets.tickets_of(conn, player_id)
        yield from (line("ticket", ticket_json(ticket, None, now, self.poll)) for ticket in own)

    def _matches(self, player_id: uuid.UUID) -> Iterator[dict]:
        offset = 0
        while True:
            with self.store.connection() as conn:
                rows = store_players.matches_of(conn, player_id, status=None, limit=PAGE, offset=offset)
            for row in rows:
                yield self._match(row.match_id, row.seat, row.status)
            if len(rows) < PAGE:
                return
            offset += PAGE

    def _match(self, match_id: uuid.UUID, seat: int, status: str) -> dict:
        match = {"id": str(match_id), "seat": seat, "status": status}
        if status == "finished":
            record, _ = self.records.record_of(match_id)
            return line("match", {**match, "record": record})
        events = self.store.read(match_id)
        return line("match", {**match, "events": [event_json(event, seat) for event in events]})


def line(kind: str, body: dict) -> dict:
    return {"type": kind, kind: body}

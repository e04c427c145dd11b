"""What a seat is answered: its view of a match, the view's ETag, the events it may see.

The view is the engine's ``seat_view`` with what the service knows beside the state:
the match's id, status and public seats, whether the opponent follows the match live
(``opponent.connected``, between two people), the rematch of a finished match, and
where the match came from (``provenance``).  ``view_for`` builds it, as documented
(``SeatViewSchema``: no schema dump is paid for on every request).

A view changes only with the match's version and with those few facts, so ``Views``
keeps each seat's view encoded as JSON by the key of all of them (an ``LRU``), and a
match's provenance, which never changes once written, by match.  The ETag of a view
is its version, then after a dot what else changed it without a move: ``t`` once a
timeout may be claimed, ``c`` while the opponent follows the match live, ``r`` and
the rematch's id once there is one (``"12"``, ``"12.tc"``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson
import psycopg

from service.engine import State, redact_event, seat_view
from service.engine.game import MATCH_OVER, WAITING, deadline
from service.live import Presence
from service.lru import LRU
from service.store import EventStore, StoredEvent, online
from service.store.provenance import provenance_of

from .errors import Invalid


def dumps(body: Any) -> bytes:
    """JSON of an answer (orjson: several times faster than json, and every view and
    event feed is encoded on every request)."""
    return orjson.dumps(body)


def etag(version: int) -> str:
    return f'"{version}"'


def public_seats(state: State) -> list[dict]:
    """Seats as clients see them: no seeds, no tokens (an open seat has no name yet)."""
    return [
        {"seat": i, "name": s.get("name"), "kind": s["kind"], "level": s.get("level"), "player": s.get("player")}
        for i, s in enumerate(state.seats)
    ]


def status_of(state: State) -> str:
    return "finished" if state.phase == MATCH_OVER else "waiting" if state.phase == WAITING else "active"


def view_for(
    state: State,
    seat: int,
    match_id: uuid.UUID,
    *,
    now: datetime | None = None,
    connected: frozenset[int] | None = None,
    rematch: uuid.UUID | None = None,
    provenance: dict | None = None,
) -> dict:
    """The seat view the API serves.  ``now`` lets a timeout claim be listed once the
    opponent's deadline has passed; ``connected`` are the seats with a live stream open
    (for ``opponent.connected``, which is null for a computer); ``rematch`` the match
    this one is played again as; ``provenance`` where the match came from (null where
    it was not asked for)."""
    view = seat_view(state, seat, now=now)
    view["match_id"] = str(match_id)
    view["status"] = status_of(state)
    view["seats"] = public_seats(state)
    opponent = 1 - seat
    person = bool(state.seats) and state.seats[opponent]["kind"] == "human"
    view["opponent"]["connected"] = (opponent in connected) if person and connected is not None else (False if person else None)
    view["rematch"] = str(rematch) if rematch is not None else None
    view["provenance"] = provenance
    return view


def event_json(stored: StoredEvent, seat: int | None) -> dict:
    """A stored event as ``seat`` may see it (None: the operator, who sees all)."""
    return redact_event(
        {
            "seq": stored.seq,
            "type": stored.type,
            "schema_version": stored.schema_version,
            "data": stored.data,
            "recorded_at": stored.recorded_at.isoformat(),
        },
        seat,
    )


def operator_seat(asked: str | None) -> int:
    """The seat whose view the operator asked for (``?seat=``, default 0)."""
    raw = "0" if asked is None else asked
    if raw not in ("0", "1"):
        raise Invalid("seat must be 0 or 1", errors={"seat": ["must be 0 or 1"]})
    return int(raw)


@dataclass
class Context:
    """What a view needs beside the state."""

    now: datetime
    provenance: dict | None = None
    connected: frozenset[int] | None = None
    rematch: uuid.UUID | None = None
    #: A database failure left out what it would have read (such a view is not kept).
    degraded: bool = False

    def view_options(self) -> dict[str, Any]:
        return {"now": self.now, "provenance": self.provenance, "connected": self.connected, "rematch": self.rematch}


@dataclass
class SeatAnswer:
    """A view as answered: ``body`` its JSON, ``etag`` its ETag."""

    state: State
    etag: str
    encode: Any = field(repr=False)

    @property
    def version(self) -> int:
        return self.state.version

    def body(self) -> bytes:
        return self.encode()


class Views:
    """Seat views with their context, each encoded once per key (one per app)."""

    def __init__(self, store: EventStore, presence: Presence, clock):
        self.store = store
        self.presence = presence
        self.clock = clock
        self._encoded: LRU[tuple, bytes] = LRU(4096)
        self._provenance: LRU[uuid.UUID, dict] = LRU(8192)

    def provenance(self, conn: psycopg.Connection, match_id: uuid.UUID) -> dict:
        """The match's provenance, read once per process: it is written with the match's
        first events (made or imported) and never changes."""
        found = self._provenance.get(match_id)
        if found is None:
            found = provenance_of(conn, match_id).to_json()
            self._provenance.put(match_id, found)
        return found

    def context(self, conn: psycopg.Connection, state: State, match_id: uuid.UUID, *, stored: bool = False) -> Context:
        """The time (a timeout claim is listed once the deadline has passed), the
        provenance, who follows the match live (between two people), and the rematch
        of a finished match.

        ``stored``: the answer to a write already committed.  Then a database failure
        here leaves those out (null) rather than refuse a move that was made."""
        context = Context(now=self.clock())
        try:
            context.provenance = self.provenance(conn, match_id)
            if state.phase == MATCH_OVER:
                context.rematch = online.rematch_of(conn, match_id)
            elif len(state.seats) == 2 and all(seat["kind"] != "computer" for seat in state.seats):
                context.connected = self.presence.seats(conn, match_id)
        except psycopg.OperationalError:
            if not stored:
                raise
            return Context(now=context.now, provenance=context.provenance, degraded=True)
        return context

    def context_then(self, conn: psycopg.Connection, state: State, match_id: uuid.UUID) -> Context:
        """The context of an answer given before, at ``state`` (an Idempotency-Key's
        retry), as it was then: its time was its last event's (so a timeout claim
        listed since is not), and no rematch existed yet (a match is played again once
        it is over, after the answer that ended it).  Who follows the match live was
        not kept: that one is as now."""
        context = self.context(conn, state, match_id, stored=True)
        if state.last_at is not None:
            context.now = datetime.fromisoformat(state.last_at)
        context.rematch = None
        return context

    def view(self, state: State, seat: int | None, match_id: uuid.UUID, context: Context, *, operator_asked: str | None = None) -> dict:
        """The view of ``seat`` (None: the operator's, of the seat asked for, with the hidden cards)."""
        body = view_for(state, seat if seat is not None else operator_seat(operator_asked), match_id, **context.view_options())
        if seat is None:
            body["hidden"] = {"hands": [list(h) for h in state.hands], "stock": list(state.stock)}
        return body

    def forget(self, match_ids: set[uuid.UUID] | None) -> None:
        """Drop the views kept of ``match_ids`` (None: of every match)."""
        self._encoded.discard(lambda key: match_ids is None or key[0] in match_ids)

    def encoded(self, state: State, seat: int | None, match_id: uuid.UUID, context: Context, *, operator_asked: str | None = None) -> bytes:
        """The view as JSON: a seat's from the memo when it is there (the key holds what
        else the view depends on)."""
        if seat is None or context.degraded:
            return dumps(self.view(state, seat, match_id, context, operator_asked=operator_asked))
        due = deadline(state)
        claimable = due is not None and context.now >= due
        connected = context.connected
        key = (match_id, state.version, seat, claimable, connected is not None and 1 - seat in connected, context.rematch)
        view = self._encoded.get(key)
        if view is None:
            view = dumps(self.view(state, seat, match_id, context))
            self._encoded.put(key, view)
        return view

    @staticmethod
    def etag(state: State, seat: int | None, context: Context) -> str:
        variant = ""
        due = deadline(state)
        if due is not None and context.now >= due:
            variant += "t"
        connected = context.connected
        if connected is not None and seat is not None and 1 - seat in connected:
            variant += "c"
        if context.rematch is not None:
            variant += f"r{context.rematch.hex}"
        return f'"{state.version}.{variant}"' if variant else etag(state.version)

    def answer(self, state: State, seat: int | None, match_id: uuid.UUID, context: Context, *, operator_asked: str | None = None) -> SeatAnswer:
        """The view with its ETag, encoded only when asked (a 304 needs only the tag)."""
        return SeatAnswer(
            state, self.etag(state, seat, context),
            lambda: self.encoded(state, seat, match_id, context, operator_asked=operator_asked),
        )

"""Notifications: one feed per player, folded from the events of every match it plays.

Kinds, each to the players bound to a match's seats (``match_players``: those that
``match_started`` and ``seat_joined`` name, but not in an imported match), never to a
seat no player holds:

- ``your_move``: the turn passed to the player's seat (a new hand, a discard, a pass of
  the upcard, a knock the seat defends), with the deadline under a clock; not against
  the computer, which answers within the player's own request;
- ``match_found``: a match made by pairing started (its ``match_started`` has
  ``"paired": true``), to both seats' players;
- ``invite_accepted``: a player joined the open seat of the player's match;
- ``rematch_offered``: the opponent asked to play again; the rematch is made (and
  waits for the player's own ``POST /matches/{id}/rematch``);
- ``match_ended``: with the result (``won``, ``lost`` or ``draw``), the reason and the
  scores;
- ``reminder``: under a correspondence clock (``turn_seconds`` at least twice the
  reminder's lead), the deadline of the player's move is less than
  ``Settings.reminder_before_seconds`` away.  Time makes it, not an event: ``sweep``,
  run every ``Settings.reminder_sweep_seconds`` by each process, inserts it once per
  turn (its ``key`` is unique: ``reminder:<match>:<position of the event that gave the
  turn>``), whichever process sweeps first.

A notification names a match, seats, names shown to every seat, scores, reasons and
times: never a card, nor anything of a hand, nor a token.

The projection follows service/store/projections.py exactly (``projection_cursors``
row ``notifications``, an advisory lock, the global order, batches).  Every event of
the global order is read; each match's state is folded along (from its state before
the batch's first event) to see whose turn it is.  ``match_turns`` keeps, per match,
the seat it waits for, its player and deadline (for "My games" and the sweep).  A match
no player holds a seat of (a guest's game: seat tokens only) is skipped: it notifies
nobody and nobody lists its turns.

Ids.  A client resumes after the id of the last notification it saw, so ids grow in
the order rows commit, and ``rebuild`` must give every row the same id again.  The
events that notify are numbered in the order they are folded (``k``: the row
``notification-bucket`` of ``projection_cursors``); an event's notifications get ids
``k·2²¹ + i``; the reminders swept while ``k`` is the last number get ``k·2²¹ + 2²⁰ +
j``: after every notification stored before them, before every one stored after.
The rebuild deletes every row but the reminders and folds the events again, which
number the same events the same, so it gives identical rows (and the reminders keep
theirs).  After each catch-up a process announces each new row (``NOTIFY``, the
player's id and the row's id) so that the player's live streams wake.

Webhooks.  In the transaction that stores them, the notifications are owed to the
operator's webhook endpoints (``service.store.webhooks.enqueue``: the outbox), so that a
notification stored is a delivery owed exactly once, whatever process folds it and
however often (service/webhooks.py sends them).
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from psycopg.types.json import Jsonb

from service.engine.game import deadline, evolve
from service.engine.state import DEFENSE, DISCARD, DRAW, UPCARD_OFFER, State
from service.lru import LRU
from service.store import EventStore, projections
from service.store.events import COLUMNS, stored_events
from service.store.notifications import payload
from service.store.periodic import run_periodically
from service.store.projections import Projection
from service.store.webhooks import Owed, enqueue

log = logging.getLogger(__name__)

CURSOR = "notifications"
BUCKET = "notification-bucket"
#: Where the feeds started (the last event when migration 0013 ran): the rebuild starts there.
START = "notifications-start"
#: pg advisory lock key of the notifications projection ("gin-noti" in ASCII).
LOCK_KEY = 0x67696E2D6E6F7469
BUCKET_BITS = 21
REMINDER_SLOT = 1 << 20
KINDS = ("your_move", "match_found", "invite_accepted", "rematch_offered", "match_ended", "reminder")
#: Phases in which the seat of ``turn`` is to move.
MOVE_PHASES = frozenset({UPCARD_OFFER, DRAW, DISCARD, DEFENSE})
BATCH = 1000

EVENTS = f"""
SELECT {COLUMNS} FROM events e
WHERE (e.tx, e.position) > (%(tx)s::xid8, %(position)s::bigint)
  AND e.tx < pg_snapshot_xmin(pg_current_snapshot())
ORDER BY e.tx, e.position
LIMIT %(limit)s
"""

INSERT = (
    "INSERT INTO notifications (id, player_id, kind, match_id, data, source, key, created_at)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (key) DO NOTHING RETURNING id"
)
#: A batch's rows in one statement (one round trip, whatever their number: a server busy
#: with requests answers each round trip late, under gevent most of all).
INSERT_MANY = (
    "INSERT INTO notifications (id, player_id, kind, match_id, data, source, key, created_at)"
    " SELECT * FROM unnest(%s::bigint[], %s::uuid[], %s::text[], %s::uuid[], %s::jsonb[], %s::bigint[], %s::text[], %s::timestamptz[])"
    " ON CONFLICT (key) DO NOTHING"
)


@dataclass(frozen=True)
class Notification:
    """A row of a player's feed; ``seq`` is its id (as a live stream's items have)."""

    seq: int
    type: str
    match_id: UUID
    data: dict
    created_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {
            "id": str(self.seq), "kind": self.type, "match": str(self.match_id),
            "created_at": self.created_at.isoformat(), **self.data,
        }

    def owed(self, player_id: UUID) -> Owed:
        """This notification as webhooks send it (service/webhooks.py: the body)."""
        return Owed(self.seq, self.type, {
            "type": self.type, "timestamp": self.created_at.isoformat(),
            "data": {"player": str(player_id), **self.to_json()},
        }, self.created_at)


def _iso(when: datetime | None) -> str | None:
    return when.isoformat(timespec="milliseconds") if when is not None else None


def _columns(rows: list[tuple], width: int) -> list[list]:
    """Rows as columns, for ``unnest``."""
    return [list(column) for column in zip(*rows)] if rows else [[] for _ in range(width)]


def _bindings(conn, match_ids: list[UUID]) -> tuple[dict[UUID, dict[int, UUID]], set[tuple[UUID, int]]]:
    """The players bound to the seats of each match (``match_players``: an imported
    record's seats name players, but bind none), in one query, and the seats of
    deleted players (``erased_seats``: bound to a stand-in nobody plays, told nothing,
    but numbered as before so that a rebuild gives every other row its id again).  They
    are written with the events that bind them, so a batch's events find them all."""
    bound: dict[UUID, dict[int, UUID]] = {match_id: {} for match_id in match_ids}
    erased: set[tuple[UUID, int]] = set()
    rows = conn.execute(
        "SELECT p.match_id, p.seat, p.player_id,"
        " EXISTS (SELECT FROM erased_seats e WHERE e.match_id = p.match_id AND e.seat = p.seat)"
        " FROM match_players p WHERE p.match_id = ANY(%s)",
        (match_ids,),
    ).fetchall()
    for match_id, seat, player, gone in rows:
        bound[match_id][seat] = player
        if gone:
            erased.add((match_id, seat))
    return bound, erased


#: Per store: the state of each match after the last event this process folded
#: (``(seq, state)``), so that the next batch starts from it without loading it.
_FOLDED: weakref.WeakKeyDictionary[EventStore, LRU[UUID, tuple[int, State]]] = weakref.WeakKeyDictionary()
FOLDED_STATES = 4096


def forget(store: EventStore, match_ids: set[UUID] | None) -> None:
    """Drop the folded states of ``match_ids`` (None: all) that this process keeps."""
    _folded(store).discard(lambda match_id: match_ids is None or match_id in match_ids)


def _folded(store: EventStore) -> LRU[UUID, tuple[int, State]]:
    cache = _FOLDED.get(store)
    if cache is None:
        cache = _FOLDED.setdefault(store, LRU(FOLDED_STATES))
    return cache


def _name(state: State, seat: int) -> str | None:
    return state.seats[seat].get("name") if seat < len(state.seats) else None


def _computer(state: State, seat: int) -> bool:
    return seat < len(state.seats) and state.seats[seat].get("kind") == "computer"


def _turn_key(state: State) -> tuple:
    return (state.turn, state.hand_number) if state.phase in MOVE_PHASES and state.turn is not None else (None,)


def _notices(conn, event, before: State, after: State, bound: dict[int, UUID]) -> list[tuple[int, str, dict]]:
    """(seat, kind, data) of the notifications ``event`` causes, one per player bound."""
    out: list[tuple[int, str, dict]] = []
    kind = event.type
    if kind == "match_started":
        if event.data.get("paired"):
            out += [(seat, "match_found", {"opponent": _name(after, 1 - seat)}) for seat in (0, 1)]
        else:
            row = conn.execute(
                "SELECT match_id, offered_seat FROM rematches WHERE rematch_id = %s", (event.match_id,)
            ).fetchone()
            if row is not None and row[1] is not None:
                seat = 1 - row[1]
                if bound.get(seat) != bound.get(row[1]):
                    out.append((seat, "rematch_offered", {"rematch_of": str(row[0]), "opponent": _name(after, row[1])}))
    elif kind == "seat_joined":
        joined = event.data["seat"]
        if bound.get(1 - joined) != bound.get(joined):
            out.append((1 - joined, "invite_accepted", {"opponent": _name(after, joined)}))
    elif kind == "match_ended":
        winner = event.data["winner"]
        for seat in (0, 1):
            result = "aborted" if event.data["reason"] == "aborted" else "draw" if winner is None else "won" if winner == seat else "lost"
            out.append((seat, "match_ended", {
                "result": result, "winner": winner, "reason": event.data["reason"], "scores": list(after.scores),
            }))
    if _turn_key(after) != _turn_key(before) and after.turn is not None and _turn_key(after) != (None,):
        if not _computer(after, 1 - after.turn):
            out.append((after.turn, "your_move", {"hand": after.hand_number, "deadline": _iso(deadline(after))}))
    notices, players = [], set()
    for seat, what, data in out:
        player = bound.get(seat)
        if player is None or (player, what) in players:
            continue  # no player holds the seat, or the player was told (holding both seats)
        players.add((player, what))
        notices.append((seat, what, {"seat": seat, **data}))
    return notices


def _bucket(conn) -> int:
    row = conn.execute("SELECT position FROM projection_cursors WHERE name = %s", (BUCKET,)).fetchone()
    return row[0] if row else 0


def _set_bucket(conn, k: int) -> None:
    conn.execute(
        "INSERT INTO projection_cursors (name, position) VALUES (%s, %s) ON CONFLICT (name) DO UPDATE SET position = excluded.position",
        (BUCKET, k),
    )


SAVE_TURN = (
    "INSERT INTO match_turns (match_id, seat, player_id, deadline, turn_seconds, source)"
    " SELECT * FROM unnest(%s::uuid[], %s::smallint[], %s::uuid[], %s::timestamptz[], %s::integer[], %s::bigint[])"
    " ON CONFLICT (match_id) DO UPDATE SET seat = excluded.seat, player_id = excluded.player_id,"
    " deadline = excluded.deadline, turn_seconds = excluded.turn_seconds, source = excluded.source"
)


def _turn_row(match_id: UUID, state: State, source: int, bound: dict[int, UUID]) -> tuple:
    seat = state.turn if _turn_key(state) != (None,) else None
    player = bound.get(seat) if seat is not None else None
    turn_seconds = state.rules.turn_seconds if state.rules is not None else None
    return (match_id, seat, player, deadline(state) if seat is not None else None, turn_seconds, source)


def _fold(store: EventStore, conn, rows, stored: list[tuple[UUID, int]]) -> int:
    """Fold a batch of events; the new rows' (player, id) go to ``stored``.  A few
    statements a batch, whatever its size: the bindings read at once, the rows written
    at once (pipelined), each match's state from where this process last left it."""
    states: dict[UUID, State] = {}
    last_seq: dict[UUID, int] = {}
    bindings, erased = _bindings(conn, list(dict.fromkeys(row[0] for row in rows)))
    folded = _folded(store)
    turns: dict[UUID, tuple[State, int]] = {}
    inserts: list[tuple] = []
    k = _bucket(conn)
    made = 0
    broken: set[UUID] = set()
    owed: list[Owed] = []
    for event in stored_events(conn, rows):
        if event.match_id in broken or not bindings[event.match_id]:
            # No player holds a seat of the match (a guest's game, seat tokens only): it
            # notifies nobody, and its turns are read by nobody (a player's list of
            # matches, the reminders), so it costs no folding.
            continue
        try:
            before = states.get(event.match_id)
            if before is None:
                known = folded.get(event.match_id)
                if event.seq == 1:
                    before = State()
                elif known is not None and known[0] == event.seq - 1:
                    before = known[1]
                else:
                    before = store.state_at(event.match_id, event.seq - 1, conn=conn)
            after = states[event.match_id] = evolve(before, {"type": event.type, "data": event.data})
            last_seq[event.match_id] = event.seq
            notices = _notices(conn, event, before, after, bindings[event.match_id])
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            # A match whose events the engine cannot fold notifies nobody; it must not
            # stop every other player's feed.
            log.warning("notifications: match %s cannot be folded at seq %d: %r", event.match_id, event.seq, exc)
            broken.add(event.match_id)
            states.pop(event.match_id, None)
            turns.pop(event.match_id, None)
            continue
        if notices:
            k += 1
        for i, (seat, kind, data) in enumerate(notices):
            if (event.match_id, seat) in erased:
                continue  # a deleted player is told nothing (the id stays taken)
            player = bindings[event.match_id][seat]
            nid = (k << BUCKET_BITS) + i
            key = f"{kind}:{event.position}:{player}"
            inserts.append((nid, player, kind, event.match_id, Jsonb(data), event.position, key, event.recorded_at))
            owed.append(Notification(nid, kind, event.match_id, data, event.recorded_at).owed(player))
            stored.append((player, nid))
            made += 1
        if _turn_key(after) != _turn_key(before) or event.seq == 1:
            turns[event.match_id] = (after, event.position)
    if inserts:
        conn.execute(INSERT_MANY, _columns(inserts, 8))
    if turns:
        rows_ = [
            _turn_row(match_id, state, source, {s: p for s, p in bindings[match_id].items() if (match_id, s) not in erased})
            for match_id, (state, source) in turns.items()
        ]
        conn.execute(SAVE_TURN, _columns(rows_, 6))
    for match_id, seq in last_seq.items():
        if match_id not in broken:
            folded.put(match_id, (seq, states[match_id]))
    _set_bucket(conn, k)
    enqueue(conn, owed)  # the webhooks' outbox, in the same transaction: owed once each
    return made


def projection(store: EventStore, stored: list[tuple[UUID, int]]) -> Projection:
    return Projection("notifications", CURSOR, LOCK_KEY, EVENTS, lambda conn, rows: _fold(store, conn, rows, stored))


def announce(store: EventStore, stored: list[tuple[UUID, int]]) -> None:
    """Wake the players' live streams (on every process) for the rows stored."""
    if stored and store.pool is not None:
        store.announcer.announce([payload(player, nid) for player, nid in stored])


def catch_up(store: EventStore, *, wait: bool = True) -> int:
    """Fold the events not yet folded (and announce the new rows); the rows made.
    ``wait``: for another process's catch-up to end first (a reader's), else leave
    the work to it (a folder's)."""
    stored: list[tuple[UUID, int]] = []
    made = projections.catch_up(store, projection(store, stored), BATCH, wait=wait)
    announce(store, stored)
    return made


def catch_up_quietly(store: EventStore, *, wait: bool = True) -> None:
    stored: list[tuple[UUID, int]] = []
    projections.catch_up_quietly(store, projection(store, stored), wait=wait)
    announce(store, stored)


class Folder(projections.Folder):
    """Folds an append's events into the feeds soon after it is stored, in this
    process's folder thread, never in the request (``service.store.projections.Folder``),
    announcing the new rows."""

    def __init__(self, store: EventStore, after: Callable[[], None] | None = None):
        super().__init__(store, projection(store, []), background=True)
        #: Called after each catch-up (the webhooks' deliverer wakes: deliveries may be owed).
        self.after = after

    def _catch_up(self) -> None:
        catch_up_quietly(self.store, wait=False)
        if self.after is not None:
            self.after()


def rebuild(store: EventStore) -> int:
    """Every notification but the reminders, and ``match_turns``, folded again from the
    events alone (with the same ids) since the feeds started; the rows made."""
    with store.transaction() as conn:
        projections.restart(conn, projection(store, []), "notifications WHERE kind <> 'reminder'", "match_turns")
        conn.execute("DELETE FROM projection_cursors WHERE name = %s", (BUCKET,))
        # From where the feeds started (migration 0013: the events before it notify nobody).
        conn.execute(
            "INSERT INTO projection_cursors (name, position) SELECT %s, position FROM projection_cursors WHERE name = %s",
            (CURSOR, START),
        )
    return catch_up(store)


DUE = """
SELECT match_id, seat, player_id, deadline, source FROM match_turns
WHERE player_id IS NOT NULL AND deadline > %(now)s AND deadline <= %(now)s + %(before)s
  AND turn_seconds >= 2 * extract(epoch FROM %(before)s)
ORDER BY deadline, match_id
"""


def sweep(store: EventStore, now: datetime, before: timedelta) -> int:
    """Insert the reminders due at ``now`` (a move whose deadline is at most ``before``
    away, under a clock of at least twice that); each turn's once.  The number made."""
    catch_up_quietly(store)  # the turns as the events stored so far leave them
    stored: list[tuple[UUID, int]] = []
    owed: list[Owed] = []
    with store.transaction() as conn:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        k = _bucket(conn)
        low, high = (k << BUCKET_BITS) + REMINDER_SLOT, (k + 1) << BUCKET_BITS
        last = conn.execute("SELECT max(id) FROM notifications WHERE id >= %s AND id < %s", (low, high)).fetchone()
        nid = last[0] + 1 if last and last[0] is not None else low
        for match_id, seat, player, due, source in conn.execute(DUE, {"now": now, "before": before}).fetchall():
            data = {"seat": seat, "deadline": _iso(due)}
            key = f"reminder:{match_id}:{source}"
            row = conn.execute(INSERT, (nid, player, "reminder", match_id, Jsonb(data), None, key, now)).fetchone()
            if row is not None:
                stored.append((player, nid))
                owed.append(Notification(nid, "reminder", match_id, data, now).owed(player))
                nid += 1
        enqueue(conn, owed)
    announce(store, stored)
    return len(stored)


def sweep_periodically(store: EventStore, every: float, before: timedelta, clock: Callable[[], datetime]) -> threading.Event:
    """``sweep`` in a daemon thread every ``every`` seconds; set the event to stop."""

    def job() -> None:
        sweep(store, clock(), before)

    return run_periodically("reminder-sweep", every, job)


FEED = """
SELECT id, kind, match_id, data, created_at FROM notifications
WHERE player_id = %s AND id > %s ORDER BY id LIMIT %s
"""


def read(store: EventStore, player_id: UUID, after: int, limit: int, conn=None) -> list[Notification]:
    """The player's notifications with ids above ``after``, in order, at most ``limit``."""
    if conn is not None:
        return [Notification(*row) for row in conn.execute(FEED, (player_id, after, limit)).fetchall()]
    with store.connection() as c:
        return read(store, player_id, after, limit, c)

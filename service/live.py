"""Live streams: this process's followers of each match, woken by one LISTEN connection.

How a stream works (``GET /matches/{id}/stream``: ``service.api.streams``, ``service.application.streams``):

1. The request is admitted by ``LiveHub.open`` -- within the limits of streams per
   token, per client address and per process, or refused with ``TooManyStreams`` --
   and subscribes to its match's ``Channel`` *before* reading anything, so that no
   event stored afterwards can go unnoticed.
2. It sends the events after the client's position (``after`` or Last-Event-ID), read
   from the database in pages of ``PAGE`` events: a long backlog goes out in bounded
   pieces, never as one read.
3. Then it waits.  The process's one ``Listener`` (service.store.notifications)
   hears every append announced by any process, and the match's channel, if this
   process has one, fetches the new events once -- one query for all of this
   process's followers of the match, however many -- and keeps the last
   ``buffer_events`` of them, each rendered once per seat.  Each follower takes what
   follows its position from there.  A heartbeat comment goes out every
   ``heartbeat`` seconds of quiet; the stream ends after ``wait`` seconds or when the
   match ends, and the client reconnects with Last-Event-ID.

Every event has its seq as its id, and the events are read from the database, so a
client resumes where it was on any instance, also after a restart.

Memory is bounded per follower: a follower that falls so far behind that the events
after its position have left the channel's buffer (it reads slower than the match is
played) is disconnected -- ``Lagged`` -- and resumes from the database with
Last-Event-ID; one whose socket takes no data for ``send_timeout`` seconds is
disconnected by the server; and the socket's send buffer is kept small.  Nothing a
follower does grows the process's memory beyond that.

Who is there: a seat is *connected* while it has a live stream open on any process.
Each hub records its followed seats in the database (``live_followers``: a row per
match, seat and process, written when the process's first stream of that seat opens,
deleted when its last closes, refreshed every ``PRESENCE_REFRESH`` seconds) and
``Presence`` reads them for the views, ignoring rows older than ``PRESENCE_TIMEOUT``
(a process that died stops refreshing) and keeping each answer ``PRESENCE_CACHE``
seconds.

Under ``gin-rummy serve`` each request is a greenlet (service.gunicorn_conf), so a
waiting stream holds no thread; the same code runs with real threads elsewhere (the
tests' servers), since gevent patches ``threading``.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID

import psycopg
from psycopg_pool import PoolClosed

from service.lru import LRU
from service.store import EventStore, StoredEvent, online
from service.store.database import conninfo_of
from service.store.notifications import Listener

log = logging.getLogger(__name__)

#: What a channel follows: its items (each with a ``seq`` and a ``type``) after a seq, at most so many.
Reader = Callable[[int, int], list[Any]]
#: Events one database read of a stream's backlog returns at most.
PAGE = 500
#: Seconds between a process's refreshes of its followers' rows; a row older than
#: PRESENCE_TIMEOUT is a process's that died; a view's answer is kept PRESENCE_CACHE s.
PRESENCE_REFRESH = 15.0
PRESENCE_TIMEOUT = 45.0
PRESENCE_CACHE = 2.0


@dataclass(frozen=True)
class StreamLimits:
    """Most streams open at once in this process: per token (a seat; the operator's
    token is not counted), per client address, and in all.  None: no limit."""

    per_token: int | None = 4
    per_address: int | None = 100
    per_process: int | None = 4000


class TooManyStreams(Exception):
    def __init__(self, scope: str, limit: int):
        super().__init__(f"at most {limit} live stream{'s' if limit != 1 else ''} per {scope}")
        self.scope = scope
        self.limit = limit


class Lagged(Exception):
    """The follower fell behind what the channel keeps."""


class Closing(Exception):
    """The process is shutting down."""


class Channel:
    """One match's followers in this process, and its recent events.

    ``recent`` holds every item after ``base`` up to ``fetched`` (it may be empty: then
    ``base`` is ``fetched``); items up to ``notified`` are known to exist.  A match's
    seqs are consecutive, a feed's ids are not: ``base`` says where the kept run starts.  ``fetched`` is None until a follower has
    read the database once (a new channel fetches nothing on its own: a follower
    with a backlog reads it, and says where it stopped with ``seen``)."""

    def __init__(self, hub: LiveHub, match_id: UUID, read: Reader | None = None):
        self.hub = hub
        #: The match followed (or, for a player's feed, the player).
        self.match_id = match_id
        #: Reads its items after a seq, at most so many (a match's events by default).
        self.read: Reader = read or (lambda after, limit: hub.reader.read(match_id, after=after, limit=limit))
        self.followers = 0
        self.by_seat = [0, 0]  # followers of each seat (the operator is neither)
        self.notified = 0
        self.fetched: int | None = None
        self.base = 0
        self.stale = False  # announcements may have been missed: look at the database
        self.recent: deque[StoredEvent] = deque(maxlen=hub.buffer_events)
        self._frames: dict[tuple[int, int | None], bytes] = {}
        self.changed = threading.Condition(threading.Lock())
        self._fetching = threading.Lock()

    # -- news ------------------------------------------------------------------------

    def announce(self, seq: int) -> None:
        with self.changed:
            if seq > self.notified:
                self.notified = seq
            self.changed.notify_all()

    def recheck(self) -> None:
        with self.changed:
            self.stale = True
            self.changed.notify_all()

    def wake(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def wait(self, sub: Subscription, after: int, timeout: float) -> bool:
        """Wait until there may be events after ``after``, or the follower or the process
        is going (True), or ``timeout`` passes."""
        with self.changed:
            return self.changed.wait_for(
                lambda: self.notified > after or self.stale or self.hub.closing or sub.gone, timeout
            )

    def seen(self, seq: int) -> None:
        """A follower read the database up to its end, ``seq``."""
        with self.changed:
            self.notified = max(self.notified, seq)
            if self.fetched is None or (not self.recent and seq > self.fetched):
                self.fetched = self.base = seq

    # -- events ----------------------------------------------------------------------

    def after(self, seq: int) -> list[StoredEvent] | None:
        """The kept events after ``seq`` (fetching the announced ones first), or None
        when the channel cannot tell (read the database instead)."""
        if self.fetched is None:
            return None
        if self.stale or self.fetched < self.notified:
            self._fetch()
        with self.changed:
            if seq >= self.fetched:
                return []
            if seq < self.base:
                return None
            return [e for e in self.recent if e.seq > seq]

    def _fetch(self) -> None:
        # One follower reads; the others wait for it, then find the events kept.
        with self._fetching:
            with self.changed:
                start, stale = self.fetched, self.stale
                if start is None or (start >= self.notified and not stale):
                    return
                self.stale = False
            events = self.read(start, self.hub.buffer_events)
            with self.changed:
                overflow = len(self.recent) + len(events) - self.hub.buffer_events
                if overflow > 0:  # the items before the kept run leave: it starts after the last of them
                    self.base = (list(self.recent) + events)[overflow - 1].seq
                self.recent.extend(events)
                if events:
                    self.fetched = events[-1].seq
                    self.notified = max(self.notified, self.fetched)
                assert self.fetched is not None, "it was not None at start, and is never None again"
                first = self.recent[0].seq if self.recent else self.fetched + 1
                for key in [k for k in self._frames if k[0] < first]:
                    del self._frames[key]
                self.changed.notify_all()

    def forget(self) -> None:
        """Drop the kept events (a player of the match was erased: they name them);
        followers read the database again."""
        with self.changed:
            self.recent.clear()
            self._frames.clear()
            self.fetched = None
            self.base = 0
            self.changed.notify_all()

    def frame(self, event: Any, seat: int | None, render: Callable[[Any, int | None], bytes]) -> bytes:
        """The event as sent to ``seat``; rendered once per seat while the channel keeps it."""
        recent = self.recent
        if not recent or not recent[0].seq <= event.seq <= recent[-1].seq:
            return render(event, seat)  # a backlog event: not kept
        key = (event.seq, seat)
        found = self._frames.get(key)
        if found is None:
            found = self._frames[key] = render(event, seat)
        return found


class Subscription:
    """One open stream, admitted by :meth:`LiveHub.open`; close it when the stream ends."""

    def __init__(self, hub: LiveHub, channel: Channel, token_key: str | None, address: str | None, seat: int | None):
        self.hub = hub
        self.channel = channel
        self.token_key = token_key
        self.address = address
        self.seat = seat
        self.closed = False
        self.gone = False  # the client hung up

    def hung_up(self) -> None:
        self.gone = True
        self.channel.wake()

    def close(self) -> None:
        self.hub._release(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class LiveHub:
    """The live streams of one process (one per app)."""

    def __init__(
        self,
        reader: EventStore,
        *,
        limits: StreamLimits = StreamLimits(),
        buffer_events: int = 256,
        conninfo: str | None = None,
    ):
        # ``reader``: the store the streams read from (a pool of its own in a server, so
        # that streams catching up never take the connections actions need).
        self.reader = reader
        self.limits = limits
        self.buffer_events = buffer_events
        self.conninfo = conninfo or conninfo_of(reader.pool)
        self.closing = False
        self._channels: dict[UUID, Channel] = {}
        self._by_token: dict[str, int] = {}
        self._by_address: dict[str, int] = {}
        self.open_streams = 0
        self._lock = threading.Lock()
        self._listener: Listener | None = None
        self._refresher: threading.Thread | None = None
        #: Names this process in ``live_followers``.
        self.process = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"

    # -- admission -------------------------------------------------------------------

    def open(
        self, match_id: UUID, *, token_key: str | None, address: str | None, seat: int | None = None, read: Reader | None = None,
    ) -> Subscription:
        """Admit a stream of ``match_id`` (``token_key`` None: not counted per token) for
        ``seat`` (None: the operator), or raise TooManyStreams (or Closing).  ``read``:
        what the channel follows instead of the match's events (a player's feed, keyed
        by the player's id: its items have a ``seq`` and a ``type`` as events do)."""
        limits = self.limits
        with self._lock:
            if self.closing:
                raise Closing()
            if limits.per_process is not None and self.open_streams >= limits.per_process:
                raise TooManyStreams("process", limits.per_process)
            if address is not None and limits.per_address is not None and self._by_address.get(address, 0) >= limits.per_address:
                raise TooManyStreams("client address", limits.per_address)
            if token_key is not None and limits.per_token is not None and self._by_token.get(token_key, 0) >= limits.per_token:
                raise TooManyStreams("token", limits.per_token)
            self.open_streams += 1
            if address is not None:
                self._by_address[address] = self._by_address.get(address, 0) + 1
            if token_key is not None:
                self._by_token[token_key] = self._by_token.get(token_key, 0) + 1
            channel = self._channels.get(match_id)
            if channel is None:
                channel = self._channels[match_id] = Channel(self, match_id, read)
            channel.followers += 1
            first_of_seat = seat is not None and channel.by_seat[seat] == 0
            if seat is not None:
                channel.by_seat[seat] += 1
            if self._listener is None:
                self._listener = Listener(self.conninfo, self._announced, self._reconnected).start()
        if first_of_seat:
            assert seat is not None, "first_of_seat implies a seat"
            self._presence(online.follow, match_id, seat)
        return Subscription(self, channel, token_key, address, seat)

    def _release(self, sub: Subscription) -> None:
        with self._lock:
            if sub.closed:
                return
            sub.closed = True
            self.open_streams -= 1
            for counts, key in ((self._by_address, sub.address), (self._by_token, sub.token_key)):
                if key is not None:
                    counts[key] -= 1
                    if not counts[key]:
                        del counts[key]
            channel = sub.channel
            channel.followers -= 1
            last_of_seat = False
            if sub.seat is not None:
                channel.by_seat[sub.seat] -= 1
                last_of_seat = channel.by_seat[sub.seat] == 0
            if not channel.followers and self._channels.get(channel.match_id) is channel:
                del self._channels[channel.match_id]
        if last_of_seat:
            assert sub.seat is not None, "last_of_seat implies a seat"
            self._presence(online.unfollow, channel.match_id, sub.seat)

    def _presence(self, change, match_id: UUID, seat: int) -> None:
        """Record (or withdraw) this process's follower of a seat; a failure only makes
        the seat look away (or there) until the next refresh."""
        try:
            with self.reader.connection() as conn:
                change(conn, match_id, seat, self.process)
        except PoolClosed:
            pass  # the process is shutting down: its rows age out
        except psycopg.Error as exc:
            log.warning("could not record who follows match %s: %s", match_id, type(exc).__name__)
        if self._refresher is None:
            self._refresher = threading.Thread(target=self._refresh, name="gin-rummy-presence", daemon=True)
            self._refresher.start()

    def _refresh(self) -> None:
        while not self.closing:
            time.sleep(PRESENCE_REFRESH)
            if self.open_streams:
                try:
                    with self.reader.connection() as conn:
                        online.refresh_follows(conn, self.process)
                except PoolClosed:
                    return  # the process is shutting down: its rows age out
                except psycopg.Error as exc:
                    log.warning("could not refresh who follows which match: %s", type(exc).__name__)

    # -- news from the listener ------------------------------------------------------

    def _announced(self, match_id: UUID, seq: int) -> None:
        channel = self._channels.get(match_id)
        if channel is not None:
            channel.announce(seq)

    def forget(self, match_ids: set[UUID] | None) -> None:
        """Drop what the channels of ``match_ids`` keep (None: of every match)."""
        for match_id, channel in list(self._channels.items()):
            if match_ids is None or match_id in match_ids:
                channel.forget()

    def _reconnected(self) -> None:
        # Announcements made while the listener was away are lost: every channel
        # looks at the database again.
        for channel in list(self._channels.values()):
            channel.recheck()

    # -- shutdown --------------------------------------------------------------------

    def shutdown(self) -> None:
        """End every stream (their clients reconnect, to another instance)."""
        self.closing = True
        for channel in list(self._channels.values()):
            channel.wake()
        if self._listener is not None:
            self._listener.stop()


class Presence:
    """The seats of a match that follow it live, on any process (``live_followers``),
    each answer kept a moment: views ask on every read."""

    def __init__(self, cache_seconds: float = PRESENCE_CACHE, clock: Callable[[], float] = time.monotonic):
        self.cache_seconds = cache_seconds
        self.clock = clock
        self._known: LRU[UUID, tuple[float, frozenset[int]]] = LRU(10_000)

    def seats(self, conn, match_id: UUID) -> frozenset[int]:
        now = self.clock()
        known = self._known.get(match_id)
        if known is not None and now - known[0] < self.cache_seconds:
            return known[1]
        seats = online.connected_seats(conn, match_id, timedelta(seconds=PRESENCE_TIMEOUT))
        self._known.put(match_id, (now, seats))
        return seats


def follow(
    sub: Subscription,
    after: int,
    *,
    seconds: float,
    heartbeat: float,
    render: Callable[[Any, int | None], bytes],
    seat: int | None,
    clock: Callable[[], float] = time.monotonic,
    ends: Callable[[Any], bool] = lambda event: event.type == "match_ended",
):
    """The stream's chunks (bytes): events after ``after`` as Server-Sent Events, then
    each new one, with heartbeats, for ``seconds`` or until the match ends (``ends``:
    the item after which the stream closes).  Raises Lagged when the follower fell
    behind what its channel keeps."""
    channel = sub.channel
    deadline = clock() + seconds
    live = False  # caught up once: from then on, falling behind the buffer is lagging
    yield b"retry: 1000\n\n"
    while True:
        if sub.hub.closing or sub.gone:
            return
        events = channel.after(after)
        if events is None:
            if live:
                raise Lagged()
            events = channel.read(after, PAGE)
            if len(events) < PAGE:
                channel.seen(events[-1].seq if events else after)
        if events:
            yield b"".join(channel.frame(e, seat, render) for e in events)
            after = events[-1].seq
            if ends(events[-1]):
                return
            if len(events) == PAGE:
                continue
        live = True
        remaining = deadline - clock()
        if remaining <= 0:
            return
        if not channel.wait(sub, after, min(heartbeat, remaining)):
            if deadline - clock() <= 0:
                return
            yield b": keep-alive\n\n"

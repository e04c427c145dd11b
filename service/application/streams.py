"""Live streams: a seat's of its match, and a player's of its notifications (every
match of the player in one), each admitted within the limits, then followed.

How a stream works is told in ``service.live``; here the caller is authorised, the
match found, and the stream admitted by the process's hub (at most so many per seat,
per client address and per process: ``RateLimited`` ``too_many_streams`` beyond them).
The events it sends are the seat's, rendered by the caller's ``render``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from service import feed
from service.feed import Notification
from service.live import Closing, LiveHub, Subscription, TooManyStreams, follow
from service.store import EventStore, StoredEvent

from .callers import Callers
from .errors import RateLimited, Unavailable
from .hooks import Hooks
from .unit_of_work import UnitOfWork

#: Seconds a client refused for having too many streams is asked to wait.
STREAM_RETRY_AFTER = 5


@dataclass
class LiveStream:
    subscription: Subscription
    #: The stream's chunks: the events after the client's position, then each new one.
    chunks: Iterator[bytes]


class Streams:
    def __init__(self, store: EventStore, callers: Callers, hub: LiveHub | None, hooks: Hooks, heartbeat: float):
        self.store = store
        self.callers = callers
        self.hub = hub
        self.hooks = hooks
        self.heartbeat = heartbeat

    def open(
        self, token: str, match_id: uuid.UUID, asked_seat: str | None, *, after: int, seconds: float, address: str | None,
        render: Callable[[StoredEvent, int | None], bytes],
    ) -> LiveStream:
        with UnitOfWork(self.store) as uow:
            caller = self.callers.for_match(uow, token, match_id, asked_seat)
            self.store.summary(match_id, conn=uow.conn)  # MatchNotFound
        token_key = None if caller.is_operator else f"{match_id}:{caller.seat}"
        sub = self._admit(match_id, token_key, address, caller.seat)
        chunks = follow(sub, after, seconds=seconds, heartbeat=self.heartbeat, render=render, seat=caller.seat)
        return LiveStream(sub, chunks)

    def open_feed(
        self, token: str, *, after: int, seconds: float, address: str | None, render: Callable[[Notification, int | None], bytes],
    ) -> LiveStream:
        """The calling player's notifications after ``after``, then each new one: one
        stream for every match of the player (counted per player token)."""
        with UnitOfWork(self.store) as uow:
            player_id = self.callers.player(uow, token)
        feed.catch_up_quietly(self.store)
        hub = self.hub
        reader = hub.reader if hub is not None else self.store
        sub = self._admit(player_id, f"player:{player_id}", address, None, lambda after, limit: feed.read(reader, player_id, after, limit))
        chunks = follow(sub, after, seconds=seconds, heartbeat=self.heartbeat, render=render, seat=None, ends=lambda _: False)
        return LiveStream(sub, chunks)

    def _admit(self, key: uuid.UUID, token_key: str | None, address: str | None, seat: int | None, read=None) -> Subscription:
        """A place in the hub, within the limits (RateLimited ``too_many_streams``)."""
        if self.hub is None:
            raise Unavailable("this instance serves no live streams", code="shutting_down", retry_after=1)
        try:
            return self.hub.open(key, token_key=token_key, address=address, seat=seat, read=read)
        except TooManyStreams as exc:
            self.hooks.stream_refused(exc.scope)
            raise RateLimited(
                f"{exc} are open at once; close one, or retry later", code="too_many_streams", retry_after=STREAM_RETRY_AFTER,
            ) from None
        except Closing:
            raise Unavailable("this instance is shutting down; retry", code="shutting_down", retry_after=1) from None

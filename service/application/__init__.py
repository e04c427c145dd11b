"""The application layer: the one place where each use case happens.

A route of the REST API (``service.api``) or a ``gin-rummy`` command (``service.cli``)
parses its input, calls one use case here, and encodes what it returns; nothing below
this layer knows of requests, and nothing here knows of HTTP.  Each use case opens one
``UnitOfWork`` (its reads, then its writes all at once), authorises its caller
(``callers``), and answers in the shapes ``views`` builds.  Its refusals are
``ApplicationError``\\ s (``errors``), beside the engine's rule errors and the store's
``MatchNotFound`` / ``ConcurrencyError``.

- ``matches``: create, join, play again, the lobby, the caller's matches
- ``actions``: act (idempotent retries included), the view, the events feed
- ``streams``: the live stream of a match
- ``coaching``: hints and analyses
- ``costs``: limits by cost: creations per address and player, CPU per address and caller
- ``records``: export, import (written by the code that writes every new match), past
  states, hands, the audit
- ``matchmaking``: tickets, and the pairing of two that fit into one match
- ``players``: guests, the calling player, its notifications, profiles, rating
  histories, the leaderboard
- ``personal``: everything held about the calling player, in one download
- ``erasure``: a player deletes themselves (their name and link erased, the events kept)
- ``webhooks``: the operator's webhook endpoints, their delivery log, and the
  process's deliverer
- ``play``: the deals and the computer's turns between a person's moves
- ``tokens``: every token's format, hash and parse
- ``reads``: where the heavy reads are made (a standby once caught up, else the primary)

``Application.build(settings)`` composes them on a store (and, serving, on a hub of
live streams); ``create_app`` and the commands each build one.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TypedDict

from service import feed, ratings
from service.live import LiveHub, Presence, StreamLimits
from service.records.signing import Signer
from service.settings import Settings
from service.store import EventStore, connect, database_url
from service.store import erasure as erasures
from service.store.database import Probe, conninfo_of
from service.store.idempotency import purge_periodically
from service.store.replica import Replica

from .actions import Actions
from .callers import Callers
from .coaching import Coaching
from .costs import Costs
from .erasure import Erasure
from .errors import ApplicationError
from .hooks import Hooks
from .matches import MatchService
from .matchmaking import Matchmaking, pair_periodically
from .personal import PersonalData
from .play import Play, system_clock
from .players import Players
from .reads import Reads
from .records import Records
from .retries import Retries
from .signin import verifier_of
from .streams import Streams
from .views import Views
from .webhooks import Webhooks

log = logging.getLogger(__name__)


class _Options(TypedDict, total=False):
    """What ``build`` passes on to the constructor (a clock only when given one)."""

    hooks: Hooks | None
    clock: Callable[[], datetime]


class Application:
    def __init__(
        self,
        settings: Settings,
        store: EventStore,
        *,
        reader: EventStore | None = None,
        replica: Replica | None = None,
        hooks: Hooks | None = None,
        clock: Callable[[], datetime] = system_clock,
        deal_rng: random.Random | None = None,
        owned_pools: tuple = (),
    ):
        self.settings = settings
        self.store = store
        hooks = hooks or Hooks()
        reader = reader or store
        limits = StreamLimits(settings.streams_per_token, settings.streams_per_address, settings.streams_per_process)
        self.hub = LiveHub(reader, limits=limits, buffer_events=settings.stream_buffer_events) if store.pool else None
        self.probe = Probe(conninfo_of(store.pool)) if store.pool else None
        self.presence = Presence(cache_seconds=settings.presence_cache_seconds)
        self.signer = Signer(
            store, key_file=settings.signing_key_file, signer=settings.public_url, trusted=settings.trusted_jwks
        )
        self.callers = Callers(store, settings.operator_token, verifier_of(settings))
        self.views = Views(store, self.presence, clock)
        self.webhooks = Webhooks(store, self.callers, settings, hooks)
        self.play = Play(store, hooks, clock, deal_rng, feed.Folder(store, after=self.webhooks.deliverer.wake))
        self.costs = Costs(store, settings)
        retries = Retries(settings.retry_secret)
        #: Where the heavy reads are made: a standby of ``replica`` once caught up, else the primary.
        self.reads = Reads(store, replica)
        self.matches = MatchService(store, self.callers, self.views, self.play, retries, self.costs, self.reads)
        self.matchmaking = Matchmaking(
            store, self.callers, self.matches, retries, clock, poll_seconds=settings.matchmaking_poll_seconds,
            rated_players=settings.rated_players,
        )
        self.actions = Actions(
            store, self.callers, self.views, self.play, ratings.Folder(store, settings.rated_players), self.reads
        )
        self.streams = Streams(store, self.callers, self.hub, hooks, settings.stream_heartbeat_seconds)
        self.coaching = Coaching(store, self.callers, self.play, self.costs, self.reads)
        self.records = Records(
            store, self.callers, self.views, self.matches, self.play, self.signer, self.costs, self.reads
        )
        self.players = Players(
            store, self.callers, self.costs, settings.rated_players, settings.leaderboard_min_opponents,
            clock=clock, reminder_before=settings.reminder_before_seconds, reads=self.reads,
        )
        self.personal = PersonalData(
            store, self.callers, self.players, self.records, timedelta(seconds=settings.matchmaking_poll_seconds), clock
        )
        self.erasure = Erasure(store, self.callers, self.views, self.hub, settings.rated_players, clock)
        #: Pools this application opened itself (closed by ``close``; a given store is the caller's).
        self.owned_pools = owned_pools
        self._pools_checked = 0.0
        #: Set to stop the background rounds of pairing (started by ``build`` on pools of its own).
        self.matchmaking_rounds: threading.Event | None = None
        #: Stops this process's webhook deliveries (started by ``build`` on pools of its own).
        self.stop_webhooks: Callable[[], None] | None = None
        #: Stops listening for erasures made by other processes (``build``, on pools of its own).
        self.stop_listening: threading.Event | None = None

    @classmethod
    def build(
        cls, settings: Settings, *, store: EventStore | None = None, hooks: Hooks | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> Application:
        """The application on ``store`` (and the standby of the settings, if any), or on
        the database of the settings (then with pools of its own, the hourly purge of old Idempotency-Key answers, the rounds of
        pairing, the reminders' sweep, the endpoints of ``GIN_RUMMY_WEBHOOKS`` and the
        webhooks' deliveries)."""
        options: _Options = {"hooks": hooks}
        if clock is not None:
            options["clock"] = clock
        if store is not None:
            replica = _replica(settings, store, hooks)
            return cls(settings, store, replica=replica, owned_pools=(replica.pool,) if replica else (), **options)
        url = database_url(settings)
        store = EventStore(connect(url))
        # Streams read through a small pool of their own: a crowd of them catching up
        # never takes the connections that actions need.
        reader = EventStore(connect(url, min_size=1, max_size=4), cache_size=0)
        replica = _replica(settings, store, hooks)
        if settings.idempotency_purge_seconds:
            purge_periodically(store.pool, every=float(settings.idempotency_purge_seconds))
        pools = (store.pool, reader.pool, *([replica.pool] if replica else []))
        application = cls(settings, store, reader=reader, replica=replica, owned_pools=pools, **options)
        if settings.matchmaking_round_seconds:
            application.matchmaking_rounds = pair_periodically(application.matchmaking, float(settings.matchmaking_round_seconds))
        if settings.reminder_sweep_seconds:
            application.players.sweep_periodically(float(settings.reminder_sweep_seconds))
        if settings.webhooks is not None:
            application.webhooks.sync(settings.webhooks)
        application.stop_listening = erasures.listen(conninfo_of(store.pool), application.erasure.forget)
        if settings.webhook_senders and settings.webhook_poll_seconds > 0:
            application.stop_webhooks = application.webhooks.start()
        return application

    def database_lost(self) -> None:
        """A request found the database out of reach (a restart, or a failover to another
        node): have the pools test their idle connections now, in the background, so
        that those to the lost server are replaced before other requests take them."""
        now = time.monotonic()
        if now - self._pools_checked < 1.0:
            return
        self._pools_checked = now
        for pool in self.owned_pools:
            if pool is not None:
                threading.Thread(target=_check_pool, args=(pool,), daemon=True, name="pool-check").start()

    def end_streams(self) -> None:
        """End every live stream (their clients reconnect, to another instance)."""
        if self.hub is not None:
            self.hub.shutdown()

    def close(self) -> None:
        """End the streams and close the pools the application opened (a worker's exit)."""
        self.end_streams()
        if self.matchmaking_rounds is not None:
            self.matchmaking_rounds.set()
        if self.stop_webhooks is not None:
            self.stop_webhooks()
        if self.stop_listening is not None:
            self.stop_listening.set()
        for pool in self.owned_pools:
            pool.close()


__all__ = ["Application", "ApplicationError", "Hooks"]


def _replica(settings: Settings, store: EventStore, hooks: Hooks | None) -> Replica | None:
    """The standby of ``GIN_RUMMY_REPLICA_DATABASE_URL`` for ``store``'s heavy reads (unset: None)."""
    if not settings.replica_database_url or store.pool is None:
        return None
    return Replica(
        connect(settings.replica_database_url), store, wait_seconds=settings.replica_wait_seconds,
        report=(hooks or Hooks()).replica_read,
    )


def _check_pool(pool) -> None:
    try:
        pool.check()
    except Exception as exc:  # the pool is closing, or the server is still away
        log.info("pool check: %s", type(exc).__name__)

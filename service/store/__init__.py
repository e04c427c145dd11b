"""The event store on PostgreSQL: every event of every match, the only source of truth.

Connecting::

    pool = connect(database_url(settings))  # DATABASE_URL, or the embedded server (database.py)
    store = EventStore(pool)

Writing (``events`` are ``service.engine.Event`` or ``{"type", "data"}`` dicts)::

    store.append(match_id, expected_version, events, actor=None, recorded_at=None,
                 state=None, idempotency=None, conn=None) -> list[StoredEvent]

stores them as seq ``expected_version + 1 ...`` (with the database's time, or the
``recorded_at`` times given), writes the match summary (when the batch changes it), a
snapshot (when it deals a hand) and the answer to the request that caused them
(``idempotency``, a ``NewIdempotencyRecord``) in the same statement, or raises
``ConcurrencyError`` when the match is not at ``expected_version`` (someone else
appended first) or the request's key was answered already.  An action needs no
transaction: load, then append with its answer.  Nothing ever updates or deletes an
event; the database refuses it too.

One unit of work, for a request that appends and also writes secrets (a new match and
its seat tokens)::

    with store.transaction() as conn:
        store.append(match_id, 0, events, actor="system", conn=conn)
        save_seat_tokens(conn, match_id, {0: token_hash})

Reading::

    store.load(match_id) -> State                       # MatchNotFound if no events
    store.read(match_id, after=0) -> list[StoredEvent]  # data upcast to the current version
    store.read_all(after=0, limit=1000) -> Page(events, after)  # all matches, global order
    store.summary(match_id) -> MatchSummary             # MatchNotFound
    store.summaries(status=None, limit=50, offset=0, newest_first=True) -> list[MatchSummary]
    store.rebuild_projections() -> int                  # read models from events alone

``read_all`` follows every match in one global order that never skips an event that
commits late (events.py says how); ``Page.after`` is the cursor for the next call.

``find_idempotency_record(conn, match_id, scope, key)``, ``seat_of_token(conn, match_id,
token_hash)`` read the security tables.  Schema: ``migrate.upgrade(url)``; the event
schema versions and their upcasters: upcasting.py.
"""

from .database import connect, data_dir, database_url
from .errors import ConcurrencyError, MatchNotFound, StoreError
from .event_store import SNAPSHOT_FORMAT, EventStore, Page
from .events import StoredEvent
from .idempotency import (
    IdempotencyRecord,
    NewIdempotencyRecord,
    find_idempotency_record,
    save_idempotency_record,
    service_secret,
)
from .seat_tokens import save_seat_token_once, save_seat_tokens, seat_of_token
from .summaries import MatchSummary
from .upcasting import CURRENT_VERSIONS, UPCASTERS, upcast

__all__ = [
    "CURRENT_VERSIONS",
    "SNAPSHOT_FORMAT",
    "UPCASTERS",
    "ConcurrencyError",
    "EventStore",
    "IdempotencyRecord",
    "MatchNotFound",
    "MatchSummary",
    "NewIdempotencyRecord",
    "Page",
    "StoreError",
    "StoredEvent",
    "connect",
    "data_dir",
    "database_url",
    "find_idempotency_record",
    "save_idempotency_record",
    "service_secret",
    "save_seat_token_once",
    "save_seat_tokens",
    "seat_of_token",
    "upcast",
]

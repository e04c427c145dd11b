"""What the commands share: the checked database, a store on it, the application, ids.

A command that needs the database gets it from ``database()`` (its URL, checked: see
``service.store.readiness``) or ``open_store()`` (whose pool ``main`` closes at the end),
so that a database that cannot be reached or is not migrated is one line saying what
to do, never a traceback.
"""

from __future__ import annotations

import sys
import uuid

from psycopg_pool import ConnectionPool

from service.application import Application
from service.settings import Settings
from service.store import EventStore, connect, database_url
from service.store.readiness import check_connection, ensure_ready

#: The pools ``open_store`` opened, closed by ``main`` when the command ends (a pool left
#: to the garbage collector at exit can fail to join its own worker threads).
open_pools: list = []


def database(settings: Settings, *, migrate: bool = True, upgrade_behind: bool = False) -> str:
    """The database's URL (DATABASE_URL, or the embedded server's, started if need be),
    checked first: one that cannot be reached raises NotReady, whose one line (printed by
    ``main``) says why and what to do.  With ``migrate``, a database without the schema yet
    (a fresh ``createdb``, the embedded one's first use) is migrated, as ``serve`` does,
    and one behind this version's schema is a NotReady saying to run ``gin-rummy db upgrade``
    (or is migrated too, with ``upgrade_behind``)."""
    configured = bool(settings.database_url)
    url = database_url(settings)
    if not migrate:
        check_connection(url, configured=configured)
    elif done := ensure_ready(url, configured=configured, upgrade_behind=upgrade_behind):
        print(f"gin-rummy: {done}", file=sys.stderr)
    return url


def pool_of(settings: Settings, max_size: int = 1) -> ConnectionPool:
    """A pool on the checked database (``database``), for the caller to close."""
    return connect(database(settings), max_size=max_size)


def open_store(settings: Settings, max_size: int = 2) -> EventStore:
    """A store on the checked database (``database``), its pool closed at the command's end."""
    pool = pool_of(settings, max_size)
    open_pools.append(pool)
    return EventStore(pool)


def application(settings: Settings) -> Application:
    """The application on a store of the checked database (as the service is configured:
    the signing key, the public URL, the trusted key sets)."""
    return Application.build(settings, store=open_store(settings))


def match_id(raw: str) -> uuid.UUID:
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise SystemExit(f"gin-rummy: {raw!r} is not a match id") from None

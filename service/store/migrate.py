"""The schema, by alembic: upgrade and downgrade the database of a URL.

There is no ``alembic.ini``: the configuration is built here, with the scripts in the
repository's ``migrations/`` folder (next to the ``service`` package, which is
installed editable).  The revisions are plain SQL (``op.execute``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config

import service

from .database import create_database, drop_database, with_database

MIGRATIONS = Path(service.__file__).resolve().parent.parent / "migrations"


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    # Passed as an attribute, not a main option: the option parser would read the
    # '%' of a percent-encoded password as interpolation.
    config.attributes["url"] = url
    return config


def upgrade(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    command.downgrade(alembic_config(url), revision)


def libpq_url(url: str) -> str:
    """The URL as libpq reads it (a SQLAlchemy-style ``postgresql+psycopg://`` too)."""
    scheme, sep, rest = url.partition("://")
    if sep and scheme.startswith("postgresql+"):
        return f"postgresql://{rest}"
    return url


@contextmanager
def scratch_database(admin_url: str, prefix: str) -> Iterator[str]:
    """A new database on the server of ``admin_url`` (named ``prefix`` and a random
    suffix), migrated to the latest revision; its URL, and the database is dropped at
    the end.  For benchmarks and tools that must not touch a real database."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    create_database(admin_url, name)
    try:
        url = with_database(admin_url, name)
        upgrade(url)
        yield url
    finally:
        drop_database(admin_url, name)

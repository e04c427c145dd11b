"""The schema, by alembic: upgrade and downgrade the database of a URL.

There is no ``alembic.ini``: the configuration is built here, with the scripts in the
repository's ``migrations/`` folder (next to the ``service`` package, which is
installed editable).  The revisions are plain SQL (``op.execute``).
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

import service

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


def sqlalchemy_url(url: str) -> str:
    """The same URL for SQLAlchemy with the psycopg 3 driver."""
    scheme, sep, rest = url.partition("://")
    if scheme in ("postgres", "postgresql"):
        return f"postgresql+psycopg://{rest}"
    return url

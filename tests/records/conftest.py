import pytest

from service.api import create_app
from service.store import EventStore, connect
from service.store.migrate import upgrade
from tests.api.conftest import OPERATOR, UNLIMITED
from tests.support.records import jwks_file


@pytest.fixture(scope="session")
def other_database_url(server):
    """A second database on the same server: "another server" to move matches to."""
    url = server.create_database("gin_rummy_other")
    upgrade(url)
    yield url
    server.drop_database(url)


@pytest.fixture(scope="session")
def other_store(other_database_url):
    pool = connect(other_database_url, min_size=1, max_size=4)
    yield EventStore(pool)
    pool.close()


@pytest.fixture
def target(store, other_store, tmp_path):
    """A second service, to import into (on the other database), which trusts the first
    service's signatures (as two services of one operator would): its records keep their id."""
    trusted = jwks_file(store, tmp_path)
    return create_app(
        {"STORE": other_store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, "TRUSTED_JWKS": trusted, **UNLIMITED}
    ).test_client()


@pytest.fixture
def stranger(other_store):
    """A second service that trusts no other service's signatures."""
    return create_app({"STORE": other_store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED}).test_client()


#: What the exporting service adds of its own: how it came by the match, its signature.
SERVICE_FIELDS = ("provenance", "signature")


def content(record: dict) -> dict:
    """A record without what the exporting service adds (a round trip keeps the rest exactly)."""
    return {k: v for k, v in record.items() if k not in SERVICE_FIELDS}

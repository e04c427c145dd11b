"""Fixtures for the browser tests: the app in a real HTTP server, and headless Chromium.

Browser tests are marked ``web`` and skipped, with the reason, where Playwright for
Python or Chromium is missing (``.ci/run`` installs both).
"""

from __future__ import annotations

import pytest

from service.api import create_app
from service.store import EventStore, connect
from service.store.migrate import upgrade
from tests.api.conftest import UNLIMITED

from .support import OPERATOR, Client, chromium, missing, serving

DESKTOP = {"width": 1000, "height": 860}


def pytest_collection_modifyitems(config, items):
    reason = missing()
    for item in items:
        if item.get_closest_marker("web") and reason:
            item.add_marker(pytest.mark.skip(reason=reason))


def make_app(store, **settings):
    """The app on ``store``; ``settings`` override others by name (``PUBLIC_URL``)."""
    return create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED, **settings})


@pytest.fixture
def app(store):
    return make_app(store)


@pytest.fixture
def live_server(app):
    """The service on a real port, on the test database."""
    with serving(app) as base:
        yield base


@pytest.fixture
def other_server(server):
    """A second service with a database of its own: where an exported record is imported."""
    url = server.create_database("gin_rummy_web_other")
    upgrade(url)
    pool = connect(url, min_size=1, max_size=6)
    try:
        with serving(make_app(EventStore(pool))) as base:
            yield base
    finally:
        pool.close()
        server.drop_database(url)


@pytest.fixture(scope="session")
def browser():
    with chromium() as browser:
        yield browser


@pytest.fixture
def context(browser):
    context = browser.new_context(viewport={"width": 1000, "height": 860}, accept_downloads=True)
    yield context
    context.close()  # closes the live streams before the server stops


@pytest.fixture
def client(live_server, context):
    client = Client(context.new_page(), live_server)
    yield client
    assert not client.errors, f"JavaScript errors on the page: {client.errors}"


@pytest.fixture
def devices(browser, live_server):
    """Makes people: each a browser context (a device) of their own, with one page;
    ``touch``: a phone's touch screen, without a mouse (no fine pointer, no hover)."""
    contexts, clients = [], []

    def person(viewport=DESKTOP, clipboard=False, touch=False) -> Client:
        context = browser.new_context(viewport=viewport, has_touch=touch, is_mobile=touch)
        if clipboard:
            context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server)
        contexts.append(context)
        client = Client(context.new_page(), live_server)
        clients.append(client)
        return client

    yield person
    for context in contexts:
        context.close()  # closes the live streams before the server stops
    for client in clients:
        assert not client.errors, f"JavaScript errors on the page: {client.errors}"

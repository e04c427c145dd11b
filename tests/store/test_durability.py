"""A crash and restart of the database server loses no acknowledged append.

Runs on an embedded server of its own (also when TEST_DATABASE_URL is set): the test
stops the server abruptly, which it must not do to a shared one.
"""

from __future__ import annotations

import threading
import time
import uuid

import psycopg
import pytest

from service.engine import Event
from service.store import EventStore, connect
from service.store.database import create_database, import_pgserver, temporary_server
from service.store.migrate import upgrade

pgexec = import_pgserver().pgexec.pgexec  # without its RuntimeDirWarning (service.store.database says why)


@pytest.fixture
def own_server():
    with temporary_server("gin-rummy-crash-") as server:
        yield server


def crash(server) -> None:
    """Stop at once, as on a power cut: no shutdown checkpoint, recovery from the WAL on start."""
    pgexec(
        "pg_ctl",
        ("-D", str(server.pgdata), "-m", "immediate", "stop"),
        bin_path=server.bin_path,
        user=server.system_user,
    )


def start(server) -> None:
    with server._lock:
        server.ensure_postgres_running()


def test_a_crash_of_the_database_server_loses_no_acknowledged_append(own_server):
    create_database(own_server.get_uri(), "durability")
    url = own_server.get_uri("durability")
    upgrade(url)
    matches = [uuid.uuid4() for _ in range(4)]
    acknowledged = dict.fromkeys(matches, 0)

    pool = connect(url, max_size=4)
    store = EventStore(pool)

    unexpected = []

    def write(match_id: uuid.UUID) -> None:
        version = 0
        while True:
            try:
                store.append(match_id, version, [Event("note_added", {"n": version + 1})])
            except psycopg.OperationalError:
                return  # the server went away
            except Exception as exc:  # pragma: no cover - reported by the assertion below
                unexpected.append(exc)
                return
            version += 1
            acknowledged[match_id] = version

    threads = [threading.Thread(target=write, args=(m,)) for m in matches]
    for t in threads:
        t.start()
    time.sleep(0.5)
    crash(own_server)
    for t in threads:
        t.join()
    pool.close()
    assert unexpected == []
    assert all(acknowledged.values()), "no append was acknowledged before the crash"

    start(own_server)
    with connect(url, max_size=1) as pool:
        store = EventStore(pool)
        for match_id, version in acknowledged.items():
            stored = [e.seq for e in store.read(match_id)]
            # An append in flight at the crash may have committed without its answer.
            assert stored == list(range(1, len(stored) + 1))
            assert len(stored) >= version


def test_after_a_restart_the_first_failure_renews_every_pooled_connection(own_server):
    create_database(own_server.get_uri(), "restart")
    url = own_server.get_uri("restart")
    upgrade(url)
    with connect(url, min_size=4, max_size=4) as pool:
        pool.wait()
        store = EventStore(pool)
        crash(own_server)
        start(own_server)
        # All four pooled connections are dead now; the first use finds out.
        with pytest.raises(psycopg.OperationalError):
            store.summaries()
        if store._checker is not None:  # the check runs in the background
            store._checker.join(timeout=30)
        # The pool hands connections out in turn: without the check, three more calls
        # would fail on the three other dead connections.
        for _ in range(8):
            assert store.summaries() == []

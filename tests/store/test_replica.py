"""Reads meant for a standby (service/store/replica.py), on the test server.

The test server is no standby (``pg_is_in_recovery()`` is false), so it is caught up at
once; a standby that is behind (its replay paused) is in tests/scale/test_replica_reads.py.
"""

from __future__ import annotations

import time

import psycopg
import pytest

from service.store import MatchNotFound, connect
from service.store.replica import AFTER_FAILURE, Replica


class Reports(list):
    def __call__(self, outcome: str, waited: float) -> None:
        self.append(outcome)


@pytest.fixture
def reports():
    return Reports()


@pytest.fixture
def standby(database_url):
    """A pool on the test server, as the standby's (it is caught up by definition)."""
    pool = connect(database_url, min_size=1, max_size=1)
    yield pool
    pool.close()


def on_which(conn: psycopg.Connection) -> int:
    """The backend serving ``conn``: tells the standby's pool from the primary's."""
    return conn.info.backend_pid


def test_a_server_not_in_recovery_has_replayed_everything_and_reads(standby, store, reports):
    replica = Replica(standby, store, report=reports)
    with standby.connection() as conn:
        standby_backend = on_which(conn)
    assert replica.run(on_which) == standby_backend
    assert replica.run(lambda conn: conn.execute("SELECT 6 * 7").fetchone()[0]) == 42
    assert reports == ["replica", "replica"]


def test_an_unreachable_standby_is_passed_over_for_the_primary_then_left_alone_a_moment(store, reports):
    pool = connect("postgresql://postgres@127.0.0.1:9/none?connect_timeout=1", min_size=0, max_size=1)
    try:
        replica = Replica(pool, store, wait_seconds=0.2, report=reports)
        # Answered, so by the primary: nothing listens on port 9.
        assert replica.run(lambda conn: conn.execute("SELECT 1").fetchone()[0]) == 1
        started = time.monotonic()
        assert replica.run(lambda conn: conn.execute("SELECT 2").fetchone()[0]) == 2
        # The second read, within AFTER_FAILURE of the failure, did not wait 0.2 s for the standby.
        assert time.monotonic() - started < 0.1 < AFTER_FAILURE
        assert reports == ["failed", "skipped"]
    finally:
        pool.close()


def test_a_read_the_standby_cancels_for_a_conflict_is_made_again_on_the_primary(standby, store, reports):
    replica = Replica(standby, store, report=reports)
    with standby.connection() as conn:
        standby_backend = on_which(conn)
    calls = []

    def read(conn: psycopg.Connection) -> int:
        calls.append(on_which(conn))
        if on_which(conn) == standby_backend:
            # What a standby answers when replaying the primary's changes conflicts with a read.
            conn.execute(
                "DO $$ BEGIN RAISE EXCEPTION 'canceling statement due to conflict with recovery' "
                "USING ERRCODE = '40001'; END $$"
            )
        return on_which(conn)

    answered = replica.run(read)
    assert calls[0] == standby_backend and answered == calls[1] != standby_backend
    assert reports == ["replica", "failed"]


def test_what_the_read_itself_refuses_is_not_read_again(standby, store, reports):
    replica = Replica(standby, store, report=reports)
    calls = []

    def read(conn: psycopg.Connection) -> None:
        calls.append(1)
        raise MatchNotFound("00000000-0000-0000-0000-000000000000")

    with pytest.raises(MatchNotFound):
        replica.run(read)
    assert calls == [1] and reports == ["replica"]

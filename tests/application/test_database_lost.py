"""A request that finds the database out of reach has the pools test their idle
connections at once (``Application.database_lost``), at most once a second."""

from __future__ import annotations

import time

from service.application import Application
from service.settings import Settings
from service.store import EventStore, connect


def kill_idle_connections(store: EventStore, pool) -> None:
    """End the server side of ``pool``'s two connections (idle after), as a restart or a
    failover does."""
    with pool.connection() as one, pool.connection() as two:
        pids = [one.info.backend_pid, two.info.backend_pid]
    with store.connection() as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", (pids,))


def lost(pool) -> int:
    return pool.get_stats().get("connections_lost", 0)


def wait_for(check, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return False


def test_the_pools_drop_their_dead_connections_when_told_the_database_was_lost_at_most_once_a_second(database_url, store):
    pool = connect(database_url, min_size=2, max_size=2)
    application = Application(Settings(), store, owned_pools=(pool,))
    try:
        pool.wait()
        kill_idle_connections(store, pool)
        application.database_lost()
        assert wait_for(lambda: lost(pool) == 2)  # both found dead by the check, and replaced
        assert wait_for(lambda: pool.get_stats()["pool_available"] == 2)

        kill_idle_connections(store, pool)
        application.database_lost()  # within the second: no check
        time.sleep(0.3)
        assert lost(pool) == 2
        time.sleep(1.0)
        application.database_lost()
        assert wait_for(lambda: lost(pool) == 4)
    finally:
        application.close()

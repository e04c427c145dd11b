"""Idempotency records are kept for their retention, then purged."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

from service.store import find_idempotency_record, save_idempotency_record
from service.store.idempotency import purge_idempotency_records, purge_periodically


def test_purge_deletes_only_records_older_than_the_retention(pool):
    match_id = uuid.uuid4()
    with pool.connection() as conn:
        for key, age_hours in (("old-1", 25), ("old-2", 48), ("fresh", 23)):
            save_idempotency_record(conn, match_id, "seat:0", key, "f", 200, {"key": key})
            conn.execute(
                "UPDATE idempotency_keys SET created_at = now() - %s WHERE match_id = %s AND key = %s",
                (timedelta(hours=age_hours), match_id, key),
            )

    # Batches of one: the loop must go on until a batch comes back short.
    assert purge_idempotency_records(pool, timedelta(hours=24), batch=1) == 2

    with pool.connection() as conn:
        assert find_idempotency_record(conn, match_id, "seat:0", "old-1") is None
        assert find_idempotency_record(conn, match_id, "seat:0", "old-2") is None
        assert find_idempotency_record(conn, match_id, "seat:0", "fresh").body == {"key": "fresh"}


def test_the_periodic_purge_runs_in_the_background_until_stopped(pool):
    match_id = uuid.uuid4()
    with pool.connection() as conn:
        save_idempotency_record(conn, match_id, "seat:1", "stale", "f", 200, {})
        conn.execute(
            "UPDATE idempotency_keys SET created_at = now() - interval '2 days' WHERE match_id = %s", (match_id,)
        )
    stop = purge_periodically(pool, every=0.05)
    try:
        for _ in range(200):
            with pool.connection() as conn:
                if find_idempotency_record(conn, match_id, "seat:1", "stale") is None:
                    break
            time.sleep(0.05)
        else:
            raise AssertionError("the record older than the retention was not purged")
    finally:
        stop.set()

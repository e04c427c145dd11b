"""Idempotency records are kept for their retention, then purged."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

from service.engine import Event
from service.store import NewIdempotencyRecord, find_idempotency_record
from service.store.idempotency import purge_idempotency_records, purge_periodically


def test_purge_deletes_only_records_older_than_the_retention(store, pool):
    match_id = uuid.uuid4()
    for version, (key, age_hours) in enumerate((("old-1", 25), ("old-2", 48), ("fresh", 23))):
        answer = NewIdempotencyRecord("seat:0", key, "f")
        store.append(match_id, version, [Event("note_added", {"n": version + 1})], idempotency=answer)
        with pool.connection() as conn:
            conn.execute(
                "UPDATE idempotency_keys SET created_at = now() - %s WHERE match_id = %s AND key = %s",
                (timedelta(hours=age_hours), match_id, key),
            )

    # Batches of one: the loop must go on until a batch comes back short.
    assert purge_idempotency_records(pool, timedelta(hours=24), batch=1) == 2

    with pool.connection() as conn:
        assert find_idempotency_record(conn, match_id, "seat:0", "old-1") is None
        assert find_idempotency_record(conn, match_id, "seat:0", "old-2") is None
        assert find_idempotency_record(conn, match_id, "seat:0", "fresh").first_seq == 3


def test_the_periodic_purge_runs_in_the_background_until_stopped(store, pool):
    match_id = uuid.uuid4()
    answer = NewIdempotencyRecord("seat:1", "stale", "f")
    store.append(match_id, 0, [Event("note_added", {"n": 1})], idempotency=answer)
    with pool.connection() as conn:
        conn.execute(
            "UPDATE idempotency_keys SET created_at = now() - interval '2 days' WHERE match_id = %s", (match_id,)
        )
    # And a limit's bucket idle for two days, beside one used a moment ago.
    with pool.connection() as conn:
        conn.execute("INSERT INTO rate_buckets (scope, key, tokens, at) VALUES ('guests', %s, 1, now() - interval '2 days')", (str(match_id),))
        conn.execute("INSERT INTO rate_buckets (scope, key, tokens) VALUES ('guests', %s, 1)", (f"{match_id}-now",))
    stop = purge_periodically(pool, every=0.05)
    try:
        for _ in range(200):
            with pool.connection() as conn:
                idle = conn.execute("SELECT key FROM rate_buckets WHERE key LIKE %s", (f"{match_id}%",)).fetchall()
                if find_idempotency_record(conn, match_id, "seat:1", "stale") is None and len(idle) == 1:
                    break
            time.sleep(0.05)
        else:
            raise AssertionError("the record older than the retention, or the idle bucket, was not purged")
        assert idle == [(f"{match_id}-now",)]
    finally:
        stop.set()

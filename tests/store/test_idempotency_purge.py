"""Idempotency records are kept for their retention, then purged."""

from __future__ import annotations

import uuid
from datetime import timedelta

from service.store import find_idempotency_record, save_idempotency_record
from service.store.idempotency import purge_idempotency_records


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

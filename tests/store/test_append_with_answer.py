"""An append may carry the Idempotency-Key of the request that caused it: the events and
the key's record (naming those events) are stored by one statement, or neither is."""

from __future__ import annotations

import uuid

import pytest

from service.engine import Event
from service.store import ConcurrencyError, find_idempotency_record
from service.store.idempotency import NewIdempotencyRecord


def note(n: int) -> Event:
    return Event("note_added", {"n": n})


def test_the_record_is_stored_with_the_events_it_names(store, pool):
    match_id = uuid.uuid4()
    store.append(match_id, 0, [note(1)])
    store.append(match_id, 1, [note(2), note(3)], idempotency=NewIdempotencyRecord("seat:0", "key-1", "fp"))
    with pool.connection() as conn:
        record = find_idempotency_record(conn, match_id, "seat:0", "key-1")
    assert (record.fingerprint, record.status, record.body) == ("fp", 200, None)
    assert (record.first_seq, record.last_seq) == (2, 3)


def test_a_second_record_for_the_same_key_stores_nothing(store, pool):
    match_id = uuid.uuid4()
    store.append(match_id, 0, [note(1)], idempotency=NewIdempotencyRecord("seat:0", "k", "fp"))
    with pytest.raises(ConcurrencyError, match="idempotency key 'k'"):
        store.append(match_id, 1, [note(2), note(3)], idempotency=NewIdempotencyRecord("seat:0", "k", "fp"))
    assert [e.seq for e in store.read(match_id)] == [1]
    with pool.connection() as conn:
        record = find_idempotency_record(conn, match_id, "seat:0", "k")
    assert (record.first_seq, record.last_seq) == (1, 1)


def test_a_refused_append_stores_no_record(store, pool):
    match_id = uuid.uuid4()
    store.append(match_id, 0, [note(1)])
    with pytest.raises(ConcurrencyError):
        store.append(match_id, 0, [note(2)], idempotency=NewIdempotencyRecord("seat:0", "late", "fp"))
    with pool.connection() as conn:
        assert find_idempotency_record(conn, match_id, "seat:0", "late") is None

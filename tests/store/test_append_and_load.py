"""Appending with an expected version, and loading by folding."""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from datetime import UTC, datetime

import psycopg
import pytest

from service.application.tokens import hash_token
from service.engine import Event, fold
from service.store import (
    ConcurrencyError,
    MatchNotFound,
    NewIdempotencyRecord,
    find_idempotency_record,
    save_seat_tokens,
    seat_of_token,
)
from tests.factories import MatchFactory, in_hand


def test_a_played_match_loads_as_the_fold_of_its_events(store):
    match = MatchFactory(store=store, until=in_hand(3, moves=7))

    assert store.load(match.match_id) == match.state == fold(match.events)
    stored = store.read(match.match_id)
    assert [e.seq for e in stored] == list(range(1, len(match.events) + 1))
    assert [e.event for e in stored] == match.events


def test_append_returns_the_stored_events_with_their_seq_and_position(store):
    match = MatchFactory.build(until=in_hand(1))
    first = store.append(match.match_id, 0, match.batches[0], actor="operator")
    second = store.append(match.match_id, 1, match.batches[1])

    assert [(e.seq, e.type, e.actor) for e in first + second] == [
        (1, "match_started", "operator"),
        (2, "hand_dealt", None),
    ]
    assert first[0].position < second[0].position
    assert store.read(match.match_id) == first + second


def test_an_append_can_keep_the_times_its_events_were_recorded_elsewhere(store):
    match = MatchFactory.build(until=in_hand(1, moves=1))
    times = [datetime(2024, 5, 1, 12, 0, second, tzinfo=UTC) for second in range(len(match.events))]

    stored = store.append(match.match_id, 0, match.events, actor="import", recorded_at=times)

    assert [e.recorded_at for e in stored] == [e.recorded_at for e in store.read(match.match_id)] == times
    summary = store.summary(match.match_id)
    assert (summary.created_at, summary.updated_at) == (times[0], times[-1])
    with pytest.raises(ValueError):
        store.append(uuid.uuid4(), 0, match.events, recorded_at=times[:1])


def test_reading_after_a_seq_returns_only_the_later_events(store):
    match = MatchFactory(store=store, until=in_hand(1, moves=5))
    assert [e.seq for e in store.read(match.match_id, after=4)] == list(range(5, len(match.events) + 1))


def test_appending_at_a_stale_version_raises_a_conflict_and_writes_nothing(store):
    match = MatchFactory(store=store, until=in_hand(1, moves=3))
    version = len(match.events)
    store.append(match.match_id, version, [Event("note_added", {"n": 1})])

    with pytest.raises(ConcurrencyError) as raised:
        store.append(match.match_id, version, [Event("note_added", {"n": 2})])

    assert raised.value.expected_version == version
    assert isinstance(raised.value.__cause__, psycopg.errors.UniqueViolation)
    assert [e.data for e in store.read(match.match_id, after=version)] == [{"n": 1}]


def test_appending_at_a_version_ahead_of_the_match_raises_a_conflict_instead_of_leaving_a_gap(store):
    match = MatchFactory(store=store, until=in_hand(1))
    version = len(match.events)

    with pytest.raises(ConcurrencyError, match=f"at version {version}, not {version + 2}"):
        store.append(match.match_id, version + 2, [Event("note_added", {})])
    assert store.read(match.match_id, after=version) == []


def test_starting_a_match_twice_raises_a_conflict(store):
    match = MatchFactory.build(until=in_hand(1))
    store.append(match.match_id, 0, match.batches[0])
    with pytest.raises(ConcurrencyError):
        store.append(match.match_id, 0, match.batches[0])


def test_loading_a_match_without_events_raises_match_not_found(store):
    with pytest.raises(MatchNotFound):
        store.load(uuid.uuid4())


def test_eight_threads_racing_500_appends_leave_a_gapless_stream_without_duplicates(store):
    match_id = uuid.uuid4()
    store.append(match_id, 0, MatchFactory.build(until=lambda state: True).events)
    target, writers = 500, 8
    won = Counter()
    failures = []
    lock = threading.Lock()

    def write(writer: int) -> None:
        n = 0
        while True:
            with lock:
                if sum(won.values()) >= target:
                    return
            version = store.summary(match_id).version
            try:
                store.append(match_id, version, [Event("note_added", {"writer": writer, "n": n})])
            except ConcurrencyError:
                continue
            except Exception as exc:  # pragma: no cover - the assertion below reports it
                failures.append(exc)
                return
            with lock:
                won[writer] += 1
            n += 1

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert failures == []
    events = store.read(match_id)
    appended = sum(won.values())
    assert appended >= target
    assert [e.seq for e in events] == list(range(1, appended + 2))
    payloads = [(e.data["writer"], e.data["n"]) for e in events[1:]]
    assert len(set(payloads)) == len(payloads) == appended
    assert Counter(w for w, _ in payloads) == won
    assert len(won) > 1  # the writers did race


def test_events_and_secrets_written_in_one_transaction_commit_together(store):
    match = MatchFactory.build(until=in_hand(1))
    answer = NewIdempotencyRecord("seat:0", "key-1", "fp")
    with store.transaction() as conn:
        store.append(match.match_id, 0, match.events, idempotency=answer, conn=conn)
        save_seat_tokens(conn, match.match_id, {0: hash_token("token-0")})

    with store.pool.connection() as conn:
        assert seat_of_token(conn, match.match_id, hash_token("token-0")) == 0
        assert seat_of_token(conn, match.match_id, hash_token("token-1")) is None
        record = find_idempotency_record(conn, match.match_id, "seat:0", "key-1")
    assert (record.fingerprint, record.first_seq, record.last_seq) == ("fp", 1, len(match.events))
    assert store.load(match.match_id) == match.state


def test_a_failed_unit_of_work_leaves_no_event_and_no_secret(store):
    match = MatchFactory.build(until=in_hand(1))
    with pytest.raises(RuntimeError):
        with store.transaction() as conn:
            store.append(match.match_id, 0, match.events, conn=conn)
            save_seat_tokens(conn, match.match_id, {0: hash_token("token-0")})
            raise RuntimeError("the request failed after the append")

    with pytest.raises(MatchNotFound):
        store.load(match.match_id)
    with store.pool.connection() as conn:
        assert seat_of_token(conn, match.match_id, hash_token("token-0")) is None


def test_an_append_cannot_follow_an_event_written_by_a_younger_transaction(store):
    """Otherwise the global order could put a match's event before its predecessor."""
    match_id = uuid.uuid4()
    store.append(match_id, 0, [Event("note_added", {"n": 1})])
    with store.transaction() as older:
        older.execute("SELECT pg_current_xact_id()")  # this transaction is now the older one
        store.append(match_id, 1, [Event("note_added", {"n": 2})])
        with pytest.raises(ConcurrencyError, match="retry in a new transaction"):
            store.append(match_id, 2, [Event("note_added", {"n": 3})], conn=older)


@pytest.mark.parametrize("statement", ["UPDATE events SET actor = 'x'", "DELETE FROM events", "TRUNCATE events"])
def test_the_database_refuses_to_change_or_delete_events(store, statement):
    store.append(uuid.uuid4(), 0, [Event("note_added", {})])
    with store.pool.connection() as conn:
        with pytest.raises(psycopg.errors.RestrictViolation, match="append-only"):
            conn.execute(statement)


def test_an_empty_batch_is_refused(store):
    with pytest.raises(ValueError):
        store.append(uuid.uuid4(), 0, [])

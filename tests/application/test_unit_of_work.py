"""The unit of work: reads on one connection, writes stored all at once or not at all."""

from __future__ import annotations

import uuid

import pytest

from service.application.tokens import hash_token
from service.application.unit_of_work import ReadOnly, UnitOfWork
from service.engine import State, decide, fold
from service.store import MatchNotFound, save_seat_tokens, seat_of_token

START = {"type": "start_match", "rules": {}, "seats": [{"name": "Ann"}, {"name": "Bob"}]}


def started() -> tuple[uuid.UUID, list, State]:
    events = decide(State(), START)
    return uuid.uuid4(), events, fold(events)


def test_an_append_alone_is_stored_by_the_commit_and_its_events_are_read_back(store):
    match_id, events, state = started()
    with UnitOfWork(store) as uow:
        appended = uow.append(match_id, 0, events, actor="system", state=state)
        with pytest.raises(RuntimeError):
            _ = appended.events  # nothing is stored before the commit
        with pytest.raises(MatchNotFound):
            store.load(match_id, conn=uow.conn)
        uow.commit()
        assert [e.seq for e in appended.events] == [1]
        assert store.load(match_id, conn=uow.conn).version == 1


def test_writes_beside_an_append_commit_with_it(store):
    match_id, events, state = started()
    with UnitOfWork(store) as uow:
        uow.append(match_id, 0, events, state=state)
        uow.write(lambda conn: save_seat_tokens(conn, match_id, {0: hash_token("t0")}))
        uow.commit()
    with store.connection() as conn:
        assert seat_of_token(conn, match_id, hash_token("t0")) == 0


def test_a_write_that_fails_stores_nothing_of_the_unit(store):
    match_id, events, state = started()

    def refuse(conn):
        raise LookupError("refused")

    with UnitOfWork(store) as uow:
        uow.append(match_id, 0, events, state=state)
        uow.write(lambda conn: save_seat_tokens(conn, match_id, {0: hash_token("t0")}))
        uow.write(refuse)
        with pytest.raises(LookupError):
            uow.commit()
        # The connection is usable after the refusal, and sees nothing of the unit.
        with pytest.raises(MatchNotFound):
            store.load(match_id, conn=uow.conn)
        assert seat_of_token(uow.conn, match_id, hash_token("t0")) is None


def test_leaving_without_a_commit_stores_nothing(store):
    match_id, events, state = started()
    with UnitOfWork(store) as uow:
        uow.append(match_id, 0, events, state=state)
    with pytest.raises(MatchNotFound):
        store.load(match_id)


def test_a_unit_that_only_reads_takes_one_connection_and_gives_it_back(store):
    before = store.pool.get_stats().get("requests_num", 0)
    with UnitOfWork(store) as uow:
        first = uow.conn
        assert uow.conn is first  # every read of the use case on the same connection
        assert first.execute("SELECT 1").fetchone() == (1,)
    assert store.pool.get_stats().get("requests_num", 0) == before + 1
    assert first.info.transaction_status.name == "IDLE"


def test_a_read_only_unit_reads_on_its_connection_and_refuses_to_stage_a_write(store):
    match_id, events, state = started()
    with UnitOfWork(store) as uow:
        uow.append(match_id, 0, events, actor="system", state=state)
        uow.commit()
    with store.connection() as conn:
        reading = ReadOnly(store, conn)
        assert reading.conn is conn
        assert store.load(match_id, conn=reading.conn).version == 1
        with pytest.raises(TypeError):
            reading.append(match_id, 1, events)
        with pytest.raises(TypeError):
            reading.write(lambda c: save_seat_tokens(c, match_id, {1: hash_token("t1")}))
    with store.connection() as conn:
        assert seat_of_token(conn, match_id, hash_token("t1")) is None

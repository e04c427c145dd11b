"""The catch-up reader: every committed event of every match, exactly once, in one order."""

from __future__ import annotations

import random
import threading
import time
import uuid

from service.engine import Event


def end_of_feed(store) -> int:
    """A cursor after every event committed so far (no writer may be running)."""
    with store.pool.connection() as conn:
        row = conn.execute("SELECT position FROM events ORDER BY tx DESC, position DESC LIMIT 1").fetchone()
    return row[0] if row else 0


def settled(store, timeout: float = 60.0) -> None:
    """Wait until every transaction that began before the last event committed has ended,
    anywhere on the server (the feed's horizon: another database's long transaction, a
    test running beside this one, holds it back)."""
    deadline = time.monotonic() + timeout
    while True:
        with store.pool.connection() as conn:
            (passed,) = conn.execute(
                "SELECT pg_snapshot_xmin(pg_current_snapshot()) > COALESCE((SELECT max(tx) FROM events), '0'::xid8)"
            ).fetchone()
        if passed or time.monotonic() > deadline:
            return
        time.sleep(0.02)


def read_to_end(store, after: int) -> tuple[list, int]:
    events = []
    while True:
        page = store.read_all(after, limit=50)
        if not page.events:
            return events, after
        events += page.events
        after = page.after


def test_the_feed_returns_events_of_all_matches_in_pages_and_continues_from_the_cursor(store):
    start = end_of_feed(store)
    first, second = uuid.uuid4(), uuid.uuid4()
    store.append(first, 0, [Event("note_added", {"n": 1}), Event("note_added", {"n": 2})])
    store.append(second, 0, [Event("note_added", {"n": 3})])
    store.append(first, 2, [Event("note_added", {"n": 4})])

    settled(store)
    page = store.read_all(start, limit=2)
    rest = store.read_all(page.after, limit=10)

    assert [e.data["n"] for e in page.events + rest.events] == [1, 2, 3, 4]
    assert store.read_all(rest.after).events == []


def test_an_event_committed_after_one_with_a_higher_position_is_not_skipped(store):
    start = end_of_feed(store)
    slow, fast = uuid.uuid4(), uuid.uuid4()
    with store.transaction() as conn:
        (early,) = store.append(slow, 0, [Event("note_added", {"who": "slow"})], conn=conn)
        (late,) = store.append(fast, 0, [Event("note_added", {"who": "fast"})])
        assert early.position < late.position
        # The fast event is committed, the slow one is not: the reader must wait for it
        # rather than move past its position.
        assert store.read_all(start).events == []

    settled(store)
    seen = store.read_all(start).events
    assert [(e.match_id, e.position) for e in seen] == [(slow, early.position), (fast, late.position)]


def test_the_catch_up_reader_sees_every_committed_event_exactly_once_under_concurrent_writers(store):
    start = end_of_feed(store)
    writers, appends_each = 6, 40
    matches = [uuid.uuid4() for _ in range(writers)]
    done = threading.Event()
    failures = []

    def write(match_id: uuid.UUID, seed: int) -> None:
        rng = random.Random(seed)
        version = 0
        try:
            for i in range(appends_each):
                batch = [Event("note_added", {"i": i, "k": k}) for k in range(rng.randint(1, 3))]
                with store.transaction() as conn:
                    store.append(match_id, version, batch, conn=conn)
                    # Hold the commit back now and then, so that positions commit out of order.
                    time.sleep(rng.choice([0, 0, 0.001, 0.004]))
                version += len(batch)
        except Exception as exc:  # pragma: no cover - reported by the assertion below
            failures.append(exc)

    seen = []
    naive = set()  # what a reader following positions alone would see

    def follow() -> None:
        after = naive_after = start
        while True:
            finished = done.is_set()  # read once more after the writers stop
            if finished:
                settled(store)
            page = store.read_all(after, limit=25)
            seen.extend(page.events)
            after = page.after
            with store.pool.connection() as conn:
                rows = conn.execute(
                    "SELECT match_id, seq, position FROM events WHERE position > %s ORDER BY position LIMIT 25",
                    (naive_after,),
                ).fetchall()
            naive.update((m, seq) for m, seq, _ in rows)
            naive_after = rows[-1][2] if rows else naive_after
            if finished and not page.events and not rows:
                return

    threads = [threading.Thread(target=write, args=(m, i)) for i, m in enumerate(matches)]
    reader = threading.Thread(target=follow)
    reader.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    reader.join()

    assert failures == []
    committed = [e for m in matches for e in store.read(m)]
    keys = [(e.match_id, e.seq) for e in seen]
    assert len(keys) == len(set(keys)), "an event was delivered twice"
    assert set(keys) == {(e.match_id, e.seq) for e in committed}, "an event was missed"
    for match_id in matches:
        assert [e.seq for e in seen if e.match_id == match_id] == [
            e.seq for e in committed if e.match_id == match_id
        ], "a match's events came out of seq order"
    assert naive < set(keys), "no event committed after a higher position: the test proved nothing"

"""The match summary read model, written with each append and rebuilt from events alone."""

from __future__ import annotations

import uuid

import pytest

from service.store import MatchNotFound
from tests.factories import MatchFactory, in_hand


def all_summaries(store) -> list[tuple]:
    with store.pool.connection() as conn:
        return conn.execute("SELECT * FROM match_summaries ORDER BY match_id").fetchall()


def test_a_summary_follows_the_match(store):
    match = MatchFactory(store=store, until=in_hand(2, moves=2))
    summary = store.summary(match.match_id)

    start = match.events[0].data
    assert summary.status == "active"
    assert summary.preset == start["rules"]["preset"]
    assert summary.seats == start["seats"]
    assert summary.scores == list(match.state.scores)
    assert summary.hand_number == 2
    assert summary.version == len(match.events)
    assert summary.winner is None
    recorded = store.read(match.match_id)
    assert (summary.created_at, summary.updated_at) == (recorded[0].recorded_at, recorded[-1].recorded_at)


def test_a_finished_match_has_its_winner_and_final_scores(store):
    match = MatchFactory(store=store, start__rules={"single_hand": True})
    summary = store.summary(match.match_id)

    assert match.state.finished
    assert (summary.status, summary.winner) == ("finished", match.state.winner)
    assert summary.scores == list(match.state.scores)


def test_rebuilt_summaries_equal_the_ones_written_with_each_append(store):
    MatchFactory(store=store, start__rules={"single_hand": True})
    MatchFactory(store=store, start__rules={"preset": "upcard-offer", "target_score": 10}, until=in_hand(3))
    MatchFactory(store=store, until=in_hand(1))
    incremental = all_summaries(store)
    with store.pool.connection() as conn:
        conn.execute("UPDATE match_summaries SET scores = '{99,99}', status = 'active'")

    store.rebuild_projections()

    assert all_summaries(store) == incremental


def test_summaries_list_newest_first_and_filter_by_status(store):
    finished = MatchFactory(store=store, start__rules={"single_hand": True})
    active = MatchFactory(store=store, until=in_hand(1))

    newest = store.summaries(limit=2)
    assert [s.match_id for s in newest] == [active.match_id, finished.match_id]
    assert finished.match_id not in {s.match_id for s in store.summaries(status="active", limit=1000)}
    assert active.match_id not in {s.match_id for s in store.summaries(status="finished", limit=1000)}
    assert [s.match_id for s in store.summaries(limit=1, offset=1)] == [finished.match_id]
    oldest = [s.match_id for s in store.summaries(limit=1000, newest_first=False)]
    assert oldest[-2:] == [finished.match_id, active.match_id]
    with pytest.raises(ValueError):
        store.summaries(status="paused")


def test_a_match_without_events_has_no_summary(store):
    with pytest.raises(MatchNotFound):
        store.summary(uuid.uuid4())

"""Snapshots: a load folds only the current hand, and snapshots are only a cache."""

from __future__ import annotations

from service.engine import fold
from service.store import SNAPSHOT_FORMAT
from tests.factories import MatchFactory, in_hand


def snapshot_versions(store, match_id) -> list[int]:
    with store.pool.connection() as conn:
        rows = conn.execute("SELECT version FROM snapshots WHERE match_id = %s ORDER BY version", (match_id,))
        return [version for (version,) in rows]


def test_every_deal_stores_a_snapshot_so_a_load_starts_at_the_current_hand(store):
    match = MatchFactory(store=store, until=in_hand(4, moves=6))

    deals = [seq for seq, e in enumerate(match.events, start=1) if e.type == "hand_dealt"]
    assert snapshot_versions(store, match.match_id) == deals
    with store.pool.connection() as conn:
        (state,) = conn.execute(
            "SELECT state FROM snapshots WHERE match_id = %s AND version = %s", (match.match_id, deals[-1])
        ).fetchone()
    assert state == fold(match.events[: deals[-1]]).to_json()


def test_deleting_every_snapshot_changes_no_loaded_state(store):
    matches = [MatchFactory(store=store, until=in_hand(hands, moves=5)) for hands in (1, 2, 3)]
    before = [store.load(m.match_id) for m in matches]
    assert all(snapshot_versions(store, m.match_id) for m in matches)

    with store.pool.connection() as conn:
        conn.execute("DELETE FROM snapshots WHERE match_id = ANY(%s)", ([m.match_id for m in matches],))

    after = [store.load(m.match_id) for m in matches]
    assert after == before == [fold(m.events) for m in matches]


def test_a_snapshot_of_another_state_layout_is_ignored(store):
    match = MatchFactory(store=store, until=in_hand(2, moves=3))
    with store.pool.connection() as conn:
        conn.execute(
            "UPDATE snapshots SET format = 'an older engine', state = '{}' WHERE match_id = %s", (match.match_id,)
        )
    assert SNAPSHOT_FORMAT != "an older engine"
    assert store.load(match.match_id) == match.state

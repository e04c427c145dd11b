"""Imports cost what their check takes: charged to the address, and a record too long
refused before anything walks it (finding 11)."""

from __future__ import annotations

import time
import uuid

import pytest

from service.application import costs as costs_module
from service.records.records import MAX_RECORD_HANDS
from tests.api.conftest import OPERATOR, bearer
from tests.api.test_costs import assert_429, count, fresh_buckets, served  # noqa: F401 (a fixture)
from tests.factories import MatchFactory

OP = bearer(OPERATOR)


@pytest.fixture(autouse=True)
def fresh_target_buckets(other_store):
    with other_store.connection() as conn:
        conn.execute("DELETE FROM rate_buckets")


def test_an_import_flood_is_charged_to_its_address_and_refused_429_once_spent(store, other_store, monkeypatch):
    monkeypatch.setattr(costs_module, "off_process_timed", lambda function, *args: (function(*args), 5.0))
    source = served(store).test_client()
    target = served(other_store, cpu_per_address="6/minute burst 6").test_client()
    records = []
    for seed in (31, 32, 33):
        match = MatchFactory.create(store=store, seed=seed)
        records.append(source.get(f"/matches/{match.match_id}/export", headers=OP).json)
    before = count(other_store, "SELECT count(*) FROM match_summaries")
    started = time.monotonic()
    answers = [target.post("/matches/import", json=r) for r in records]
    # 6 CPU-seconds: 5 (1 left), 5 (-4: spent), then refused for 4 / 0.1 = 40 s, less
    # what the bucket refilled (0.1 s a second) while the imports ran.
    assert [r.status_code for r in answers] == [201, 201, 429]
    assert_429(answers[2], "cpu_budget_spent", 40, refilled=int(time.monotonic() - started) + 1)
    assert count(other_store, "SELECT count(*) FROM match_summaries") == before + 2


def test_a_record_over_the_most_hands_is_refused_before_any_walk(other_store, monkeypatch):
    import service.records.records as records

    def never(*_):
        raise AssertionError("the schema was walked")

    monkeypatch.setattr(records, "schema_problems", never)
    monkeypatch.setattr(records, "_integers_only", never)
    client = served(other_store).test_client()
    record = {
        "format": records.FORMAT, "format_version": records.FORMAT_VERSION, "match_id": str(uuid.uuid4()),
        "events": [{"type": "hand_dealt"}] * (MAX_RECORD_HANDS + 1),
    }
    started = time.perf_counter()
    r = client.post("/matches/import", json=record)
    assert r.status_code == 422 and r.json["code"] == "record_too_long", r.json
    assert f"at most {MAX_RECORD_HANDS} hands" in r.json["detail"] and f"holds {MAX_RECORD_HANDS + 1}" in r.json["detail"]
    assert time.perf_counter() - started < 0.5

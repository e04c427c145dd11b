"""Which reads go to the standby of GIN_RUMMY_REPLICA_DATABASE_URL, and that they answer
what the primary answers.

The standby here is the test server itself (no standby, so caught up at once: see
service/store/replica.py); one really behind is in tests/scale/test_replica_reads.py.
"""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY

from service.api import create_app

from .conftest import OPERATOR, UNLIMITED, bearer, plays


def replica_reads() -> float:
    return REGISTRY.get_sample_value("gin_rummy_replica_reads_total", {"outcome": "replica"}) or 0.0


@pytest.fixture
def apps(store, database_url):
    made = [
        create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED, **extra})
        for extra in ({"REPLICA_DATABASE_URL": database_url}, {})
    ]
    yield [app.test_client() for app in made]
    for app in made:
        app.extensions["gin_rummy"].close()


TWO_PEOPLE = {"seats": [{"name": "Ann"}, {"name": "Bob"}]}


def finished_match(client) -> tuple[str, dict[int, dict]]:
    r = client.post("/matches", json=TWO_PEOPLE)
    assert r.status_code == 201, r.json
    match_id = r.json["id"]
    seats = {s["seat"]: bearer(s["token"]) for s in r.json["seats"]}
    for _ in range(6):  # a few plays of the first hand, then a resignation
        for headers in seats.values():
            view = client.get(f"/matches/{match_id}", headers=headers).json
            if plays(view):
                play = plays(view)[0]
                answer = client.post(f"/matches/{match_id}/actions", json=play, headers=headers)
                assert answer.status_code == 200, answer.json
    assert client.post(f"/matches/{match_id}/actions", json={"type": "resign"}, headers=seats[0]).status_code == 200
    return match_id, seats


def test_the_heavy_reads_go_to_the_standby_and_answer_what_the_primary_answers(apps):
    replicated, single = apps
    match_id, seats = finished_match(replicated)
    seat = seats[1]
    operator = bearer(OPERATOR)
    heavy = [
        (f"/matches/{match_id}/audit", seat), (f"/matches/{match_id}/hands", seat),
        (f"/matches/{match_id}/hands/1", seat), (f"/matches/{match_id}/state?version=3", seat),
        (f"/matches/{match_id}/events", seat), (f"/matches/{match_id}/events?after=2&limit=2", seat),
        ("/lobby", None), ("/leaderboard", None),
    ]
    for path, headers in heavy:
        before = replica_reads()
        answer = replicated.get(path, headers=headers or {})
        assert answer.status_code == 200, (path, answer.json)
        assert replica_reads() == before + 1, path
        assert answer.json == single.get(path, headers=headers or {}).json, path
    for path in (f"/matches/{match_id}/export", f"/matches/{match_id}/analysis"):
        before = replica_reads()
        answer = replicated.get(path, headers=seat)
        assert answer.status_code == 200, (path, answer.json)
        assert replica_reads() >= before + 1, path
    before = replica_reads()
    records = replicated.get("/matches/export", headers=operator)
    lines = records.get_data(as_text=True).splitlines()
    assert records.status_code == 200 and any(match_id in line for line in lines)
    assert replica_reads() >= before + len(lines)


def test_a_match_being_played_its_moves_and_its_refusals_stay_on_the_primary(apps):
    replicated, _ = apps
    r = replicated.post("/matches", json=TWO_PEOPLE)
    match_id, headers = r.json["id"], bearer(r.json["seats"][0]["token"])
    before = replica_reads()
    view = replicated.get(f"/matches/{match_id}", headers=headers).json
    assert replicated.get(f"/matches/{match_id}/events", headers=headers).status_code == 200
    assert replicated.post(f"/matches/{match_id}/actions", json=plays(view)[0], headers=headers).status_code in (200, 409)
    # The audit of a match being played is refused before anything is read on the standby.
    assert replicated.get(f"/matches/{match_id}/audit", headers=headers).status_code == 403
    assert replicated.get(f"/matches/{match_id}/audit", headers=bearer("nobody")).status_code == 401
    assert replica_reads() == before

"""Valid records changed in one place at random: each is refused with a precise 422, or
is still legal and replays to exactly what it claims. Never a 500, never half-imported."""

import copy
import hashlib
import random

import pytest

from service.api import create_app
from service.records.format import digest_of
from tests.api.conftest import OPERATOR, UNLIMITED, bearer
from tests.factories import HumanSeatFactory, MatchFactory, StartMatchFactory

OP = bearer(OPERATOR)


def paths(obj, prefix=()):
    """Every place in a JSON value: (path, value)."""
    yield prefix, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from paths(v, prefix + (i,))


def at(obj, path):
    for p in path[:-1]:
        obj = obj[p]
    return obj


def other_value(value, rng):
    if isinstance(value, bool):
        return rng.choice([not value, "yes", 1])
    if isinstance(value, int):
        return rng.choice([value + 1, value - 1, str(value), None, 10**6])
    if isinstance(value, str):
        return rng.choice(["KD", "AS", "", value + "x", 7, None])
    if isinstance(value, list):
        return value[:-1] if value else [1]
    return rng.choice([None, [], "x"])


def mutate(record, rng):
    """One change in one place, and a description of it."""
    record = copy.deepcopy(record)
    kind = rng.choice(["value", "value", "swap", "drop", "truncate"])
    events = record["events"]
    if kind == "swap":
        i = rng.randrange(len(events) - 1)
        events[i], events[i + 1] = events[i + 1], events[i]
        return record, f"swap events {i} and {i + 1}"
    if kind == "truncate":
        n = rng.randrange(1, len(events))
        del events[n:]
        return record, f"truncate events to {n}"
    places = [(p, v) for p, v in paths(record) if p and p[0] in ("events", "rules", "seats", "result", "match_id")]
    path, value = rng.choice(places)
    parent = at(record, path)
    if kind == "drop" and isinstance(parent, dict):
        del parent[path[-1]]
        return record, f"drop {'/'.join(map(str, path))}"
    parent[path[-1]] = other_value(value, rng)
    return record, f"set {'/'.join(map(str, path))} from {value!r} to {parent[path[-1]]!r}"


@pytest.fixture
def target(other_store):
    return create_app({"STORE": other_store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED}).test_client()


@pytest.mark.parametrize("reseal", [False, True], ids=["digest-kept", "digest-recomputed"])
def test_one_random_change_is_refused_precisely_or_replays_to_what_it_claims(store, target, reseal):
    app = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED}).test_client()
    rng = random.Random(f"mutations-{reseal}")
    records = []
    for seed, preset in enumerate(["classic", "bonus-20-10", "upcard-offer"]):
        start = StartMatchFactory(seats=[HumanSeatFactory(), HumanSeatFactory()], rules={"preset": preset, "target_score": 30})
        match = MatchFactory.create(store=store, start=start, seed=seed)
        records.append(app.get(f"/matches/{match.match_id}/export", headers=OP).json)
    refused = accepted = 0
    present = {rec["match_id"]: {rec["digest"]["value"]} for rec in records}
    for _ in range(60):
        original = rng.choice(records)
        record, change = mutate(original, rng)
        if reseal and isinstance(record.get("events"), list):
            try:
                record["digest"]["value"] = digest_of(record["events"])
            except (KeyError, TypeError):
                pass
        r = target.post("/matches/import", json=record)
        assert r.status_code in (200, 201, 409, 422), (change, r.status_code, r.json)
        if r.status_code in (409, 422):
            refused += 1
            assert r.mimetype == "application/problem+json" and r.json["code"] and r.json["detail"], change
            if r.json["code"] == "illegal_event":
                assert isinstance(r.json["index"], int) and r.json["rule"], change
            # Never half-imported: the match either is absent or is exactly the original.
            there = target.get(f"/matches/{record.get('match_id')}/export", headers=OP)
            assert there.status_code == 404 or there.json["digest"]["value"] in present.get(there.json["match_id"], ()), change
        else:
            accepted += 1
            exported = target.get(f"/matches/{r.json['id']}/export", headers=OP).json
            # Legal after all: it must replay to exactly what it claims.
            assert exported["events"] == record["events"] and exported["result"] == record["result"], change
            present.setdefault(exported["match_id"], set()).add(exported["digest"]["value"])
    assert refused > 30, refused


def test_every_commitment_of_a_played_match_checks_out_from_its_export_alone(store):
    app = create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED}).test_client()
    start = StartMatchFactory(seats=[HumanSeatFactory(), HumanSeatFactory()], rules={"target_score": 60})
    match = MatchFactory.create(store=store, start=start)
    record = app.get(f"/matches/{match.match_id}/export", headers=OP).json
    deals = [e["data"] for e in record["events"] if e["type"] == "hand_dealt"]
    ends = [e["data"] for e in record["events"] if e["type"] == "hand_ended"]
    assert len(deals) == len(ends) == match.state.hand_number >= 2
    for dealt, ended in zip(deals, ends, strict=True):
        revealed = hashlib.sha256(f"{ended['salt']}:{','.join(ended['deck'])}".encode()).hexdigest()
        assert revealed == dealt["commitment"]
        assert sorted(ended["deck"]) == sorted(match.state.deck) and len(set(ended["deck"])) == 52

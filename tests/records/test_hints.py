"""Hints in records: exported, imported and analysed alike elsewhere; a forged hint is refused."""

from __future__ import annotations

import copy
import uuid

import pytest

from service.api import create_app
from service.records.format import digest_of
from tests.api.conftest import OPERATOR, UNLIMITED, Player, bearer
from tests.api.test_coach import follow_hints

OP = bearer(OPERATOR)


@pytest.fixture
def client(store):
    return create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED}).test_client()


def test_hints_travel_in_records_and_a_forged_hint_is_refused(client, target):
    seats = [{"name": "Ann"}, {"kind": "computer", "level": "medium"}]
    data = client.post("/matches", json={"seats": seats, "rules": {"target_score": 1, "single_hand": True}}).json
    ann = Player(client, data["id"], data["seats"][0]["token"])
    follow_hints(ann, 1)
    record = client.get(f"/matches/{data['id']}/export", headers=OP).json
    shown = [i for i, e in enumerate(record["events"]) if e["type"] == "hint_shown"]
    assert shown and record["result"]["status"] == "finished"
    r = target.post("/matches/import", json=record)
    assert r.status_code == 201, r.json
    exported = target.get(f"/matches/{data['id']}/export", headers=OP).json
    assert exported["events"] == record["events"]
    # The same analysis on the other service, from the record alone.
    assert target.get(f"/matches/{data['id']}/analysis", headers=OP).json == client.get(f"/matches/{data['id']}/analysis", headers=OP).json

    forged = copy.deepcopy(record)
    forged["match_id"] = str(uuid.uuid4())
    del forged["signature"]
    hinted = forged["events"][shown[0]]["data"]
    hinted["action"] = {"type": "discard", "card": "AS"} if hinted["action"]["type"] == "draw" else {"type": "draw", "source": "stock"}
    forged["digest"]["value"] = digest_of(forged["events"])
    r = target.post("/matches/import", json=forged)
    assert r.status_code == 422 and r.json["rule"] == "hint_not_legal" and r.json["index"] == shown[0], r.json


def test_gin_rummy_analyse_prints_a_record_files_decisions(client, tmp_path, capsys):
    import json

    from service.cli import main as cli

    data = client.post("/matches", json={"seats": [{"name": "Ann"}, {"kind": "computer", "level": "easy"}], "rules": {"single_hand": True}}).json
    ann = Player(client, data["id"], data["seats"][0]["token"])
    follow_hints(ann, 1)
    record = client.get(f"/matches/{data['id']}/export", headers=OP).json
    path = tmp_path / "match.json"
    path.write_text(json.dumps(record))
    assert cli(["analyse", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    analysis = client.get(f"/matches/{data['id']}/hands/1/analysis", headers=OP).json
    assert out[0] == "Hand 1"
    assert len([line for line in out if line.startswith("  seq ")]) == len(analysis["decisions"])
    assert out[-2].startswith("  Ann: accuracy 100.0 (") and out[-1].startswith("Match: Ann: accuracy 100.0")
    # The easy computer's worse plays name the better one and why.
    worse = [d for d in analysis["decisions"] if d["class"] != "good"]
    for d in worse:
        assert any(f"seq {d['seq']:>4}" in line and "better" in line and d["reason"] in line for line in out)
    assert cli(["analyse", str(path), "--hand", "2"]) == 1
    assert "the match has 1 hand(s)" in capsys.readouterr().err

"""The record commands: gin-rummy export, import, replay, audit."""

import json

from service.cli import main
from tests.factories import HumanSeatFactory, MatchFactory, StartMatchFactory
from tests.records.conftest import content
from tests.support.records import jwks_file


def two_people(store, **rules):
    start = StartMatchFactory(seats=[HumanSeatFactory(name="Ann"), HumanSeatFactory(name="Bob")], rules={"preset": "classic", **rules})
    return MatchFactory.create(store=store, start=start)


def test_export_then_import_elsewhere_then_export_gives_the_same_record(store, database_url, other_database_url, monkeypatch, capsys, tmp_path):
    match = two_people(store, target_score=60)
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert main(["export", str(match.match_id)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["match_id"] == str(match.match_id) and record["result"]["status"] == "finished"
    path = tmp_path / "match.json"
    path.write_text(json.dumps(record))

    # The other service trusts this one's signatures (two services of one operator).
    monkeypatch.setenv("GIN_RUMMY_TRUSTED_JWKS", jwks_file(store, tmp_path))
    monkeypatch.setenv("DATABASE_URL", other_database_url)
    assert main(["import", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"imported match {match.match_id} —" in out and "tokens (shown once)" in out
    assert main(["import", str(path)]) == 0
    assert "was already here" in capsys.readouterr().out
    assert main(["export", str(match.match_id)]) == 0
    assert content(json.loads(capsys.readouterr().out)) == content(record)


def test_import_reads_ndjson_from_stdin_and_refuses_a_bad_record_by_event(store, database_url, other_database_url, monkeypatch, capsys):
    import io

    matches = [two_people(store) for _ in range(2)]
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert main(["export", *(str(m.match_id) for m in matches)]) == 0
    lines = capsys.readouterr().out.splitlines()
    bad = json.loads(lines[1])
    bad["events"][1]["data"]["deck"][0] = bad["events"][1]["data"]["deck"][1]
    from service.records.format import digest_of

    bad["digest"]["value"] = digest_of(bad["events"])
    monkeypatch.setenv("DATABASE_URL", other_database_url)
    monkeypatch.setattr("sys.stdin", io.StringIO(lines[0] + "\n" + json.dumps(bad) + "\n"))
    assert main(["import"]) == 1
    captured = capsys.readouterr()
    assert "stdin:1: imported match" in captured.out
    assert "stdin:2: refused: illegal_event" in captured.err and "events[1], seq 2, rule invalid_deck" in captured.err


def test_replay_prints_a_hand_as_text_and_audit_checks_it(store, database_url, monkeypatch, capsys):
    match = two_people(store, single_hand=True)
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert main(["replay", str(match.match_id), "--hand", "1"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Hand 1 — Ann starts") and "Ann" in text and "Bob" in text
    assert "(valid)" in text and ("scores" in text or "Dead hand" in text)
    assert main(["audit", str(match.match_id)]) == 0
    assert f"{match.match_id}: ok" in capsys.readouterr().out


def test_a_record_signed_by_a_service_not_trusted_here_is_imported_under_an_id_of_its_own(
    store, database_url, other_database_url, monkeypatch, capsys, tmp_path
):
    match = two_people(store, target_score=60)
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert main(["export", str(match.match_id)]) == 0
    path = tmp_path / "match.json"
    path.write_text(capsys.readouterr().out)
    monkeypatch.setenv("DATABASE_URL", other_database_url)
    assert main(["import", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"imported match {match.match_id} " not in out
    assert f"(the record names {match.match_id}; unverified records get an id of their own here)" in out
    assert main(["import", str(path)]) == 0  # the same record: the same match again
    assert "was already here" in capsys.readouterr().out

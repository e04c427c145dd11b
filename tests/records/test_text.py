"""The movetext of a match (docs/movetext.md): a played match read line by line against
its events, layoffs in an order they can be played, how a match ended, the API's
``format=text``, and ``gin-rummy replay FILE`` without a database, on a closed pipe and
with names a terminal would act on."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from service.cli import main
from service.engine import meld_kind, sort_cards
from service.records.hands import split_hands
from service.records.text import playable_layoffs, quoted, record_text
from tests.api.conftest import OPERATOR, Player, bearer, client, new_match  # noqa: F401 - client, new_match: fixtures
from tests.api.test_online import app, clock  # noqa: F401 - fixtures: the app on a clock moved by hand
from tests.factories import HumanSeatFactory, MatchFactory, StartMatchFactory
from tests.records.test_online_records import play_turns
from tests.support.matches import play_to_the_end

OP = bearer(OPERATOR)
ROOT = Path(__file__).parents[2]

# The grammar of docs/movetext.md, one pattern per line kind (after its comment is cut).
CARD = r"[A23456789TJQK][CDHS]"
MELD = rf"{CARD}(?:-{CARD}){{2,}}"
SEAT = r"S[12]"
STRING = r'"(?:[^"\\]|\\["\\]|\\u[0-9a-f]{4}|\\U[0-9a-f]{8})*"'
AT = r"(?: @\S+)?"
SCORES = r"\d+-\d+"
LINE_KINDS = {
    "tag": rf"\[[A-Za-z0-9]+ {STRING}\]",
    "hand": rf"hand \d+ starter {SEAT}{AT}",
    "deal": rf"deal {SEAT}(?: {CARD}){{10}}",
    "upcard": rf"upcard {CARD}",
    "stock": rf"stock(?: {CARD})*",
    "commitment": r"commitment [0-9a-f]{64}",
    "salt": rf"salt {STRING}",
    "move": rf"\d+\. {SEAT} (?:pass|draw (?:stock|discard) {CARD}|discard {CARD}|knock {CARD}|gin {CARD}"
    rf"|resign|claim_timeout|abort|join {STRING}(?: player [0-9a-f-]{{36}})?){AT}",
    "melds": rf"melds {SEAT}(?: {MELD})*",
    "layoff": rf"layoff {SEAT} {CARD} on {MELD}",
    "deadwood": rf"deadwood {SEAT}(?: {CARD})* = \d+",
    "result": rf"result (?:(?:knock|undercut|gin) {SEAT} \d+(?: doubled)?|dead) totals {SCORES}",
    "end": rf"end (?:score|resigned|timeout|aborted) (?:{SEAT}|-) {SCORES}",
    # The lines of the variants (docs/variants.md): Big Gin, Hollywood's games, the settlement.
    "big_gin": rf"\d+\. {SEAT} big_gin {CARD}{AT}",
    "games": rf"games(?: {SCORES}(?:={SEAT})?){{3}}",
    "game": rf"game [123] points {SCORES} hands {SCORES} winner (?:{SEAT}|-) totals {SCORES}(?: shutout)?",
    "match_totals": rf"match totals {SCORES}",
}


def statements(text: str) -> list[tuple[str, str]]:
    """Every line as (kind, statement), comments and blank lines left out; a line of no
    kind fails the test."""
    out = []
    for line in text.splitlines():
        statement = re.sub(r"\s*;.*$", "", line) if not line.startswith("[") else line
        if not statement:
            continue
        kinds = [kind for kind, pattern in LINE_KINDS.items() if re.fullmatch(pattern, statement)]
        assert len(kinds) == 1, f"not one line of the grammar: {line!r}"
        out.append((kinds[0], statement))
    return out


def moves(text: str) -> list[tuple[int, str, str]]:
    """The move lines: (seq, seat code, action without its time)."""
    found = []
    for kind, statement in statements(text):
        if kind == "move":
            seq, seat, action = re.fullmatch(r"(\d+)\. (S[12]) (.*?)(?: @\S+)?", statement).groups()
            found.append((int(seq), seat, action))
    return found


def expected_moves(events: list[dict]) -> list[tuple[int, str, str]]:
    """What the events say was played, as move lines would write it."""
    out = []
    for e in events:
        d = e["data"]
        seat = f"S{d['seat'] + 1}" if "seat" in d else None
        if e["type"] == "upcard_passed":
            out.append((e["seq"], seat, "pass"))
        elif e["type"] == "card_drawn":
            out.append((e["seq"], seat, f"draw {d['source']} {d['card']}"))
        elif e["type"] == "card_discarded":
            out.append((e["seq"], seat, f"discard {d['card']}"))
        elif e["type"] == "knocked":
            out.append((e["seq"], seat, f"{'gin' if d['gin'] else 'knock'} {d['card']}"))
        elif e["type"] == "seat_joined":
            out.append((e["seq"], seat, f"join {quoted(d['name'])}"))
        elif e["type"] == "match_ended" and d["reason"] != "score":
            out.append((e["seq"], seat, {"resigned": "resign", "timeout": "claim_timeout", "aborted": "abort"}[d["reason"]]))
    return out


def export_text(client, match_id: str, headers=OP) -> str:
    r = client.get(f"/matches/{match_id}/export?format=text", headers=headers)
    assert r.status_code == 200, r.get_data(as_text=True)
    return r.get_data(as_text=True)


@pytest.fixture
def played(client, new_match):
    """A match Ann played against the hard computer to its end (50 points), through the API:
    its id, Ann, its record and its movetext."""
    data, players = new_match(
        {"rules": {"preset": "classic", "target_score": 50}, "seats": [{"name": "Ann"}, {"kind": "computer", "level": "hard"}]}
    )
    play_to_the_end(players)
    record = client.get(f"/matches/{data['id']}/export", headers=players[0].headers).json
    return data["id"], players[0], record, export_text(client, data["id"], players[0].headers)


def test_the_header_names_the_match_its_rules_its_seats_its_result_and_its_digest(played):
    match_id, _, record, text = played
    header = text.split("\n\n")[0].splitlines()
    winner = record["result"]["winner"]
    assert header == [
        '[Movetext "1"]',
        f'[Match "{match_id}"]',
        '[Rules "classic, upcard_offer=false, dead_hand_stock=0, gin_bonus=25, undercut_bonus=25, knock_limit=10, '
        'target_score=50, single_hand=false, knocker_arranges=false, defender_arranges=false, turn_seconds=null, '
        'starter=alternate, hints=true"]',
        '[Seat1 "Ann (human)"]',
        '[Seat2 "Computer (hard)"]',
        f'[Started "{record["events"][0]["recorded_at"]}"]',
        '[Status "finished"]',
        f'[Result "{"1-0" if winner == 0 else "0-1"}"]',
        f'[Scores "{record["result"]["scores"][0]}-{record["result"]["scores"][1]}"]',
        f'[Hands "{record["result"]["hands"]}"]',
        '[Termination "score"]',
        f'[Digest "sha256:{record["digest"]["value"]}"]',
    ]
    assert max(record["result"]["scores"]) >= 50


def test_every_deal_shows_both_hands_as_the_engine_deals_them_the_upcard_the_stock_and_the_commitment(played):
    _, _, record, text = played
    deals = [e["data"] for e in record["events"] if e["type"] == "hand_dealt"]
    lines = text.splitlines()
    assert len(deals) == record["result"]["hands"] >= 1
    for deal in deals:
        deck, starter = deal["deck"], deal["starter"]
        at = lines.index(next(line for line in lines if line.startswith(f"hand {deal['hand']} starter ")))
        block = [re.sub(r"\s*;.*$", "", line) for line in lines[at : at + 7]]
        other = 1 - starter
        assert block[0] == f"hand {deal['hand']} starter S{starter + 1}"
        # The starter holds deck[0:10], the other seat deck[10:20]; deck[20] is turned up.
        dealt = {starter: deck[0:10], other: deck[10:20]}
        assert block[1] == "deal S1 " + " ".join(dealt[0])
        assert block[2] == "deal S2 " + " ".join(dealt[1])
        assert block[3] == f"upcard {deck[20]}"
        assert block[4] == "stock " + " ".join(deck[21:])
        assert block[5] == f"commitment {deal['commitment']}"
        assert block[6] == f'salt "{deal["salt"]}"'
        assert lines[at + 5].endswith("; the deck and salt give it")
        # The text alone is enough to check the deal: the deck is the starter's cards,
        # the other's, the upcard and the stock.
        words = {line.split()[0] + line.split()[1]: line.split()[2:] for line in block[1:3]}
        rebuilt = words[f"dealS{starter + 1}"] + words[f"dealS{other + 1}"] + [deck[20]] + block[4].split()[1:]
        salt = json.loads(block[6].removeprefix("salt "))
        assert hashlib.sha256(f"{salt}:{','.join(rebuilt)}".encode()).hexdigest() == deal["commitment"]


def test_every_move_of_the_record_is_a_move_line_in_order_and_every_line_follows_the_grammar(played):
    _, _, record, text = played
    assert moves(text) == expected_moves(record["events"])
    kinds = [kind for kind, _ in statements(text)]
    assert kinds.count("hand") == kinds.count("result") == record["result"]["hands"]
    assert kinds[-1] == "end"


def test_each_hand_ends_with_its_arrangements_its_result_and_the_running_totals(played):
    _, _, record, text = played
    blocks: list[list[tuple[str, str]]] = []
    for kind, statement in statements(text):
        if kind == "hand":
            blocks.append([])
        if blocks:
            blocks[-1].append((kind, statement))
    for events, block in zip(split_hands(record["events"]), blocks, strict=True):
        found = {e["type"]: e["data"] for e in events}
        expected, laid = [], []
        for what in ("knocked", "defended"):
            if what in found:
                d = found[what]
                seat = f"S{d['seat'] + 1}"
                expected += [" ".join([f"melds {seat}", *("-".join(m) for m in d["melds"])]),
                             " ".join([f"deadwood {seat}", *d["deadwood_cards"], f"= {d['deadwood']}"])]
                laid += [f"layoff {seat} {x['card']}" for x in d.get("layoffs", [])]
        d = found["hand_ended"]
        totals = f"totals {d['scores'][0]}-{d['scores'][1]}"
        expected.append(f"result dead {totals}" if d["winner"] is None else f"result {d['result']} S{d['winner'] + 1} {d['points']} {totals}")
        assert [s for k, s in block if k in ("melds", "deadwood", "result")] == expected
        assert sorted(s.split(" on ")[0] for k, s in block if k == "layoff") == sorted(laid)
    ended = record["events"][-1]["data"]
    assert blocks[-1][-1] == ("end", f"end score S{ended['winner'] + 1} {ended['scores'][0]}-{ended['scores'][1]}")
    assert text.splitlines()[-1].endswith(f"; {'Ann' if ended['winner'] == 0 else 'Computer (hard)'} wins the match")


def test_layoffs_are_written_in_an_order_they_can_be_played():
    # Onto a run: below it nearest first, then above it nearest first; onto a set: its fourth card.
    melds = [["3D", "4D", "5D"], ["7C", "7D", "7H"], ["9S", "TS", "JS"]]
    layoffs = [{"card": c, "meld": m} for c, m in [("KS", 2), ("AD", 0), ("6D", 0), ("QS", 2), ("2D", 0), ("7S", 1), ("8S", 2)]]
    assert playable_layoffs(melds, layoffs) == [("2D", 0), ("AD", 0), ("6D", 0), ("7S", 1), ("8S", 2), ("QS", 2), ("KS", 2)]


def two_layoffs_below_a_run(seed: int):
    """A single hand in which the defender lays off two cards below one of the knocker's
    runs (so the record's order, by rank, is not one that can be played), or None."""
    start = StartMatchFactory(
        seats=[HumanSeatFactory(name="Ann"), HumanSeatFactory(name="Bob")], rules={"preset": "classic", "single_hand": True}
    )
    match = MatchFactory.build(seed=seed, start=start)
    knock = next((e.data for e in match.events if e.type == "knocked"), None)
    defense = next((e.data for e in match.events if e.type == "defended"), None)
    for index, meld in enumerate(knock["melds"] if knock and defense else []):
        lowest = min("A23456789TJQK".index(c[0]) for c in meld)
        below = [x["card"] for x in defense["layoffs"] if x["meld"] == index and "A23456789TJQK".index(x["card"][0]) < lowest]
        if meld_kind(meld) == "run" and len(below) >= 2:
            return start, meld, below
    return None


def test_two_cards_laid_off_below_a_run_are_written_nearest_first(store, client):
    seed, (start, meld, below) = next((s, found) for s in range(2000) if (found := two_layoffs_below_a_run(s)))
    match = MatchFactory.create(store=store, seed=seed, start=start)
    text = export_text(client, str(match.match_id))
    far, near = sorted(below, key=lambda c: "A23456789TJQK".index(c[0]))[-2:]
    layoff_lines = [s for k, s in statements(text) if k == "layoff"]
    defender = layoff_lines[0].split()[1]
    run = "-".join(meld)
    first, then = f"layoff {defender} {near} on {run}", f"layoff {defender} {far} on {near}-{run}"
    assert first in layoff_lines and then in layoff_lines
    assert layoff_lines.index(first) < layoff_lines.index(then)
    # The order is the text's own, whatever order the record lists the layoffs in.
    record = client.get(f"/matches/{match.match_id}/export", headers=OP).json
    for reverse in (False, True):
        shuffled = copy.deepcopy(record)
        defended = next(e for e in shuffled["events"] if e["type"] == "defended")["data"]
        defended["layoffs"] = sorted(defended["layoffs"], key=lambda x: x["card"], reverse=reverse)
        assert [s for k, s in statements(record_text(shuffled)) if k == "layoff"] == layoff_lines


@pytest.mark.parametrize("preset", ["classic", "bonus-20-10"])
def test_every_layoff_line_grows_a_meld_as_it_stands(preset):
    """Read from the text alone: the knocker's melds, then each layoff onto the meld as
    it stands, which must stay one legal meld."""
    from service.records.format import build_record, event_json
    from service.store.upcasting import current_version

    checked = 0
    for seed in range(16):
        match = MatchFactory.build(seed=seed, start=StartMatchFactory(rules={"preset": preset}))
        events = [event_json(i + 1, e.type, current_version(e.type), e.data, "2026-01-01T00:00:00+00:00") for i, e in enumerate(match.events)]
        table, knocked = [], False
        for kind, statement in statements(record_text(build_record(str(match.match_id), match.state, events))):
            if kind == "move":
                knocked = " knock " in statement or " gin " in statement
            elif kind == "melds" and knocked:
                table, knocked = [meld.split("-") for meld in statement.split()[2:]], False
            elif kind == "layoff":
                _, _, card, _, meld = statement.split()
                grown = next(m for m in table if "-".join(sort_cards(m)) == meld)
                grown.append(card)
                assert meld_kind(grown) is not None, statement
                checked += 1
    assert checked >= 20


def two_people(client):
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"name": "Bob"}]}).json
    return created["id"], {s["seat"]: Player(client, created["id"], s["token"]) for s in created["seats"]}


def test_a_resigned_match_says_so(client):
    match_id, players = two_people(client)
    play_turns(players, 5)
    assert players[1].act({"type": "resign"}).status_code == 200
    record = client.get(f"/matches/{match_id}/export", headers=players[0].headers).json
    text = export_text(client, match_id, players[0].headers)
    last = record["events"][-1]
    assert '[Termination "resigned"]' in text and '[Result "1-0"]' in text
    assert text.splitlines()[-2:] == [
        f"{last['seq']}. S2 resign",
        "end resigned S1 0-0  ; Bob resigns: Ann wins the match.",
    ]
    assert moves(text) == expected_moves(record["events"])
    assert not any(k == "result" for k, _ in statements(text))  # the hand was never scored


def test_a_timeout_claim_and_the_times_of_a_clocked_match(client, clock):
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"name": "Bob"}], "rules": {"turn_seconds": 30}}).json
    players = {s["seat"]: Player(client, created["id"], s["token"]) for s in created["seats"]}
    play_turns(players, 3)
    waiter = 1 - players[0].view()["turn"]
    clock.advance(31)
    assert players[waiter].act({"type": "claim_timeout"}).status_code == 200
    record = client.get(f"/matches/{created['id']}/export", headers=OP).json
    text = export_text(client, created["id"])
    last = record["events"][-1]
    claimer, late = ("Ann", "Bob") if waiter == 0 else ("Bob", "Ann")
    assert text.splitlines()[-2:] == [
        f"{last['seq']}. S{waiter + 1} claim_timeout @{last['data']['at']}",
        f"end timeout S{waiter + 1} 0-0  ; {late}'s time ran out: {claimer} claims the match.",
    ]
    draw = next(e for e in record["events"] if e["type"] == "card_drawn")
    assert f"{draw['seq']}. S{draw['data']['seat'] + 1} draw stock {draw['data']['card']} @{draw['data']['at']}" in text
    assert "turn_seconds=30" in text and '[Termination "timeout"]' in text
    statements(text)


def test_a_waiting_match_a_match_called_off_and_one_being_played(client):
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"kind": "open"}]}).json
    waiting = export_text(client, created["id"])
    assert '[Seat2 "(open)"]' in waiting and '[Status "waiting"]' in waiting and '[Result "*"]' in waiting
    assert waiting.endswith("; waiting for a player to take the open seat\n")
    ann = Player(client, created["id"], created["seats"][0]["token"])
    assert ann.act({"type": "abort"}).status_code == 200
    aborted = export_text(client, created["id"], ann.headers)
    assert aborted.splitlines()[-2:] == ["2. S1 abort", "end aborted - 0-0  ; Ann called the match off before anyone joined."]
    assert '[Termination "aborted"]' in aborted and '[Result "*"]' in aborted and '[Hands "0"]' in aborted

    match_id, players = two_people(client)
    play_turns(players, 4)
    assert client.get(f"/matches/{match_id}/export?format=text", headers=players[0].headers).status_code == 403
    active = export_text(client, match_id)  # the operator's
    assert '[Status "active"]' in active and '[Termination "unterminated"]' in active
    assert active.endswith("; the match is still being played\n")
    assert [k for k, _ in statements(active)].count("move") == 4


def test_the_api_answers_plain_text_and_keeps_json_the_default(client, played):
    match_id, ann, record, text = played
    r = client.get(f"/matches/{match_id}/export?format=text", headers=ann.headers)
    assert r.status_code == 200 and r.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert r.headers["Content-Disposition"] == f'attachment; filename="gin-rummy-{match_id}.txt"'
    assert r.get_data(as_text=True) == record_text(record) == text
    plain = client.get(f"/matches/{match_id}/export", headers=ann.headers)
    as_json = client.get(f"/matches/{match_id}/export?format=json", headers=ann.headers)
    assert plain.headers["Content-Type"] == as_json.headers["Content-Type"] == "application/json"
    assert plain.json == as_json.json == record and plain.headers["ETag"] != r.headers["ETag"]
    refused = client.get(f"/matches/{match_id}/export?format=pgn", headers=ann.headers)
    assert refused.status_code == 422 and refused.headers["Content-Type"] == "application/problem+json"
    assert "format" in refused.json["errors"]


def write_record(tmp_path, record, name="match.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(record, indent=2))
    return path


def test_replay_of_a_record_file_prints_its_movetext_without_a_database(played, tmp_path, monkeypatch, capsys):
    _, _, record, text = played
    path = write_record(tmp_path, record)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setattr("service.cli.records.application", lambda settings: pytest.fail("replay FILE opened the database"))
    assert main(["replay", str(path)]) == 0
    assert capsys.readouterr().out == text
    assert main(["replay", str(path), "--format", "hands", "--hand", "1"]) == 0
    assert capsys.readouterr().out.startswith("Hand 1 — Ann starts")
    ndjson = tmp_path / "two.ndjson"
    ndjson.write_text(json.dumps(record) + "\n" + json.dumps(record) + "\n")
    assert main(["replay", str(ndjson)]) == 0
    assert capsys.readouterr().out == text + "\n" + text
    (tmp_path / "junk.json").write_text('{"format": "something else"}')
    assert main(["replay", str(tmp_path / "junk.json")]) == 1
    assert "not a match record" in capsys.readouterr().err


def test_replay_of_a_record_file_in_a_process_of_its_own_connects_to_nothing(played, tmp_path):
    _, _, record, text = played
    path = write_record(tmp_path, record)
    # A database that does not exist: any connection would fail the command.
    env = {**os.environ, "DATABASE_URL": "postgresql://nobody@127.0.0.1:9/none?connect_timeout=1"}
    done = subprocess.run([sys.executable, "-m", "service.cli", "replay", str(path)], capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == text and done.stderr == ""


def test_replay_of_a_stored_match_prints_its_movetext_on_request(played, database_url, monkeypatch, capsys):
    match_id, _, _, text = played
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert main(["replay", match_id, "--format", "text"]) == 0
    assert capsys.readouterr().out == text
    assert main(["replay", match_id]) == 0  # as before: the hands in sentences
    assert capsys.readouterr().out.startswith("Hand 1 — Ann starts")
    assert main(["replay", match_id, "--format", "text", "--hand", "1"]) == 1


def test_replay_into_a_closed_pipe_ends_quietly(played, tmp_path):
    _, _, record, _ = played
    # Far more than a pipe holds, so the writer meets the closed end.
    path = tmp_path / "many.ndjson"
    path.write_text((json.dumps(record) + "\n") * 200)
    replay = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "replay", str(path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env={**os.environ, "DATABASE_URL": "postgresql://nobody@127.0.0.1:9/none"},
    )
    head = subprocess.Popen(["head", "-1"], stdin=replay.stdout, stdout=subprocess.PIPE)
    replay.stdout.close()  # head alone reads the pipe now
    first, _ = head.communicate(timeout=60)
    errors = replay.stderr.read().decode()
    assert replay.wait(timeout=60) == 1
    assert first == b'[Movetext "1"]\n'
    assert "Traceback" not in errors and "BrokenPipeError" not in errors and errors == ""


@pytest.mark.parametrize("style", ["text", "hands"])
def test_names_a_terminal_would_act_on_are_printed_escaped(played, tmp_path, capsys, style):
    _, _, record, _ = played
    forged = copy.deepcopy(record)
    name = "Ann\x1b[2J\u202e\x07"
    forged["seats"][0]["name"] = name
    forged["events"][0]["data"]["seats"][0]["name"] = name
    assert main(["replay", str(write_record(tmp_path, forged)), "--format", style]) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in "\x1b\u202e\x07")
    assert "Ann\\u001b[2J\\u202e\\u0007" in out
    if style == "text":
        assert '[Seat1 "Ann\\u001b[2J\\u202e\\u0007 (human)"]' in out
        assert "; the digest does not match the events" in out


def test_the_worked_example_of_the_documentation_follows_the_grammar():
    doc = (ROOT / "docs" / "movetext.md").read_text()
    example = doc.split("```text\n")[1].split("```")[0]
    kinds = [kind for kind, _ in statements(example)]
    assert kinds[0] == "tag" and kinds.count("hand") == 1 and kinds[-1] == "end" and "layoff" in kinds


def test_a_timeout_without_its_seat_in_a_record_file_is_told_without_a_crash():
    from service.records.hands import ending_text

    names = ["Ann", "Bob"]
    assert ending_text({"reason": "timeout", "seat": 1, "winner": 1}, names) == "Ann's time ran out: Bob claims the match."
    assert ending_text({"reason": "timeout", "winner": 0}, names) == "Bob's time ran out: Ann claims the match."
    assert ending_text({"reason": "timeout"}, names) == "A seat's time ran out: the match is over."

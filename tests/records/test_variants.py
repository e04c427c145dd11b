"""Records of matches under the rule variants: Oklahoma (the upcard's knock limit, the
spade double), Straight Gin, Big Gin, Hollywood's three games and the match bonuses.

Each match is exported, checked against the record schema, replayed, audited, moved to
another service and back, written as movetext and played again from that text alone,
and walked for hidden cards; an old record, made before the variants, still imports as
it came.  The matches are played on the engine and appended to the store as the service
appends them: three played by the greedy player of ``tests/support/play.py`` under the
presets' shortest rules (``short_rules``), and one built to order on stacked decks
(``tests/engine/scenarios.py``), so that its doubled hand and its Big Gin are certain.

The match built to order: Oklahoma with Big Gin (``big_gin_bonus`` 31), a game to 90.

* Hand 1, Player 1 starts, 7S turned up: the knock limit is 7 and the hand is doubled
  (a spade).  Both pass the upcard; Player 1 draws 2C and knocks with KD, laying out
  8C-8D-8H 4C-5C-6C AH-2H-3H, deadwood 2C = 2.  Player 2 melds 9S-TS-JS, lays off
  nothing, and keeps QC KC 2D 3D QD 6H 5S = 10+10+2+3+10+6+5 = 46.  Player 1 scores
  2 x (46 - 2) = 88.
* Hand 2, Player 2 starts, KH turned up (not doubled): Player 2 takes it and holds
  9C-9D-9H-9S JH-QH-KH AS-2S-3S-4S, all eleven cards: Big Gin, no discard (the knock's card is the KH it drew).  Player 1
  melds nothing: 2C 5C 8C JC 3D 6D TD QD 4H 7H = 65.  Player 2 scores 65 + 31 = 96, and
  reaches 90: the match ends 88-96.
* The settlement (one game; 20 a box, 100 the game, no shutout, Player 1 won a hand):
  Player 1 88 + 20 = 108, Player 2 96 + 20 + 100 = 216.
"""

from __future__ import annotations

import copy
import json
import random
import re
import uuid
from functools import cache
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from service.api import create_app
from service.api.openapi import spec_dict
from service.api.schemas import SeatViewSchema
from service.application.views import view_for
from service.cli import main
from service.engine import State, decide, fold, redact_event, seat_view
from service.engine.deals import deal_command
from service.engine.game import AWAITING_DEAL, DEFENSE
from service.engine.rules import OPTIONAL_DEFAULTS
from service.records.format import build_record
from service.records.hands import audit, hand_detail, split_hands
from service.records.records import check_record, record_schema
from service.records.replay import replay
from service.records.text import VARIANTS, record_text
from service.store import EventStore
from service.store.upcasting import current_version
from tests.api.conftest import OPERATOR, UNLIMITED, bearer
from tests.api.test_openapi_examples import schema_checker
from tests.engine.scenarios import Table
from tests.engine.test_properties import cards_in, states_along
from tests.factories import HumanSeatFactory, MatchFactory, PlayedMatch, StartMatchFactory
from tests.records.conftest import content
from tests.records.test_tampering import downgraded
from tests.records.test_text import statements
from tests.support.play import greedy_action_on_state, short_rules

OP = bearer(OPERATOR)


@pytest.fixture
def client(store):
    return create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED}).test_client()


# --- the matches ---------------------------------------------------------------------------------


class Batches(Table):
    """A table that also keeps each command's events as one batch, as the service appends them."""

    def __init__(self, rules: dict):
        super().__init__(rules)
        self.batches = [list(self.events)]

    def do(self, command: dict) -> list:
        new = super().do(command)
        self.batches.append(new)
        return new


#: The rules of the match built to order (see the module's docstring).
BUILT_RULES = {"preset": "oklahoma", "big_gin_bonus": 31, "target_score": 90}


def built_to_order() -> Batches:
    t = Batches(BUILT_RULES)
    t.deal(["AH", "2H", "3H", "4C", "5C", "6C", "8D", "8H", "8C", "KD"],
           ["9S", "TS", "JS", "QC", "QD", "KC", "5S", "2D", "3D", "6H"], "7S", ["2C"])
    t.seat(0, "pass")
    t.seat(1, "pass")
    t.seat(0, "draw", source="stock")
    t.seat(0, "knock", card="KD")
    t.deal(["AS", "2S", "3S", "4S", "9C", "9D", "9H", "9S", "JH", "QH"],
           ["2C", "3D", "4H", "5C", "6D", "7H", "8C", "TD", "JC", "QD"], "KH")
    t.seat(1, "draw", source="discard")
    t.seat(1, "big_gin")
    return t


#: The greedy matches: (preset, seed of the deals), picked for what they hold (checked below).
GREEDY = {"oklahoma": 0, "straight": 0, "hollywood": 0}


def greedy(preset: str) -> Batches:
    """The preset's shortest match between two greedy players."""
    rng = random.Random(GREEDY[preset])
    t = Batches(short_rules(preset))
    while not t.state.finished:
        t.do(deal_command(rng) if t.state.phase == AWAITING_DEAL else greedy_action_on_state(t.state))
    return t


KINDS = ["oklahoma", "straight", "hollywood", "built"]


@cache
def played(kind: str) -> Batches:
    return built_to_order() if kind == "built" else greedy(kind)


def fresh(kind: str) -> PlayedMatch:
    """The match under a new id, to append to a store."""
    t = played(kind)
    return PlayedMatch(uuid.uuid4(), copy.deepcopy(t.batches), t.state)


def as_recorded(events) -> list[dict]:
    return [
        {"seq": i + 1, "type": e.type, "schema_version": current_version(e.type),
         "recorded_at": "2026-12-01T12:00:00+00:00", "data": copy.deepcopy(e.data)}
        for i, e in enumerate(events)
    ]


def record_of(kind: str) -> dict:
    """The match's record, as ``build_record`` makes it from the events (no database)."""
    t = played(kind)
    return build_record("00000000-0000-4000-8000-00000000000" + str(KINDS.index(kind)), t.state, as_recorded(t.events))


def exported(store, client, kind: str) -> tuple[PlayedMatch, dict]:
    match = fresh(kind)
    match.append_to(store)
    r = client.get(f"/matches/{match.match_id}/export", headers=OP)
    assert r.status_code == 200, r.json
    return match, r.json


def of_type(events, etype: str) -> list[dict]:
    return [e["data"] for e in events if e["type"] == etype]


# --- what each kind of match must hold --------------------------------------------------------


def expected_points(hand: list[dict], rules: dict) -> int:
    """A hand's points from its arrangements, by the rule books (not by the engine's code)."""
    knock = next(e["data"] for e in hand if e["type"] == "knocked")
    defense = next(e["data"] for e in hand if e["type"] == "defended")
    k, d = knock["deadwood"], defense["deadwood"]
    if knock.get("big_gin"):
        points = d + rules["big_gin_bonus"]
    elif knock["gin"]:
        points = d + rules["gin_bonus"]
    elif d <= k:
        points = k - d + rules["undercut_bonus"]
    else:
        points = d - k
    upcard = hand[0]["data"]["deck"][20]
    return 2 * points if rules.get("spade_doubles") and upcard.endswith("S") else points


def hollywood_games(hand_ends: list[dict], target: int) -> list[dict]:
    """Hollywood's three games after the last hand, each hand's ``games`` checked against
    the one before: a hand's points go to its winner only, in games still open, each game
    it enters gets the points and one hand won, and is decided once a score reaches the
    target; the games entered are the open ones among the first few, so the games are
    decided in order, one, two, three."""
    before = [{"scores": [0, 0], "hands": [0, 0], "winner": None} for _ in range(3)]
    for end in hand_ends:
        after, entered = end["games"], []
        assert len(after) == 3
        for old, new in zip(before, after):
            entered.append(new != old)
            if new != old:
                seat = end["winner"]
                assert old["winner"] is None and seat is not None, (old, new)
                scores, hands = list(old["scores"]), list(old["hands"])
                scores[seat] += end["points"]
                hands[seat] += 1
                assert new == {"scores": scores, "hands": hands, "winner": seat if scores[seat] >= target else None}
        last = max((i for i, e in enumerate(entered) if e), default=-1)
        assert all(entered[i] or before[i]["winner"] is not None for i in range(last + 1)), (before, after)
        decided = [g["winner"] is not None for g in after]
        assert decided == sorted(decided, reverse=True), after
        before = after
    return before


def settled(game: dict, rules: dict) -> dict:
    """A game's settlement: points, the box bonus a hand won, the game bonus, doubled for a shutout."""
    totals = [game["scores"][s] + rules["box_bonus"] * game["hands"][s] for s in (0, 1)]
    winner, shutout = game["winner"], False
    if winner is not None:
        totals[winner] += rules["game_bonus"]
        if rules["shutout_doubles"] and game["hands"][1 - winner] == 0:
            totals[winner] *= 2
            shutout = True
    return {**game, "totals": totals, "shutout": shutout}


def test_the_matches_hold_what_they_are_picked_for():
    ok = of_type(record_of("oklahoma")["events"], "hand_ended")
    assert [(e["result"], e["points"], e.get("doubled")) for e in ok] == [("gin", 52, True)]  # a doubled Gin
    straight = of_type(record_of("straight")["events"], "hand_ended")
    assert [(e["result"], e["points"]) for e in straight] == [("gin", 26)]  # Straight Gin ends in Gin
    holly = of_type(record_of("hollywood")["events"], "hand_ended")
    assert len(holly) >= 3 and all(e["winner"] is not None for e in holly)
    assert all(g["winner"] is not None for g in holly[-1]["games"])
    built = of_type(record_of("built")["events"], "hand_ended")
    assert [(e["result"], e["winner"], e["points"], e.get("doubled")) for e in built] == [
        ("knock", 0, 88, True), ("gin", 1, 96, None)
    ]


# --- the record and its schema ----------------------------------------------------------------


VALIDATOR = Draft202012Validator(record_schema(), format_checker=FormatChecker())


@pytest.mark.parametrize("kind", KINDS)
def test_the_exported_record_validates_and_carries_the_variants(store, client, kind):
    match, record = exported(store, client, kind)
    errors = sorted(VALIDATOR.iter_errors(record), key=lambda e: list(e.absolute_path))
    assert not errors, [(list(e.absolute_path), e.message) for e in errors[:3]]
    rules, events = record["rules"], record["events"]
    assert rules == events[0]["data"]["rules"] == match.state.rules.to_json()
    expected = {
        "oklahoma": {"preset": "oklahoma", "single_hand": True, "knock_limit": 10, "oklahoma": True, "spade_doubles": True,
                     "game_bonus": 100, "box_bonus": 20, "shutout_doubles": True},
        "straight": {"preset": "straight", "single_hand": True, "knock_limit": 0, "big_gin_bonus": 31, "game_bonus": 100,
                     "box_bonus": 25, "shutout_doubles": True},
        "hollywood": {"preset": "hollywood", "target_score": 1, "hollywood": True, "game_bonus": 100, "box_bonus": 25,
                      "shutout_doubles": True},
        "built": {"preset": "oklahoma", "target_score": 90, "oklahoma": True, "spade_doubles": True, "big_gin_bonus": 31,
                  "game_bonus": 100, "box_bonus": 20, "shutout_doubles": True},
    }[kind]
    assert {k: rules[k] for k in expected} == expected
    # A variant left at its default is left out of the recorded rules.
    assert not {k for k in VARIANTS if k in rules and rules[k] == OPTIONAL_DEFAULTS[k]}

    ends = of_type(events, "hand_ended")
    for hand in split_hands(events):
        end = next(e["data"] for e in hand if e["type"] == "hand_ended")
        spade = hand[0]["data"]["deck"][20].endswith("S")
        assert end.get("doubled") is (True if rules.get("spade_doubles") and spade and end["winner"] is not None else None)
        assert ("games" in end) is (kind == "hollywood")
        if end["winner"] is not None:
            assert end["points"] == expected_points(hand, rules)
    big = [k for k in of_type(events, "knocked") if k.get("big_gin")]
    assert [(k["seat"], k["card"], k["gin"], k["deadwood"]) for k in big] == ([(1, "KH", True, 0)] if kind == "built" else [])

    ended = events[-1]["data"]
    assert events[-1]["type"] == "match_ended" and ended["reason"] == "score"
    if kind == "hollywood":
        target = rules["target_score"]
        games = hollywood_games(ends, target)
        assert ended["games"] == [settled(g, rules) for g in games]
        won = [sum(1 for g in games if g["winner"] == s) for s in (0, 1)]
        assert max(won) >= 2 and ended["winner"] == won.index(max(won))
    else:
        hands_won = [sum(1 for e in ends if e["winner"] == s) for s in (0, 1)]
        game = {"scores": ended["scores"], "hands": hands_won, "winner": ended["winner"]}
        assert ended["games"] == [settled(game, rules)]
    assert ended["totals"] == [sum(g["totals"][s] for g in ended["games"]) for s in (0, 1)]
    assert record["result"] == {"status": "finished", "hands": len(ends), "scores": ended["scores"], "winner": ended["winner"]}


def test_the_built_match_scores_as_worked_out_by_hand():
    record = record_of("built")
    hand1, hand2 = split_hands(record["events"])
    knock, defense = (next(e["data"] for e in hand1 if e["type"] == t) for t in ("knocked", "defended"))
    assert (knock["deadwood_cards"], knock["deadwood"], defense["layoffs"], defense["deadwood"]) == (["2C"], 2, [], 46)
    assert next(e["data"] for e in hand1 if e["type"] == "hand_ended")["points"] == 2 * (46 - 2) == 88
    big, defense = (next(e["data"] for e in hand2 if e["type"] == t) for t in ("knocked", "defended"))
    assert big == {"seat": 1, "card": "KH", "gin": True, "big_gin": True, "deadwood_cards": [], "deadwood": 0,
                   "melds": [["9C", "9D", "9H", "9S"], ["JH", "QH", "KH"], ["AS", "2S", "3S", "4S"]]}
    assert (defense["melds"], defense["deadwood"]) == ([], 65)
    end = next(e["data"] for e in hand2 if e["type"] == "hand_ended")
    assert (end["points"], end["scores"], "doubled" in end) == (65 + 31, [88, 96], False)
    assert record["events"][-1]["data"] == {
        "winner": 1, "scores": [88, 96], "reason": "score",
        "games": [{"scores": [88, 96], "hands": [1, 1], "winner": 1, "totals": [88 + 20, 96 + 20 + 100], "shutout": False}],
        "totals": [108, 216],
    }


# --- replay and the audit ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_replaying_the_record_reproduces_the_final_state(kind):
    record = record_of(kind)
    state = played(kind).state
    again = replay(record["events"]).state
    assert again == state
    assert (again.scores, again.winner, again.games, again.settlement) == (
        state.scores, state.winner, state.games, state.settlement
    )
    assert again.settlement == {k: record["events"][-1]["data"][k] for k in ("games", "totals")}
    assert check_record(record)[2] == state


@pytest.mark.parametrize("kind", KINDS)
def test_the_audit_passes_and_the_hands_show_the_doubles_the_games_and_big_gin(kind):
    record = record_of(kind)
    report = audit(record["events"])
    assert report["problems"] == [] and report["ok"]
    hands = split_hands(record["events"])
    assert [h["points"] for h in report["hands"]] == [e["points"] for e in of_type(record["events"], "hand_ended")]
    for hand in hands:
        detail = hand_detail(hand)
        ended = next(e["data"] for e in hand if e["type"] == "hand_ended")
        assert detail["end"].get("doubled") == ended.get("doubled") and detail["end"].get("games") == ended.get("games")
    if kind == "built":
        first, second = (hand_detail(h) for h in hands)
        assert first["end"] == {"result": "knock", "winner": 0, "points": 88, "scores": [88, 0], "doubled": True}
        assert first["end"]["points"] == 2 * (first["defense"]["deadwood"] - first["knock"]["deadwood"])
        assert second["plays"][-1] == {"seq": 11, "seat": 1, "action": "big_gin", "card": "KH"}
        assert second["knock"]["big_gin"] is True
        assert second["end"]["points"] == second["defense"]["deadwood"] + 31 == 96


@pytest.fixture(scope="module")
def api_schema():
    """A checker of answers against the service's OpenAPI document (as in test_openapi_examples)."""
    return schema_checker(spec_dict(create_app({"STORE": EventStore(pool=None)})))


@pytest.mark.parametrize("kind", KINDS)
def test_the_api_shows_each_hand_as_records_hands_py_details_it(store, client, kind):
    match, record = exported(store, client, kind)
    mid = match.match_id
    summary = client.get(f"/matches/{mid}/hands", headers=OP).json["hands"]
    assert [(h["result"], h["winner"], h["points"], h["scores"]) for h in summary] == [
        (e["result"], e["winner"], e["points"], e["scores"]) for e in of_type(record["events"], "hand_ended")
    ]
    for number, hand in enumerate(split_hands(record["events"]), 1):
        shown = client.get(f"/matches/{mid}/hands/{number}", headers=OP).json
        detail = hand_detail(hand)
        # doubled, games and big_gin, where they occur, as service/records/hands.py gives them.
        assert (shown["end"], shown["knock"], shown["plays"]) == (detail["end"], detail["knock"], detail["plays"])


@pytest.mark.parametrize("kind", KINDS)
def test_the_api_hand_details_of_these_matches_are_as_documented(store, client, api_schema, kind):
    match, record = exported(store, client, kind)
    for number in range(1, record["result"]["hands"] + 1):
        shown = client.get(f"/matches/{match.match_id}/hands/{number}", headers=OP).json
        assert api_schema("/components/schemas/HandDetail", shown) == [], number


@pytest.mark.parametrize("kind", KINDS)
def test_the_view_is_as_documented_in_every_state_of_these_matches(kind):
    """The view is served without a schema dump (tests/api/test_view_shape.py): in every
    state of the match (after each command, as it is served) it must already be what
    SeatViewSchema documents."""
    schema = SeatViewSchema()
    state = None
    for batch in played(kind).batches:
        state = fold(batch, state)
        for seat in (0, 1):
            view = json.loads(json.dumps(view_for(state, seat, uuid.uuid4())))
            assert schema.validate(view) == {}, (state, seat)
            assert schema.dump(view) == view


@pytest.mark.parametrize("kind", KINDS)
def test_the_api_audit_of_these_matches_passes(store, client, kind):
    match, _ = exported(store, client, kind)
    report = client.get(f"/matches/{match.match_id}/audit", headers=OP).json
    assert report["problems"] == [] and report["ok"] is True


def test_the_api_shows_the_built_match_as_worked_out_by_hand(store, client):
    match, _ = exported(store, client, "built")
    mid = match.match_id
    view = client.get(f"/matches/{mid}", headers=OP).json
    assert (view["scores"], view["hands_won"], view["winner"]) == ([88, 96], [1, 1], 1)
    assert view["settlement"] == {
        "games": [{"scores": [88, 96], "hands": [1, 1], "winner": 1, "totals": [108, 216], "shutout": False}], "totals": [108, 216]
    }
    second = client.get(f"/matches/{mid}/hands/2", headers=OP).json
    assert second["plays"][-1] == {"seq": 11, "seat": 1, "action": "big_gin", "card": "KH"}
    assert (second["defense"]["deadwood"], second["end"]["points"]) == (65, 65 + 31)
    first = client.get(f"/matches/{mid}/hands/1", headers=OP).json
    assert (first["knock"]["deadwood"], first["defense"]["deadwood"], first["end"]["points"]) == (2, 46, 2 * (46 - 2))
    assert first["end"].get("doubled") is True
    assert second["knock"].get("big_gin") is True and "doubled" not in second["end"]


# --- export, import, export -------------------------------------------------------------------


#: What a view says of where its match came from, and nothing else, differs after an import.
def comparable(view: dict) -> dict:
    return {k: v for k, v in view.items() if k not in ("provenance",)}


@pytest.mark.parametrize("kind", KINDS)
def test_export_import_round_trips_and_the_imported_view_is_the_original(store, client, target, kind):
    match, record = exported(store, client, kind)
    imported = target.post("/matches/import", json=record)
    assert imported.status_code == 201, imported.json
    assert imported.json["id"] == str(match.match_id) and imported.json["created"] is True
    again = target.get(f"/matches/{match.match_id}/export", headers=OP).json
    assert content(again) == content(record)
    original = client.get(f"/matches/{match.match_id}", headers=OP).json
    copied = target.get(f"/matches/{match.match_id}", headers=OP).json
    assert comparable(copied) == comparable(original)
    assert copied["provenance"]["origin"] == "imported"
    assert (copied["scores"], copied["winner"], copied["settlement"], copied["games"]) == (
        list(match.state.scores), match.state.winner, match.state.settlement,
        list(match.state.games) if match.state.games else None,
    )
    if kind == "built":
        assert copied["settlement"]["totals"] == [108, 216] and copied["last_hand"]["points"] == 96


# --- the movetext -----------------------------------------------------------------------------


def code(seat: int | None) -> str:
    return "-" if seat is None else f"S{seat + 1}"


def pair(scores) -> str:
    return f"{scores[0]}-{scores[1]}"


def scores_of(token: str) -> list[int]:
    return [int(x) for x in token.split("-")]


def header_rules(text: str) -> dict:
    """The rules of the ``[Rules]`` tag: the preset, then name=value (JSON, or a bare choice)."""
    tag = json.loads(re.search(r'^\[Rules (".*")\]$', text, re.M).group(1))
    preset, *pairs = tag.split(", ")
    rules = {"preset": preset}
    for item in pairs:
        name, value = item.split("=", 1)
        try:
            rules[name] = json.loads(value)
        except json.JSONDecodeError:
            rules[name] = value
    return rules


def played_from_text(text: str) -> list:
    """The match played again on the engine from its movetext alone: the rules and the
    seats of the header, each hand's deck (the starter's deal, the other's, the upcard,
    the stock) and salt, and every move line as its command (a knock with the melds the
    next line lays out)."""
    rules = header_rules(text)
    seats = []
    for name, kind in re.findall(r'^\[Seat[12] "(.*) \((human)\)"\]$', text, re.M):
        seats.append({"name": name, "kind": kind})
    events = decide(State(), {"type": "start_match", "rules": rules, "seats": seats})
    state = fold(events)
    deal: dict = {}
    pending = None

    def do(command):
        nonlocal state
        new = decide(state, command)
        state = fold(new, state)
        events.extend(new)

    for kind, line in statements(text):
        words = line.split()
        if kind == "hand":
            deal = {"starter": int(words[3][1]) - 1}
        elif kind == "deal":
            deal[int(words[1][1]) - 1] = words[2:]
        elif kind == "upcard":
            deal["upcard"] = words[1]
        elif kind == "stock":
            deal["stock"] = words[1:]
        elif kind == "salt":
            starter = deal["starter"]
            deck = deal[starter] + deal[1 - starter] + [deal["upcard"]] + deal["stock"]
            do({"type": "deal", "deck": deck, "salt": json.loads(line.removeprefix("salt "))})
        elif kind in ("move", "big_gin"):
            seat, action = int(words[1][1]) - 1, words[2:]
            command = {"seat": seat, "type": action[0]}
            if action[0] == "draw":
                command["source"] = action[1]
            elif action[0] in ("discard", "knock", "gin"):
                command["card"] = action[1]
            if action[0] in ("knock", "gin"):
                pending = command
            else:
                do(command)
        elif kind == "melds" and pending is not None:
            do({**pending, "melds": [m.split("-") for m in words[2:]]})
            pending = None
    return events


@pytest.mark.parametrize("kind", KINDS)
def test_the_movetext_plays_the_same_match_again(kind):
    record = record_of(kind)
    again = played_from_text(record_text(record))
    assert [(e.type, e.data) for e in again] == [(e["type"], e["data"]) for e in record["events"]]


@pytest.mark.parametrize("kind", KINDS)
def test_the_movetext_writes_the_variant_lines_as_the_events_say(kind):
    record = record_of(kind)
    text = record_text(record)
    lines = statements(text)
    events = record["events"]
    # Each hand: its result (doubled when it is), then under Hollywood its three games.
    results = [s for k, s in lines if k == "result"]
    ends = of_type(events, "hand_ended")
    assert results == [
        f"result dead totals {pair(e['scores'])}" if e["winner"] is None
        else f"result {e['result']} {code(e['winner'])} {e['points']}{' doubled' if e.get('doubled') else ''} totals {pair(e['scores'])}"
        for e in ends
    ]
    games = [s for k, s in lines if k == "games"]
    assert games == [
        "games " + " ".join(pair(g["scores"]) + (f"={code(g['winner'])}" if g["winner"] is not None else "") for g in e["games"])
        for e in ends if "games" in e
    ]
    assert len(games) == (len(ends) if kind == "hollywood" else 0)
    # Big Gin: a move of its own, no card thrown.
    big = [(int(s.split(".")[0]), s.split()[1]) for k, s in lines if k == "big_gin"]
    assert big == [(e["seq"], code(e["data"]["seat"])) for e in events if e["type"] == "knocked" and e["data"].get("big_gin")]
    # The end, each game settled, and the match totals.
    ended = events[-1]["data"]
    tail = [s for k, s in lines if k in ("end", "game", "match_totals")]
    assert tail == [
        f"end score {code(ended['winner'])} {pair(ended['scores'])}",
        *(f"game {n} points {pair(g['scores'])} hands {pair(g['hands'])} winner {code(g['winner'])} totals {pair(g['totals'])}"
          + (" shutout" if g["shutout"] else "") for n, g in enumerate(ended["games"], 1)),
        f"match totals {pair(ended['totals'])}",
    ]
    # Read back, the settlement lines give match_ended's games and totals.
    read = []
    for s in tail[1:-1]:
        w = s.split()
        read.append({"scores": scores_of(w[3]), "hands": scores_of(w[5]), "winner": None if w[7] == "-" else int(w[7][1]) - 1,
                     "totals": scores_of(w[9]), "shutout": w[-1] == "shutout"})
    assert read == ended["games"] and scores_of(tail[-1].split()[2]) == ended["totals"]
    # The header's rules are the record's, with every variant it sets.
    rules = header_rules(text)
    assert {k: v for k, v in rules.items() if k in record["rules"]} == record["rules"]
    assert [k for k in VARIANTS if k in rules] == [k for k in VARIANTS if k in record["rules"]]


def test_the_built_match_reads_as_worked_out_by_hand():
    text = record_text(record_of("built"))
    lines = [s for _, s in statements(text)]
    assert "6. S1 knock KD" in lines and "11. S2 big_gin KH" in lines
    assert lines[lines.index("11. S2 big_gin KH") + 1 :] == [
        "melds S2 9C-9D-9H-9S JH-QH-KH AS-2S-3S-4S",
        "deadwood S2 = 0",
        "melds S1",
        "deadwood S1 2C 5C 8C JC 3D 6D TD QD 4H 7H = 65",
        "result gin S2 96 totals 88-96",
        "end score S2 88-96",
        "game 1 points 88-96 hands 1-1 winner S2 totals 108-216",
        "match totals 108-216",
    ]
    assert "result knock S1 88 doubled totals 88-0" in lines
    assert "result knock S1 88 doubled totals 88-0  ; Player 1 scores 88 (doubled: a spade upcard)" in text.splitlines()
    assert "oklahoma=true, spade_doubles=true, big_gin_bonus=31, game_bonus=100, box_bonus=20, shutout_doubles=true" in text


def test_the_documented_grammar_covers_the_variant_lines():
    doc = (Path(__file__).parents[2] / "docs" / "movetext.md").read_text()
    grammar = doc.split("```ebnf\n")[1].split("```")[0]
    for word in ('"big_gin "', '" doubled"', '"games"', '"game "', '"match totals "'):
        assert word in grammar, word


def test_the_hands_in_sentences_tell_a_big_gin(tmp_path, capsys):
    """``gin-rummy replay FILE --format hands`` (no database) on a record with a Big Gin."""
    path = tmp_path / "big-gin.json"
    path.write_text(json.dumps(record_of("built")))
    assert main(["replay", str(path), "--format", "hands", "--hand", "2"]) == 0
    out = capsys.readouterr().out
    assert "None" not in out and "Player 2 scores 96" in out


# --- no hidden card ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_no_seat_view_or_redacted_event_holds_a_card_the_seat_cannot_know(kind):
    events = played(kind).events
    checked = 0
    for seat in (0, 1):
        opponent = 1 - seat
        for event, state in states_along(events):
            knowable = set(state.hands[seat]) | set(state.discard_pile) | state.known[opponent]
            if state.phase == DEFENSE or event.type in ("knocked", "defended"):
                knowable |= cards_in(state.knock) | cards_in(state.defense)  # laid out on the table
            view = seat_view(state, seat)
            live = {k: v for k, v in view.items() if k != "last_hand"}  # last_hand: a hand over, revealed
            assert cards_in(live) <= knowable, (event, cards_in(live) - knowable)
            assert cards_in([view["games"], view["settlement"], view["doubled"], view["knock_limit"]]) == set()
            seen = redact_event(event.to_json(), seat)
            if event.type == "hand_dealt":
                assert cards_in(seen) == set(state.hands[seat]) | {state.discard_pile[0]}
            elif event.type not in ("hand_ended", "match_ended"):
                assert cards_in(seen) <= knowable, (event, cards_in(seen) - knowable)
            else:
                assert cards_in({k: v for k, v in seen["data"].items() if k != "deck"}) == set()
            checked += 1
    assert checked == 2 * len(events)


# --- a record from before the variants ------------------------------------------------------


def test_an_old_record_without_any_variant_imports_unchanged(store, client, target):
    start = StartMatchFactory(seats=[HumanSeatFactory(), HumanSeatFactory()], rules={"preset": "classic", "target_score": 40})
    match = MatchFactory.create(store=store, start=start, seed=3)
    genuine = client.get(f"/matches/{match.match_id}/export", headers=OP).json
    old = downgraded(genuine)  # as a service before deal commitments wrote it: schema version 1
    for record in (genuine, old):
        assert not set(VARIANTS) & set(record["rules"]) and not set(VARIANTS) & set(record["events"][0]["data"]["rules"])
        assert not any(set(VARIANTS) & set(e["data"]) for e in record["events"])
        assert not any({"doubled", "games", "big_gin", "totals"} & set(e["data"]) for e in record["events"])
        assert not any(v in record_text(record) for v in VARIANTS)
    assert target.post("/matches/import", json=genuine).status_code == 201
    assert content(target.get(f"/matches/{match.match_id}/export", headers=OP).json) == content(genuine)
    r = target.post("/matches/import", json=old)
    assert r.status_code == 201, r.json
    here = r.json["id"]
    again = target.get(f"/matches/{here}/export", headers=OP).json
    assert content(again) == {**content(old), "match_id": here}
    assert again["rules"] == old["rules"] == genuine["rules"]
    view = target.get(f"/matches/{here}", headers=OP).json
    # The complete rules a view shows: every variant at its default, none in play.
    assert {k: view["rules"][k] for k in VARIANTS} == {k: OPTIONAL_DEFAULTS[k] for k in VARIANTS}
    assert (view["settlement"], view["games"], view["doubled"], view["scores"]) == (None, None, False, list(match.state.scores))
    assert target.get(f"/matches/{here}/audit", headers=OP).json["ok"] is True

"""Crafted records, each after a defect an outside audit found: every one is refused
with a precise 422 (never a 500), and nothing of it is written."""

from __future__ import annotations

import copy
import uuid

import pytest

from service.api import create_app
from service.bots import BOTS_VERSION
from service.engine.cards import CARD_INDEX
from service.records.format import digest_of
from tests.api.conftest import OPERATOR, UNLIMITED, bearer
from tests.factories import HumanSeatFactory, MatchFactory, StartMatchFactory
from tests.records.conftest import content

OP = bearer(OPERATOR)


@pytest.fixture
def client(store):
    return create_app({"STORE": store, "OPERATOR_TOKEN": OPERATOR, "TESTING": True, **UNLIMITED}).test_client()


@pytest.fixture
def genuine(store, client):
    """A finished match between two people, several hands long, as exported."""
    start = StartMatchFactory(seats=[HumanSeatFactory(), HumanSeatFactory()], rules={"target_score": 60})
    match = MatchFactory.create(store=store, start=start, seed=3)
    record = client.get(f"/matches/{match.match_id}/export", headers=OP).json
    assert record["result"]["status"] == "finished"
    return record


def forged(record, change) -> dict:
    """A copy of ``record`` under a new id, changed by ``change(copy)``, its digest
    recomputed (as a forger would)."""
    record = copy.deepcopy(record)
    record["match_id"] = str(uuid.uuid4())
    del record["signature"]  # a forger cannot sign
    change(record)
    record["digest"]["value"] = digest_of(record["events"])
    return record


def refused(target, record, code="invalid_record"):
    r = target.post("/matches/import", json=record)
    assert r.status_code == 422, (r.status_code, r.json)
    assert r.mimetype == "application/problem+json" and r.json["code"] == code, r.json
    assert target.get(f"/matches/{record['match_id']}", headers=OP).status_code == 404  # nothing written
    return r.json


def first(record, etype) -> dict:
    return next(e for e in record["events"] if e["type"] == etype)


# --- defect 2: 500 errors on import -------------------------------------------------------------


@pytest.mark.parametrize("etype", ["card_drawn", "card_discarded", "knocked", "defended"])
def test_defect_2_a_seat_written_as_1_0_is_refused_not_a_500(genuine, target, etype):
    def change(record):
        event = first(record, etype)
        event["data"]["seat"] = float(event["data"]["seat"])

    problem = refused(target, forged(genuine, change))
    assert "is not an integer" in problem["detail"] and problem["index"] == next(
        i for i, e in enumerate(genuine["events"]) if e["type"] == etype
    )


def test_defect_2_final_scores_as_floats_are_refused(genuine, target):
    def change(record):
        record["events"][-1]["data"]["scores"] = [float(s) for s in record["events"][-1]["data"]["scores"]]
        record["result"]["scores"] = [float(s) for s in record["result"]["scores"]]

    assert "is not an integer" in refused(target, forged(genuine, change))["detail"]


@pytest.mark.parametrize(
    "when", ["0001-01-01T00:00:00+14:00", "2026-12-01T09:00:00+23:59", "2026-12-01T09:00:00", "9999-12-31T23:59:59+00:00"]
)
def test_defect_2_times_python_cannot_hold_are_refused(genuine, target, when):
    def change(record):
        for event in record["events"]:
            event["recorded_at"] = when

    problem = refused(target, forged(genuine, change))
    assert "events/0/recorded_at" in problem["detail"] or "RFC 3339" in problem["detail"], problem


def test_defect_2_a_clock_time_python_cannot_hold_is_refused(client, target):
    created = client.post(
        "/matches", json={"seats": [{"name": "Ann"}, {"kind": "open"}], "rules": {"turn_seconds": 60}}
    ).json
    client.post(f"/matches/{created['id']}/join", json={"code": created["invite"]["code"], "name": "Bob"})
    record = client.get(f"/matches/{created['id']}/export", headers=OP).json

    def change(record):
        record["events"][-1]["data"]["at"] = "0001-01-01T00:00:00+14:00"

    problem = refused(target, forged(record, change), code="illegal_event")
    assert problem["index"] == len(record["events"]) - 1 and problem["rule"] == "invalid_time"


# --- defect 4: floats kept ----------------------------------------------------------------------


@pytest.mark.parametrize("where", ["hand", "seq", "schema_version"])
def test_defect_4_floats_in_hand_seq_or_schema_version_are_refused(genuine, target, where):
    def change(record):
        event = first(record, "hand_dealt")
        if where == "hand":
            event["data"]["hand"] = float(event["data"]["hand"])
        else:
            event[where] = float(event[where])

    assert "is not an integer" in refused(target, forged(genuine, change))["detail"]


# --- defect 9: recorded_at ----------------------------------------------------------------------


def test_defect_9_a_record_dated_in_the_future_is_refused(genuine, target):
    def change(record):
        record["events"][-1]["recorded_at"] = "8999-01-01T00:00:00+00:00"

    assert "in the future" in refused(target, forged(genuine, change))["detail"]


def test_defect_9_recorded_times_going_back_are_refused(genuine, target):
    def change(record):
        record["events"][1]["recorded_at"] = "2001-01-01T00:00:00+00:00"

    assert "before the previous event" in refused(target, forged(genuine, change))["detail"]


def test_defect_9_errors_name_the_events_place_and_its_seq_as_the_audit_does(genuine, target):
    def change(record):
        record["events"][1]["recorded_at"] = "2001-01-01T00:00:00+00:00"

    problem = refused(target, forged(genuine, change))
    # events[1] is the event the audit and the events feed call seq 2
    assert problem["index"] == 1 and problem["seq"] == 2, problem
    assert problem["detail"].startswith("events[1] (seq 2):"), problem["detail"]


# --- defect 1: schema version 1 switched off the deal check -------------------------------------


def indices(record, etype):
    return [i for i, e in enumerate(record["events"]) if e["type"] == etype]


def test_defect_1_relabelling_a_deal_as_version_1_is_refused_at_that_deal(genuine, target):
    deal, end = indices(genuine, "hand_dealt")[1], indices(genuine, "hand_ended")[1]

    def change(record):
        events = record["events"]
        events[deal]["schema_version"] = events[end]["schema_version"] = 1
        deck = events[deal]["data"]["deck"]
        deck[30], deck[31] = deck[31], deck[30]  # deep in the stock; the old commitment kept

    problem = refused(target, forged(genuine, change))
    assert problem["index"] == deal and "salt" in problem["detail"] + str(problem.get("errors")), problem


def test_defect_1_a_version_1_hand_end_holding_a_deck_or_salt_is_refused(genuine, target):
    end = indices(genuine, "hand_ended")[0]

    def change(record):
        record["events"][end]["schema_version"] = 1
        record["events"][end]["data"]["salt"] = "not the salt"

    problem = refused(target, forged(genuine, change))
    assert problem["index"] == end and "salt" in problem["detail"] and "not allowed" in problem["detail"], problem


def downgraded(record) -> dict:
    """The record as a service before deal commitments would have written it."""
    def change(record):
        for event in record["events"]:
            data = event["data"]
            if event["type"] == "hand_dealt":
                event["schema_version"] = 1
                del data["salt"], data["commitment"]
            elif event["type"] == "hand_ended":
                event["schema_version"] = 1
                del data["deck"], data["salt"]
            elif event["type"] == "match_ended":
                event["schema_version"] = 1
                del data["reason"]
            elif event["type"] == "defended":  # version 1 sorted the layoffs by meld and rank
                event["schema_version"] = 1
                data["layoffs"].sort(key=lambda x: (x["meld"], CARD_INDEX[x["card"]]))

    return forged(record, change)


def test_defect_1_a_genuine_version_1_record_imports_exports_as_it_came_and_imports_again(genuine, target):
    old = downgraded(genuine)
    first_import = target.post("/matches/import", json=old)
    assert first_import.status_code == 201, first_import.json
    here = first_import.json["id"]  # changed, so unsigned: stored under an id of its own
    exported = target.get(f"/matches/{here}/export", headers=OP).json
    assert content(exported) == {**content(old), "match_id": here}  # the versions it came in, not laundered into version 2
    assert target.post("/matches/import", json=old).status_code == 200
    # Read through the API, events are at today's versions: the deal's salt is "".
    feed = target.get(f"/matches/{here}/events", headers=OP).json["events"]
    deal = next(e for e in feed if e["type"] == "hand_dealt")
    assert deal["schema_version"] == 2 and deal["data"]["salt"] == ""
    assert target.get(f"/matches/{here}/audit", headers=OP).json["ok"]


def test_defect_1_a_schema_version_going_down_is_refused(genuine, target):
    deals = indices(genuine, "hand_dealt")

    def change(record):
        event = record["events"][deals[1]]
        event["schema_version"] = 1
        del event["data"]["salt"], event["data"]["commitment"]

    problem = refused(target, forged(genuine, change))
    assert problem["index"] == deals[1] and "older version after a newer one" in problem["detail"]


# --- defect 3: imports that could never continue -------------------------------------------------


def cut(record, count) -> dict:
    """The record's first ``count`` events, as a record of an unfinished match."""
    from service.engine import fold
    from service.records.format import build_record
    from service.records.records import upcast_events

    events = copy.deepcopy(record["events"][:count])
    made = build_record(str(uuid.uuid4()), fold(upcast_events(events)), events)
    return made


def continues(target, record) -> dict:
    r = target.post("/matches/import", json=record)
    assert r.status_code == 201, r.json
    tokens = [s["token"] for s in r.json["seats"] if s["token"]]
    here = r.json["id"]  # unsigned: an id of its own
    views = [target.get(f"/matches/{here}", headers=bearer(t)).json for t in tokens]
    to_act = [v for v in views if v["turn"] == v["seat"]]
    assert len(to_act) == 1 and to_act[0]["phase"] in ("upcard_offer", "draw"), views
    exported = target.get(f"/matches/{here}/export", headers=OP).json
    assert exported["events"][: len(record["events"])] == record["events"]  # the record, then what followed
    assert len(exported["events"]) > len(record["events"])
    assert target.post("/matches/import", json=record).status_code == 200  # the same record again
    return to_act[0]


@pytest.mark.parametrize("where", ["after the start", "after a hand"])
def test_defect_3_a_record_cut_before_a_deal_continues_with_the_deal(genuine, target, where):
    count = 1 if where == "after the start" else indices(genuine, "hand_ended")[0] + 1
    view = continues(target, cut(genuine, count))
    assert view["hand_number"] == (1 if count == 1 else 2)


def test_defect_3_a_record_cut_on_the_computers_turn_continues_with_its_move(client, target):
    from tests.api.conftest import Player
    from tests.support.matches import play_to_the_end

    for _ in range(20):  # a deal where the computer gets a turn (Ann may end the hand at once)
        created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"kind": "computer", "level": "easy"}], "single_hand": True}).json
        play_to_the_end({0: Player(client, created["id"], created["seats"][0]["token"])})
        record = client.get(f"/matches/{created['id']}/export", headers=OP).json
        computer_moves = [i for i, e in enumerate(record["events"]) if e["type"] == "card_drawn" and e["data"]["seat"] == 1]
        if computer_moves:
            break
    view = continues(target, cut(record, computer_moves[0]))
    assert view["seat"] == 0


def test_defect_3_an_unfinished_match_between_two_computers_is_refused(genuine, target):
    def change(record):
        seats = record["events"][0]["data"]["seats"]
        seats[:] = [{"kind": "computer", "level": "easy", "name": f"Bot {i}", "seed": i} for i in range(2)]

    record = cut(forged(genuine, change), 1)
    r = target.post("/matches/import", json=record)
    assert r.status_code == 422 and r.json["code"] == "cannot_continue", r.json
    assert target.get(f"/matches/{record['match_id']}", headers=OP).status_code == 404


def test_defect_3_a_computer_seat_without_a_seed_is_refused(client, target):
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"kind": "computer", "level": "easy"}]}).json
    record = client.get(f"/matches/{created['id']}/export", headers=OP).json

    def change(record):
        del record["events"][0]["data"]["seats"][1]["seed"]

    problem = refused(target, forged(record, change))
    assert problem["index"] == 0 and "seed" in problem["detail"]


# --- defect 5: layoffs listed sorted, not in the order they chain --------------------------------


def test_defect_5_layoffs_are_listed_in_the_order_they_can_be_played():
    from service.engine import best_defense
    from service.engine.layoffs import check_defense

    run = [("3D", "4D", "5D")]
    hand = ["AD", "2D", "6D", "KS", "KH", "KC", "9S", "8H", "7C", "QD"]
    assert best_defense(run, hand).layoffs == (("2D", 0), ("AD", 0), ("6D", 0))
    # However the defender lists them, they are recorded in playing order.
    chosen = check_defense(run, hand, [["KC", "KH", "KS"]], [("AD", 0), ("6D", 0), ("2D", 0)])
    assert chosen.layoffs == (("2D", 0), ("AD", 0), ("6D", 0))


def test_defect_5_every_recorded_layoff_can_be_laid_off_one_at_a_time_as_listed():
    from service.engine.melds import meld_kind

    checked = chained = 0
    for seed in range(40):
        match = MatchFactory.build(start=StartMatchFactory(seats=[HumanSeatFactory(), HumanSeatFactory()], rules={"target_score": 100}), seed=seed)
        knock = None
        for event in match.events:
            if event.type == "knocked":
                knock = [list(m) for m in event.data["melds"]]
            if event.type == "defended":
                melds = [list(m) for m in knock]
                for layoff in event.data["layoffs"]:
                    melds[layoff["meld"]].append(layoff["card"])
                    assert meld_kind(melds[layoff["meld"]]) is not None, (seed, event.data["layoffs"])
                    checked += 1
                per_meld = [x["meld"] for x in event.data["layoffs"]]
                chained += any(per_meld.count(m) > 1 for m in per_meld)
    assert checked > 20 and chained >= 1, (checked, chained)


def test_defect_5_an_old_record_with_sorted_layoffs_reads_in_playing_order():
    from service.store.upcasting import upcast

    class History:
        def knock(self):
            return {"melds": [["3D", "4D", "5D"], ["KC", "KH", "KS"]]}

    old = {"seat": 1, "automatic": False, "melds": [], "layoffs": [{"card": "AD", "meld": 0}, {"card": "2D", "meld": 0}, {"card": "KD", "meld": 1}],
           "deadwood_cards": [], "deadwood": 0}
    assert upcast("defended", 1, old, History())["layoffs"] == [
        {"card": "2D", "meld": 0}, {"card": "AD", "meld": 0}, {"card": "KD", "meld": 1}
    ]


# --- defect 7: the cost of an import --------------------------------------------------------------


def test_defect_7_a_record_over_the_most_events_is_refused_before_anything_costly(genuine, target, monkeypatch):
    from service.records import records

    def never(*args, **kwargs):
        raise AssertionError("the record was replayed")

    monkeypatch.setattr(records, "replay", never)
    monkeypatch.setattr(records, "schema_problems", never)
    record = copy.deepcopy(genuine)
    record["match_id"] = str(uuid.uuid4())
    record["events"] = (record["events"] * (records.MAX_RECORD_EVENTS // len(record["events"]) + 1))[: records.MAX_RECORD_EVENTS + 1]
    problem = refused(target, record, code="record_too_long")
    assert str(records.MAX_RECORD_EVENTS) in problem["detail"]


def test_defect_7_a_body_over_the_size_limit_is_refused_by_its_length(target):
    from service.api.records import MAX_RECORD_BYTES

    r = target.post("/matches/import", data=b"{" + b" " * MAX_RECORD_BYTES + b"}", content_type="application/json")
    assert r.status_code == 413 and r.json["code"] == "body_too_large"


def test_defect_7_imports_are_limited_per_address(other_store, genuine):
    app = create_app({"STORE": other_store, "TESTING": True, "IMPORT_RATE_LIMIT_PER_ADDRESS": "3/minute burst 3"})
    client = app.test_client()
    answers = [client.post("/matches/import", json=forged(genuine, lambda r: None)).status_code for _ in range(4)]
    assert answers[:3] == [201, 201, 201] and answers[3] == 429
    last = client.post("/matches/import", json=genuine)
    assert last.status_code == 429 and int(last.headers["Retry-After"]) >= 1 and last.json["code"] == "rate_limited"
    assert client.get("/health/live").status_code == 200  # other requests are not counted


def test_defect_7_a_seat_is_refused_the_audit_of_an_unfinished_match_before_its_events_are_read(client, store, monkeypatch):
    created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"kind": "computer", "level": "easy"}]}).json
    token = bearer(created["seats"][0]["token"])

    def never(*args, **kwargs):
        raise AssertionError("every event was read")

    monkeypatch.setattr(type(store), "read", never)
    for path in ("audit", "export"):
        r = client.get(f"/matches/{created['id']}/{path}", headers=token)
        assert r.status_code == 403 and r.json["code"] == "hidden_until_over", (path, r.json)


# --- defect 6: the computer's part was not verified -----------------------------------------------


#: Computer moves a match played against it has at least: a match over in a few moves
#: (a Gin of the computer's on its second turn, 60 points at once) may be played the
#: same by two levels, and then a record that names the other level is no forgery.
MANY_MOVES = 12


def played_against(client, level):
    """A finished match of Ann against the computer at ``level``, as exported, in which
    the computer made at least MANY_MOVES moves (matches are played until one does)."""
    from tests.api.conftest import Player
    from tests.support.matches import play_to_the_end

    for _ in range(20):
        created = client.post(
            "/matches", json={"seats": [{"name": "Ann"}, {"kind": "computer", "level": level}], "rules": {"target_score": 60}}
        ).json
        play_to_the_end({0: Player(client, created["id"], created["seats"][0]["token"])})
        record = client.get(f"/matches/{created['id']}/export", headers=OP).json
        assert record["result"]["status"] == "finished" and record["bots_version"] == BOTS_VERSION
        if len(computer_moves(record)) >= MANY_MOVES:
            return record
    raise AssertionError(f"20 matches in a row with fewer than {MANY_MOVES} computer moves")


@pytest.fixture
def against_the_computer(client):
    return played_against(client, "hard")


def computer_moves(record, seat=1):
    return [i for i, e in enumerate(record["events"]) if e["type"] in ("card_drawn", "card_discarded") and e["data"]["seat"] == seat]


def test_defect_6_a_genuine_match_against_the_computer_imports_with_its_moves_verified(against_the_computer, target):
    record = forged(against_the_computer, lambda r: None)
    r = target.post("/matches/import", json=record)
    assert r.status_code == 201, r.json
    assert r.json["provenance"]["origin"] == "imported" and r.json["provenance"]["computer_moves"] == "verified"
    assert r.json["provenance"]["bots_version"] == BOTS_VERSION


@pytest.mark.parametrize("change", ["level", "seed", "person_to_computer"])
def test_defect_6_a_computer_seat_changed_is_refused_at_its_first_differing_move(client, target, change):
    # The easy computer draws on its seed the most: another seed soon plays otherwise.
    against_the_computer = played_against(client, "easy" if change == "seed" else "hard")

    def edit(record):
        seats = record["events"][0]["data"]["seats"]
        if change == "level":
            seats[1]["level"] = "medium"
            seats[1]["name"] = record["seats"][1]["name"] = "Computer (medium)"
            record["seats"][1]["level"] = "medium"
        elif change == "seed":
            seats[1]["seed"] = (seats[1]["seed"] + 1) % 2**53
        else:  # "I beat the hard computer": Ann's own moves, said to be the computer's
            seats[0] = {"kind": "computer", "level": "hard", "name": "Ann", "seed": 7}
            seats[1] = {"kind": "human", "name": "Computer (hard)"}
            record["seats"][0] = {"seat": 0, "name": "Ann", "kind": "computer", "level": "hard"}
            record["seats"][1] = {"seat": 1, "name": "Computer (hard)", "kind": "human", "level": None}

    problem = refused(target, forged(against_the_computer, edit), code="illegal_event")
    assert problem["rule"] == "computer_move_mismatch" and "computer" in problem["detail"], problem


def test_defect_6_one_computer_discard_changed_is_refused_where_it_was_changed(against_the_computer, target):
    from service.engine import fold
    from service.records.records import upcast_events

    events = against_the_computer["events"]
    i = next(i for i in computer_moves(against_the_computer) if events[i]["type"] == "card_discarded")
    before = fold(upcast_events(events[:i]))
    other = next(c for c in before.hands[1] if c != events[i]["data"]["card"] and c != before.taken_from_discard)

    def edit(record):
        record["events"][i]["data"]["card"] = other

    problem = refused(target, forged(against_the_computer, edit), code="illegal_event")
    assert (problem["index"], problem["rule"]) == (i, "computer_move_mismatch")


def test_defect_6_another_computer_version_imports_marked_unverified(against_the_computer, target):
    record = forged(against_the_computer, lambda r: r.update(bots_version="1999.1"))
    r = target.post("/matches/import", json=record)
    assert r.status_code == 201 and r.json["provenance"]["computer_moves"] == "unverified"
    assert target.get(f"/matches/{r.json['id']}/export", headers=OP).json["bots_version"] == "1999.1"


def test_defect_9_imported_matches_are_told_apart_from_played_ones_in_the_view(client, target, against_the_computer):
    mid = against_the_computer["match_id"]
    played = client.get(f"/matches/{mid}", headers=OP).json["provenance"]
    assert played["origin"] == "played" and played["bots_version"] == BOTS_VERSION and played["signature"] is None
    record = forged(against_the_computer, lambda r: None)  # unsigned, under a new id
    imported = target.post("/matches/import", json=record).json
    seen = target.get(f"/matches/{imported['id']}", headers=bearer(imported["seats"][0]["token"])).json["provenance"]
    assert seen["origin"] == "imported" and seen["computer_moves"] == "verified"
    assert seen["signature"] == {"status": "unsigned", "key_id": None, "signer": None}

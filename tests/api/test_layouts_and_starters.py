"""The starter rule, the knocker's layout and a defense with layoffs only, through the API."""

import pytest

import service.application.play
from tests.engine.scenarios import stacked_deck


@pytest.fixture
def deal(monkeypatch):
    """Deal the next hands from a stacked deck: ``deal(starter, other, upcard, stock_top)``."""

    def stack(*hands):
        deck = stacked_deck(*hands)
        monkeypatch.setattr(service.application.play, "deal_command", lambda rng: {"type": "deal", "deck": deck, "salt": "00"})

    return stack


PEOPLE = [{"name": "Ann"}, {"name": "Bob"}]


def test_a_bad_starter_is_refused_with_422_naming_the_parameter(client):
    for value in ("winner", 0, None):
        r = client.post("/matches", json={"rules": {"starter": value}})
        assert r.status_code == 422, (value, r.json)
        assert r.json["code"] == "invalid_request" and "starter" in r.json["errors"]["rules"], r.json


def test_the_starter_rule_is_set_at_creation_and_shown_in_the_rules(client):
    r = client.post("/matches", json={"rules": {"preset": "short-stock", "starter": "loser"}})
    assert r.status_code == 201, r.json
    assert r.json["rules"]["starter"] == "loser"
    r = client.post("/matches", json={})
    assert r.json["rules"]["starter"] == "alternate" and r.json["view"]["rules"]["starter"] == "alternate"
    presets = client.get("/rules/presets").json
    assert presets["parameters"]["starter"] == {"type": "string", "enum": ["alternate", "seat_0", "loser"]}
    assert all(p["rules"]["starter"] == "alternate" for p in presets["presets"])


def test_layoffs_without_melds_keep_the_defenders_best_melds(new_match, deal):
    deal(
        ["2C", "3C", "4C", "5D", "6D", "7D", "9H", "9S", "9C", "AH"],
        ["8D", "TC", "JC", "QC", "KH", "KS", "KD", "2H", "3H", "4H"],
        "5S",
        ["KC"],
    )
    _, players = new_match({"single_hand": True, "seats": PEOPLE, "rules": {"preset": "bonus-20-10"}})
    ann, bob = players[0], players[1]
    for player, action in ((ann, {"type": "pass"}), (bob, {"type": "pass"}), (ann, {"type": "draw", "source": "stock"}),
                           (ann, {"type": "knock", "card": "KC"})):
        r = player.act(action)
        assert r.status_code == 200, r.json
    assert bob.view()["knock"]["melds"][2] == ["5D", "6D", "7D"]
    r = bob.act({"type": "defend", "layoffs": [{"card": "8D", "meld": 2}]})
    assert r.status_code == 200, r.json
    last = r.json["view"]["last_hand"]
    assert last["defense"]["melds"] == [["KD", "KH", "KS"], ["TC", "JC", "QC"], ["2H", "3H", "4H"]]
    assert (last["defense"]["deadwood"], last["result"], last["winner"], last["points"]) == (0, "undercut", 1, 11)


@pytest.mark.parametrize(("melds", "layout", "points"), [
    (None, [["2D", "2H", "2S"], ["4C", "5C", "6C", "7C"]], 31),
    ([["4C", "5C", "6C", "7C"], ["AS", "2S", "3S"]], [["4C", "5C", "6C", "7C"], ["AS", "2S", "3S"]], 27),
])
def test_the_knocker_lays_out_the_best_layout_or_its_own_under_classic(new_match, deal, melds, layout, points):
    deal(
        ["AH", "AS", "2S", "3S", "2H", "2D", "4C", "5C", "6C", "7C"],
        ["3D", "3H", "4S", "5D", "6D", "6S", "9C", "TS", "JS", "QS"],
        "KH",
        ["KD"],
    )
    _, players = new_match({"single_hand": True, "seats": PEOPLE, "rules": {"preset": "classic"}})
    ann = players[0]
    view = ann.act({"type": "draw", "source": "stock"}).json["view"]
    assert {"type": "knock", "card": "KD"} in view["legal_actions"]  # listed without melds
    r = ann.act({"type": "knock", "card": "KD", **({"melds": melds} if melds else {})})
    assert r.status_code == 200, r.json
    last = r.json["view"]["last_hand"]
    assert last["knock"]["melds"] == layout and last["knock"]["deadwood"] == 5
    assert (last["result"], last["winner"], last["points"]) == ("knock", 0, points)

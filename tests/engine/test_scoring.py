"""The worked examples of RULES.md, each played as a real hand under its presets."""

import pytest

from .scenarios import Table

# The knocker (seat 0, the first starter) holds three melds and one loose card,
# draws the stock's top card and knocks by discarding it.
KNOCKER_MELDS = ["2C", "3C", "4C", "5D", "5H", "5S", "9H", "TH", "JH"]


def knock_hand(rules, knocker_loose, defender, stock_top="KD", upcard="KS"):
    """Seat 0 draws ``stock_top`` and knocks with it; returns the table and hand_ended."""
    t = Table(rules)
    t.deal(KNOCKER_MELDS + [knocker_loose], defender, upcard, [stock_top])
    if t.state.rules.upcard_offer:
        t.seat(0, "pass")
        t.seat(1, "pass")
    t.seat(0, "draw", source="stock")
    events = t.seat(0, "knock", card=stock_top)
    if t.state.phase == "defense":
        events = t.seat(1, "defend")  # confirm the suggested best defense
    ended = next(e for e in events if e.type == "hand_ended")
    return t, ended.data


# Defender: QH lays off onto 9H-TH-JH; 2S-3S-4S and 6C-7C-8C-9C are its own melds.
DEFENDER_18 = ["QH", "2S", "3S", "4S", "6C", "7C", "8C", "9C", "8D", "KC"]  # 8 + 10 left
DEFENDER_7 = ["QH", "2S", "3S", "4S", "6C", "7C", "8C", "9C", "4D", "3D"]  # 4 + 3 left
DEFENDER_5 = ["QH", "2S", "3S", "4S", "6C", "7C", "8C", "9C", "3D", "2D"]  # 3 + 2 left


@pytest.mark.parametrize("preset", ["classic", "short-stock", "upcard-offer", "bonus-20-10"])
def test_knock_with_7_against_18_after_layoffs_scores_11(preset):
    t, ended = knock_hand({"preset": preset}, "7S", DEFENDER_18)
    assert t.state.knock["deadwood"] == 7
    assert t.state.defense["layoffs"] == [{"card": "QH", "meld": 2}]
    assert t.state.defense["deadwood"] == 18
    assert (ended["result"], ended["winner"], ended["points"]) == ("knock", 0, 11)


@pytest.mark.parametrize("preset", ["classic", "short-stock", "upcard-offer"])
def test_a_tie_is_an_undercut_knock_7_against_7_gives_the_defender_25(preset):
    _, ended = knock_hand({"preset": preset}, "7S", DEFENDER_7)
    assert (ended["result"], ended["winner"], ended["points"]) == ("undercut", 1, 25)


@pytest.mark.parametrize("preset", ["classic", "short-stock", "upcard-offer"])
def test_knock_with_8_against_5_is_undercut_for_25_plus_3(preset):
    _, ended = knock_hand({"preset": preset}, "8S", DEFENDER_5)
    assert (ended["result"], ended["winner"], ended["points"]) == ("undercut", 1, 28)


def test_same_undercut_under_the_20_10_rules_scores_10_plus_3():
    _, ended = knock_hand({"preset": "bonus-20-10"}, "8S", DEFENDER_5)
    assert (ended["result"], ended["winner"], ended["points"]) == ("undercut", 1, 13)


# Gin: 2C-3C-4C, 5D-5H-5S, 9H-TH-JH-QH; the defender keeps KC QC 8D 3S loose (31).
GIN_DEFENDER = ["6C", "7C", "8C", "AS", "AD", "AH", "KC", "QC", "8D", "3S"]


@pytest.mark.parametrize(("preset", "points"), [("classic", 56), ("short-stock", 56), ("upcard-offer", 56), ("bonus-20-10", 51)])
def test_gin_against_31_scores_31_plus_the_gin_bonus(preset, points):
    t, ended = knock_hand({"preset": preset}, "QH", GIN_DEFENDER)
    assert t.state.knock["gin"] is True
    assert (ended["result"], ended["winner"], ended["points"]) == ("gin", 0, points)


def test_no_layoffs_against_gin():
    # KH would extend the knocker's 9H-TH-JH-QH after a knock, but not after Gin.
    defender = ["KH", "6C", "7C", "8C", "AS", "AD", "AH", "QC", "8D", "3S"]
    t, ended = knock_hand({"preset": "classic"}, "QH", defender)
    assert t.state.defense["layoffs"] == []
    assert t.state.defense["deadwood"] == 10 + 10 + 8 + 3  # KH stays deadwood
    assert ended["points"] == 31 + 25


def test_gin_is_declared_with_the_gin_command_too_and_refused_with_deadwood():
    from service.engine import IllegalMoveError

    t = Table({"preset": "classic"})
    t.deal(KNOCKER_MELDS + ["7S"], DEFENDER_18, "KS", ["KD"])
    t.seat(0, "draw", source="stock")
    with pytest.raises(IllegalMoveError) as err:
        t.seat(0, "gin", card="KD")
    assert err.value.rule == "not_gin"


def test_scores_accumulate_and_the_match_ends_at_the_target():
    t, ended = knock_hand({"preset": "classic", "target_score": 20}, "7S", DEFENDER_18)
    assert ended["scores"] == [11, 0]
    assert t.state.phase == "awaiting_deal"
    # Second hand: seat 1 starts now; it draws and goes Gin with the same shape.
    t.deal(KNOCKER_MELDS + ["QH"], GIN_DEFENDER, "KS", ["KD"])
    assert t.state.starter == 1 and t.state.turn == 1
    t.seat(1, "draw", source="stock")
    events = t.seat(1, "knock", card="KD")
    assert [e.type for e in events][-2:] == ["hand_ended", "match_ended"]
    assert t.state.scores == (11, 56) and t.state.winner == 1 and t.state.finished

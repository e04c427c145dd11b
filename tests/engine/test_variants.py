"""The variants' worked examples, each played as real hands: Oklahoma's knock limit and
spade double, Straight Gin and Big Gin, Hollywood's three games, the match bonuses."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine import IllegalMoveError, legal_actions, resolve_rules
from service.engine.scoring import enter, new_games
from tests.support.play import greedy_action_on_state, play_match, random_action

from .scenarios import Table

# Three melds and a loose card: 2C-3C-4C, 5D-5H-5S, 9H-TH-JH.
MELDS_9 = ["2C", "3C", "4C", "5D", "5H", "5S", "9H", "TH", "JH"]
# QH lays off onto 9H-TH-JH; 6S-7S-8S and 6C-7C-8C-9C are the defender's own melds,
# so its deadwood after the layoff is 8D + KC = 18.
DEFENDER_18 = ["QH", "6S", "7S", "8S", "6C", "7C", "8C", "9C", "8D", "KC"]
# The same, with 3D + 2D left: 5 after the layoff.
DEFENDER_5 = ["QH", "6S", "7S", "8S", "6C", "7C", "8C", "9C", "3D", "2D"]
# Against Gin (no layoffs): 6C-7C-8C and AS-AD-AH meld, KC QC 8D 3S are 31 deadwood.
GIN_DEFENDER = ["6C", "7C", "8C", "AS", "AD", "AH", "KC", "QC", "8D", "3S"]


def starter_draws(t: Table, starter_cards, other_cards, upcard, stock_top="KD"):
    """Deal the hand (the starter first), pass the upcard when it is offered, and let
    the starter draw ``stock_top`` from the stock."""
    t.deal(starter_cards, other_cards, upcard, [stock_top])
    starter = t.state.starter
    if t.state.rules.upcard_offer:
        t.seat(starter, "pass")
        t.seat(1 - starter, "pass")
    t.seat(starter, "draw", source="stock")
    return starter


def knock(t: Table, starter_cards, other_cards, upcard="KS", stock_top="KD") -> dict:
    """The starter draws ``stock_top`` and knocks (or goes Gin) discarding it; the
    hand's ``hand_ended`` data."""
    starter = starter_draws(t, starter_cards, other_cards, upcard, stock_top)
    events = t.seat(starter, "knock", card=stock_top)
    if t.state.phase == "defense":
        events = t.seat(1 - starter, "defend")
    return next(e for e in events if e.type == "hand_ended").data


def types(actions) -> set:
    return {a["type"] for a in actions}


# -- Oklahoma ---------------------------------------------------------------------------


def test_oklahoma_a_spade_3_upcard_limits_the_knock_to_3_and_doubles_the_score():
    t = Table({"preset": "oklahoma"})
    ended = knock(t, MELDS_9 + ["3D"], DEFENDER_18, upcard="3S")
    assert t.state.knock_limit == 3
    assert t.state.knock["deadwood"] == 3 and t.state.defense["deadwood"] == 18
    # (18 - 3) = 15, doubled by the spade: 30.
    assert (ended["result"], ended["winner"], ended["points"], ended["doubled"]) == ("knock", 0, 30, True)
    assert ended["scores"] == [30, 0]


def test_oklahoma_a_3_upcard_refuses_a_knock_with_4_and_does_not_list_it():
    t = Table({"preset": "oklahoma"})
    starter_draws(t, MELDS_9 + ["4D"], DEFENDER_18, upcard="3H")
    assert "knock" not in types(legal_actions(t.state, 0))
    with pytest.raises(IllegalMoveError) as err:
        t.seat(0, "knock", card="KD")
    assert err.value.rule == "knock_limit"
    assert "the first upcard, 3H, sets this hand's limit" in str(err.value)


def test_oklahoma_a_heart_upcard_scores_single():
    t = Table({"preset": "oklahoma"})
    ended = knock(t, MELDS_9 + ["3D"], DEFENDER_18, upcard="3H")
    assert (ended["points"], "doubled" in ended) == (15, False)


def test_oklahoma_the_limit_is_the_first_upcards_even_when_it_is_taken():
    t = Table({"preset": "oklahoma"})
    t.deal(MELDS_9 + ["3D"], DEFENDER_18, "4S", ["KD"])
    t.seat(0, "draw", source="discard")  # the starter takes the 4S in the offer
    assert t.state.knock_limit == 4
    assert "knock" in types(legal_actions(t.state, 0))  # discarding 4S leaves 3


def test_oklahoma_an_ace_upcard_means_gin_only_and_the_ace_of_spades_doubles_the_gin():
    t = Table({"preset": "oklahoma"})
    starter_draws(t, MELDS_9 + ["AH"], DEFENDER_18, upcard="AD")
    assert t.state.knock_limit == 0
    assert "knock" not in types(legal_actions(t.state, 0))
    with pytest.raises(IllegalMoveError) as err:
        t.seat(0, "knock", card="KD")  # 1 deadwood: a knock anywhere else
    assert err.value.rule == "knock_limit" and "Gin only" in str(err.value)

    t = Table({"preset": "oklahoma"})
    defender = ["6C", "7C", "8C", "AC", "AD", "AH", "KC", "QC", "8D", "3S"]  # 31 loose
    ended = knock(t, MELDS_9 + ["QH"], defender, upcard="AS")
    # (31 + 25) × 2 = 112.
    assert (ended["result"], ended["points"], ended["doubled"]) == ("gin", 112, True)


def test_oklahoma_refuses_a_knock_limit_and_spade_doubles_needs_oklahoma():
    from service.engine import RulesError

    with pytest.raises(RulesError) as err:
        resolve_rules({"preset": "oklahoma", "knock_limit": 5})
    assert err.value.parameter == "knock_limit"
    with pytest.raises(RulesError) as err:
        resolve_rules({"spade_doubles": True})
    assert err.value.parameter == "spade_doubles"
    with pytest.raises(RulesError) as err:
        resolve_rules({"preset": "hollywood", "single_hand": True})
    assert err.value.parameter == "single_hand"


# -- Straight Gin and Big Gin -------------------------------------------------------------


def test_straight_lists_no_knock_with_1_deadwood_and_refuses_one():
    t = Table({"preset": "straight"})
    starter_draws(t, MELDS_9 + ["AH"], DEFENDER_18, upcard="KS")
    assert t.state.knock_limit == 0
    assert types(legal_actions(t.state, 0)) == {"discard", "resign"}
    with pytest.raises(IllegalMoveError) as err:
        t.seat(0, "knock", card="KD")
    assert err.value.rule == "knock_limit"


BIG_GIN_10 = ["AC", "2C", "3C", "4C", "5D", "5H", "5S", "9H", "TH", "JH"]  # + QH: all eleven meld


def test_big_gin_lays_down_eleven_cards_for_the_defenders_31_plus_31():
    t = Table({"preset": "straight"})
    starter_draws(t, BIG_GIN_10, ["6C", "7C", "8C", "AS", "AD", "AH", "KC", "QC", "8D", "3S"], "KS", stock_top="QH")
    assert {"type": "big_gin"} in legal_actions(t.state, 0)
    assert "gin" in types(legal_actions(t.state, 0))  # discarding AC or 9H would be Gin too
    events = t.seat(0, "big_gin")
    knocked = next(e for e in events if e.type == "knocked").data
    # Nothing is discarded: the card is the one drawn, QH, that made the eleven.
    assert (knocked["card"], knocked["gin"], knocked["big_gin"], knocked["deadwood"]) == ("QH", True, True, 0)
    assert len(t.state.last_hand["hands"][0]) == 11 and t.state.discard_pile == ("KS",)
    assert sum(len(m) for m in knocked["melds"]) == 11
    ended = next(e for e in events if e.type == "hand_ended").data
    # The defender's KC QC 8D 3S: 31, plus the Big Gin bonus of 31.
    assert (ended["result"], ended["winner"], ended["points"]) == ("gin", 0, 62)


def test_big_gin_is_refused_without_its_bonus_and_with_deadwood():
    t = Table({"preset": "classic"})
    starter_draws(t, BIG_GIN_10, GIN_DEFENDER[:3] + ["AS", "AD", "AH", "KC", "KS", "8D", "3S"], "2D", stock_top="QH")
    assert "big_gin" not in types(legal_actions(t.state, 0))
    with pytest.raises(IllegalMoveError) as err:
        t.seat(0, "big_gin")
    assert err.value.rule == "no_big_gin"

    t = Table({"preset": "straight"})
    starter_draws(t, BIG_GIN_10, GIN_DEFENDER, "KS", stock_top="KD")
    with pytest.raises(IllegalMoveError) as err:
        t.seat(0, "big_gin")
    assert err.value.rule == "not_big_gin" and "10 (KD)" in str(err.value)


def straight_checked(state, rng):
    """A plain greedy player, or now and then a random one (random play alone almost
    never goes Gin), that checks before every play that no knock is listed."""
    for seat in (0, 1):
        assert "knock" not in types(legal_actions(state, seat))
    return random_action(state, rng) if rng.random() < 0.2 else greedy_action_on_state(state)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_under_straight_no_knock_is_ever_listed_and_every_hand_ends_in_gin_or_dead(seed):
    state, events = play_match(random.Random(seed), {"preset": "straight", "target_score": 40}, choose=straight_checked)
    assert state.finished
    results = [e.data["result"] for e in events if e.type == "hand_ended"]
    assert results and set(results) <= {"gin", "dead"}
    assert not any(e.type == "knocked" and not e.data["gin"] for e in events)


# -- Hollywood ------------------------------------------------------------------------------


def test_hollywood_after_five_hands():
    """Wins: 0 (Gin 56), 1 (11), 0 (Gin 56), 0 (undercut 28), 1 (undercut 28).  A
    player's first win goes to game one, its second to games one and two, its third to
    all three; game one is decided at 112 in the third hand and takes no more."""
    t = Table({"preset": "hollywood"})
    e1 = knock(t, MELDS_9 + ["QH"], GIN_DEFENDER)  # seat 0 starts: Gin, 31 + 25
    e2 = knock(t, MELDS_9 + ["7D"], DEFENDER_18)  # seat 1 knocks 7 against 18: 11
    e3 = knock(t, MELDS_9 + ["QH"], GIN_DEFENDER)  # seat 0: Gin again
    e4 = knock(t, MELDS_9 + ["8D"], DEFENDER_5)  # seat 1 knocks 8 against 5: seat 0 undercuts, 3 + 25
    e5 = knock(t, MELDS_9 + ["8D"], DEFENDER_5)  # seat 0 knocks 8 against 5: seat 1 undercuts
    assert [(e["winner"], e["points"]) for e in (e1, e2, e3, e4, e5)] == [(0, 56), (1, 11), (0, 56), (0, 28), (1, 28)]
    scores = lambda e: [g["scores"] for g in e["games"]]  # noqa: E731
    assert scores(e1) == [[56, 0], [0, 0], [0, 0]]
    assert scores(e2) == [[56, 11], [0, 0], [0, 0]]
    assert scores(e3) == [[112, 11], [56, 0], [0, 0]]
    assert [g["winner"] for g in e3["games"]] == [0, None, None]
    assert scores(e4) == [[112, 11], [84, 0], [28, 0]]  # game one is closed: 28 to games two and three
    assert scores(e5) == [[112, 11], [84, 28], [28, 0]]  # seat 1's second win: games one (closed) and two
    assert [g["hands"] for g in e5["games"]] == [[2, 1], [2, 1], [1, 0]]
    assert e5["scores"] == [140, 39] and not t.state.finished
    assert t.state.hands_won == (3, 2)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 60)), max_size=40))
def test_hollywood_games_are_decided_in_order_one_two_three(wins):
    rules = resolve_rules({"preset": "hollywood"})
    games, won = new_games(), [0, 0]
    for seat, points in wins:
        if all(g["winner"] is not None for g in games):
            break  # the match is over
        won[seat] += 1
        before = games
        games = enter(rules, games, seat, points)
        decided = [g["winner"] is not None for g in games]
        assert decided == sorted(decided, reverse=True)  # never game three before two, nor two before one
        for g, b in zip(games, before):
            if b["winner"] is not None:
                assert g == b  # a decided game takes no more entries
        entered = [i for i, (g, b) in enumerate(zip(games, before)) if g != b]
        assert entered, "every win is entered in some game in play"
        # Entered in consecutive games, starting with the first one in play.
        first_open = next(i for i, b in enumerate(before) if b["winner"] is None)
        assert entered == list(range(first_open, entered[-1] + 1))
        # Without a shutout, the n-th win reaches games one to n (as far as they are open).
        if first_open == 0:
            assert len(entered) == min(won[seat], 3)
    for first, later in zip(games, games[1:]):
        if first["winner"] is None:  # a game in play holds every entry of each later one
            assert all(a >= b for a, b in zip(first["scores"], later["scores"]))


def test_a_player_shut_out_of_game_one_makes_its_first_entry_in_game_two():
    """Seat 0 wins game one outright (two wins: 60 and 50, the second also opening game
    two); seat 1 never scored there, so its first win is game two's, not lost."""
    rules = resolve_rules({"preset": "hollywood"})
    games = new_games()
    games = enter(rules, games, 0, 60)
    games = enter(rules, games, 0, 50)
    assert [g["scores"] for g in games] == [[110, 0], [50, 0], [0, 0]] and games[0]["winner"] == 0
    games = enter(rules, games, 1, 30)  # seat 1's first win
    assert [g["scores"] for g in games] == [[110, 0], [50, 30], [0, 0]]
    games = enter(rules, games, 1, 20)  # its second: games two and three
    assert [g["scores"] for g in games] == [[110, 0], [50, 50], [0, 20]]
    games = enter(rules, games, 0, 10)  # seat 0's third: games two and three
    assert [g["scores"] for g in games] == [[110, 0], [60, 50], [10, 20]]
    assert [g["hands"] for g in games] == [[2, 0], [2, 2], [1, 1]]


def test_a_hollywood_match_ends_when_all_three_games_are_decided():
    """Games to 50: seat 0's Gin (56) decides game one at once; its second win (an
    undercut, 28) is game two's first entry, its third (Gin, 56) decides games two and
    three.  Seat 1 won no hand: three shutouts."""
    t = Table({"preset": "hollywood", "target_score": 50})
    knock(t, MELDS_9 + ["QH"], GIN_DEFENDER)  # seat 0 starts: Gin, 56
    knock(t, MELDS_9 + ["8D"], DEFENDER_5)  # seat 1 knocks 8 against seat 0's 5: undercut, 28
    assert not t.state.finished
    knock(t, MELDS_9 + ["QH"], GIN_DEFENDER)  # seat 0: Gin, 56
    assert t.state.finished and t.state.winner == 0
    games = t.state.settlement["games"]
    assert [g["scores"] for g in games] == [[56, 0], [84, 0], [56, 0]]
    assert [g["hands"] for g in games] == [[1, 0], [2, 0], [1, 0]]
    # Each game: its points, 25 a hand won, 100 for the game, doubled (a shutout).
    assert [g["totals"] for g in games] == [[2 * (56 + 25 + 100), 0], [2 * (84 + 50 + 100), 0], [2 * (56 + 25 + 100), 0]]
    assert t.state.settlement["totals"] == [362 + 468 + 362, 0]


# -- Match bonuses ----------------------------------------------------------------------------

BONUSES = {"preset": "classic", "game_bonus": 100, "box_bonus": 25, "shutout_doubles": True}


def test_a_shutout_with_box_bonuses():
    t = Table(BONUSES)
    knock(t, MELDS_9 + ["QH"], GIN_DEFENDER)  # seat 0: Gin, 56
    knock(t, MELDS_9 + ["8D"], DEFENDER_5)  # seat 1 knocks into seat 0's undercut: 28
    assert not t.state.finished and t.state.scores == (84, 0)  # 56 + 28: under the 100 still
    ended = knock(t, MELDS_9 + ["QH"], GIN_DEFENDER)  # seat 0: Gin, 56; 140 passes 100
    assert ended["scores"] == [140, 0] and t.state.finished and t.state.winner == 0
    match_ended = t.events[-1].data
    # 140 points + 3 boxes of 25 + the game's 100 = 315, doubled: Bob won no hand.
    assert match_ended["games"] == [{"scores": [140, 0], "hands": [3, 0], "winner": 0, "totals": [630, 0], "shutout": True}]
    assert match_ended["totals"] == [630, 0]
    assert t.state.settlement == {"games": match_ended["games"], "totals": [630, 0]}


def test_no_shutout_when_the_loser_won_a_hand():
    t = Table(BONUSES)
    knock(t, MELDS_9 + ["QH"], GIN_DEFENDER)  # seat 0: 56
    knock(t, MELDS_9 + ["7D"], DEFENDER_18)  # seat 1 knocks 7 against 18: 11
    knock(t, MELDS_9 + ["QH"], GIN_DEFENDER)  # seat 0: 56, 112
    game = t.events[-1].data["games"][0]
    # Ann 112 + 2 × 25 + 100 = 262; Bob 11 + 25 = 36.
    assert (game["totals"], game["shutout"]) == ([262, 36], False)


def test_without_bonuses_a_match_ends_as_before():
    t = Table({"preset": "classic", "target_score": 50})
    knock(t, MELDS_9 + ["QH"], GIN_DEFENDER)
    assert t.events[-1].type == "match_ended"
    assert set(t.events[-1].data) == {"winner", "scores", "reason"}
    assert t.state.settlement is None and t.state.games == ()

"""Every level answers every position with one of its legal actions, under every preset."""

from __future__ import annotations

import random

import pytest

from service.application.views import view_for
from service.bots import LEVELS, choose_action
from service.engine import PRESETS, State, decide, fold, hand_history
from service.engine.deals import deal_command
from service.engine.game import AWAITING_DEAL
from tests.support.arena import hand_events, play_match
from tests.support.play import random_action, short_rules

from .helpers import MATCH_ID, SEATS, assert_legal


def check_legal(state: State, seat: int, view: dict, action: dict) -> None:
    assert_legal(view, action)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_easy_and_medium_play_thousands_of_hands_without_an_illegal_action(preset):
    hands = 0
    pairs = [("easy", "medium"), ("medium", "easy"), ("medium", "medium"), ("easy", "easy")]
    i = 0
    while hands < 500:
        record = play_match(pairs[i % 4], {"preset": preset}, f"legal-{preset}-{i}", (i, i + 1), check=check_legal)
        hands += len(record.hands)
        assert record.winner in (0, 1)
        i += 1


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_hard_plays_whole_matches_without_an_illegal_action(preset):
    hands = 0
    i = 0
    while hands < 40:
        levels = ("hard", LEVELS[i % 3])
        if i % 2:
            levels = levels[::-1]
        record = play_match(
            levels, {"preset": preset, "target_score": 60}, f"legal-hard-{preset}-{i}", (i, i + 5), check=check_legal
        )
        hands += len(record.hands)
        i += 1


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_level_answers_legally_in_positions_reached_by_random_play(preset):
    """Random play reaches positions the bots would avoid: odd hands, late stocks, offers."""
    rng = random.Random(f"random-positions-{preset}")
    asked = 0
    for _game in range(12):
        events = decide(
            State(), {"type": "start_match", "rules": short_rules(preset), "seats": SEATS}
        )
        state = fold(events)
        hand: list[dict] = []
        while not state.finished:
            if state.phase == AWAITING_DEAL:
                command = deal_command(rng)
            else:
                seat = state.turn
                view = view_for(state, seat, MATCH_ID)
                for level in LEVELS:
                    action = choose_action(view, hand_history(hand, state, seat), level, random.Random(asked))
                    assert_legal(view, action)
                    asked += 1
                command = random_action(state, rng)
            new = decide(state, command)
            hand = hand_events(hand, state.version, new)
            state = fold(new, state)
    assert asked > 500


def test_an_unknown_level_is_refused():
    view = {"seat": 0, "phase": "draw", "legal_actions": [{"type": "draw", "source": "stock"}]}
    with pytest.raises(ValueError, match="unknown level 'expert'"):
        choose_action(view, [], "expert", random.Random(0))


def test_a_seat_without_a_legal_action_is_refused():
    view = {"seat": 1, "phase": "draw", "legal_actions": []}
    with pytest.raises(ValueError, match="no legal action"):
        choose_action(view, [], "hard", random.Random(0))

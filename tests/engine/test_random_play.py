"""Many complete random matches under every preset: no error, totals that add up."""

import random

import pytest

from service.engine import PRESETS, fold, resolve_rules
from tests.support.play import greedy_action_on_state, play_match, random_action, short_rules


def greedy(state, rng):
    return greedy_action_on_state(state)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_thousands_of_random_matches_complete_without_error(preset):
    rng = random.Random(f"random-play-{preset}")
    endings = set()
    for i in range(1000):
        # Mostly single hands (fast), every tenth a whole match.
        rules = short_rules(preset) if i % 10 else {"preset": preset}
        # Random discards almost never make Gin: under Straight Gin a greedy player plays.
        state, events = play_match(rng, rules, choose=greedy if preset == "straight" else random_action)
        assert state.finished
        ended = [e.data for e in events if e.type == "hand_ended"]
        assert len(ended) == state.hand_number
        totals = [0, 0]
        for hand in ended:
            endings.add(hand["result"])
            if hand["winner"] is not None:
                totals[hand["winner"]] += hand["points"]
            assert hand["scores"] == totals
        assert list(state.scores) == totals
        target = resolve_rules(rules).target_score
        if PRESETS[preset].hollywood:
            games = [g["winner"] for g in events[-1].data["games"]]
            assert None not in games and games.count(state.winner) >= 2
        elif not rules.get("single_hand"):
            assert max(totals) >= target and state.winner == totals.index(max(totals))
    if PRESETS[preset].knock_limit == 0:  # Straight Gin: no knock, so no undercut either
        assert endings == {"gin", "dead"}
    else:  # Random defenders rarely undercut; test_scoring plays undercuts on purpose.
        assert {"knock", "gin", "dead"} <= endings <= {"knock", "undercut", "gin", "dead"}
    assert fold(events) == state

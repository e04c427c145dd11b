"""Many complete random matches under every preset: no error, totals that add up."""

import random

import pytest

from service.engine import PRESETS, fold
from tests.support.play import play_match


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_thousands_of_random_matches_complete_without_error(preset):
    rng = random.Random(f"random-play-{preset}")
    endings = set()
    for i in range(1000):
        # Mostly single hands (fast), every tenth a match to 100.
        rules = {"preset": preset, "single_hand": i % 10 != 0}
        state, events = play_match(rng, rules)
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
        if not rules["single_hand"]:
            assert max(totals) >= 100 and state.winner == totals.index(max(totals))
    # Random defenders rarely undercut; test_scoring plays undercuts on purpose.
    assert {"knock", "gin", "dead"} <= endings <= {"knock", "undercut", "gin", "dead"}
    assert fold(events) == state

"""How a match came to be, in ``match_started``: paired by matchmaking, played casual."""

import uuid

import pytest

from service.engine import CommandError, State, decide, fold

PLAYERS = [{"kind": "human", "name": n, "player": str(uuid.UUID(int=i + 1))} for i, n in enumerate(("Ann", "Bob"))]


def started(**flags):
    return decide(State(), {"type": "start_match", "rules": {}, "seats": PLAYERS, **flags})


def test_a_paired_match_records_paired_true_and_a_casual_one_rated_false():
    (event,) = started(paired=True, rated=False)
    assert event.type == "match_started" and event.data["paired"] is True and event.data["rated"] is False
    assert fold([event]).phase == fold(started()).phase  # the state ignores them


def test_a_match_made_otherwise_records_neither_flag():
    (event,) = started()
    assert "paired" not in event.data and "rated" not in event.data


@pytest.mark.parametrize("flags", [{"paired": False}, {"paired": "yes"}, {"rated": True}, {"rated": 0}])
def test_a_flag_has_only_its_one_value(flags):
    with pytest.raises(CommandError) as refused:
        started(**flags)
    assert refused.value.code == "invalid_match_flag"


def test_only_two_players_seats_are_paired():
    with pytest.raises(CommandError, match="only a match between two players' seats"):
        decide(State(), {"type": "start_match", "seats": [PLAYERS[0], {"kind": "open"}], "paired": True})

"""Properties over random legal play: conservation, exact replay, no leaks."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine import DECK, PRESETS, State, fold, redact_event, seat_view
from service.engine.game import DEFENSE
from tests.support.play import play_match

presets = st.sampled_from(sorted(PRESETS))
seeds = st.integers(min_value=0, max_value=2**32)


def states_along(events):
    state = State()
    for event in events:
        state = fold([event], state)
        yield event, state


def cards_in(obj):
    """Every card code anywhere inside a JSON-like value."""
    if isinstance(obj, str):
        return {obj} if obj in DECK else set()
    if isinstance(obj, dict):
        return set().union(*(cards_in(v) for v in obj.values())) if obj else set()
    if isinstance(obj, (list, tuple)):
        return set().union(*(cards_in(v) for v in obj)) if obj else set()
    return set()


@settings(max_examples=40, deadline=None)
@given(presets, seeds)
def test_all_52_cards_are_conserved_through_any_legal_play(preset, seed):
    _, events = play_match(random.Random(seed), {"preset": preset, "target_score": 60})
    for _, state in states_along(events):
        if state.deck:
            held = list(state.hands[0]) + list(state.hands[1]) + list(state.stock) + list(state.discard_pile)
            assert sorted(held) == sorted(DECK)


@settings(max_examples=40, deadline=None)
@given(presets, seeds)
def test_folding_a_stream_twice_or_event_by_event_gives_equal_states(preset, seed):
    final, events = play_match(random.Random(seed), {"preset": preset, "target_score": 60})
    assert fold(events) == fold(events) == final
    *_, (_, stepwise) = states_along(events)
    assert stepwise == final
    assert State.from_json(final.to_json()) == final  # snapshots read back exactly


@settings(max_examples=40, deadline=None)
@given(presets, seeds, st.sampled_from([0, 1]))
def test_no_seat_view_or_redacted_event_holds_a_card_that_seat_cannot_know(preset, seed, seat):
    _, events = play_match(random.Random(seed), {"preset": preset, "target_score": 60})
    opponent = 1 - seat
    for event, state in states_along(events):
        view = seat_view(state, seat)
        knowable = set(state.hands[seat]) | set(state.discard_pile) | state.known[opponent]
        if state.phase == DEFENSE:
            knowable |= cards_in(state.knock)  # the knocker's hand is laid out
        live = {k: v for k, v in view.items() if k != "last_hand"}
        assert cards_in(live) <= knowable, (event, cards_in(live) - knowable)
        assert view["stock_count"] == state.stock_count
        assert view["opponent"]["card_count"] == len(state.hands[opponent])
        seen = redact_event(event.to_json(), seat)
        if event.type == "hand_dealt":
            assert cards_in(seen) == set(state.hands[seat]) | {state.discard_pile[0]}
            assert "deck" not in seen["data"] and "salt" not in seen["data"]
        if event.type == "card_drawn" and event.data["seat"] == opponent and event.data["source"] == "stock":
            assert "card" not in seen["data"]

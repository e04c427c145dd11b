"""Event schema versions: version 1 of hand_dealt and hand_ended, read as version 2."""

from __future__ import annotations

import pytest
from psycopg.types.json import Jsonb

from service.engine import commitment_of
from service.store import CURRENT_VERSIONS, UPCASTERS, StoreError, upcast
from tests.factories import DealFactory, MatchFactory, in_hand


def as_version_1(event_type: str, data: dict) -> dict:
    """What the first engine stored for these events."""
    if event_type == "hand_dealt":
        return {k: data[k] for k in ("hand", "starter", "deck")}
    if event_type == "hand_ended":
        return {k: v for k, v in data.items() if k not in ("deck", "salt")}
    return data


class Deals:
    def __init__(self, *deals):
        self.deals = {deal["hand"]: deal for deal in deals}

    def deal(self, hand):
        return self.deals[hand]


def test_every_type_has_an_upcaster_for_each_step_below_its_current_version():
    for event_type, current in CURRENT_VERSIONS.items():
        for version in range(1, current):
            assert (event_type, version) in UPCASTERS


def test_a_version_1_deal_gets_an_empty_salt_and_the_commitment_of_its_deck():
    deck = DealFactory()["deck"]
    old = {"hand": 3, "starter": 1, "deck": deck}

    assert upcast("hand_dealt", 1, old, None) == {**old, "salt": "", "commitment": commitment_of(deck, "")}


def test_a_version_1_hand_end_gets_the_deck_and_salt_of_its_deal():
    deal = {"hand": 2, "starter": 1, "deck": DealFactory()["deck"], "salt": "", "commitment": "c"}
    old = {"hand": 2, "result": "dead", "winner": None, "points": 0, "scores": [10, 0]}

    assert upcast("hand_ended", 1, old, Deals(deal)) == {**old, "deck": deal["deck"], "salt": ""}


def test_current_data_passes_through_unchanged():
    data = {"seat": 0, "card": "KS"}
    assert upcast("card_discarded", 1, data, None) is data


def test_an_event_newer_than_the_service_is_refused():
    with pytest.raises(StoreError, match="upgrade the service"):
        upcast("hand_dealt", 3, {}, None)


def test_events_stored_at_version_1_are_read_and_loaded_at_the_current_version(store):
    # Before salts existed every deal was unsalted, so version 2 of this stream is exact.
    match = MatchFactory.build(salt="", until=in_hand(3, moves=4))
    assert any(e.type == "hand_ended" for e in match.events)
    with store.pool.connection() as conn:
        conn.cursor().executemany(
            "INSERT INTO events (match_id, seq, type, schema_version, data) VALUES (%s, %s, %s, %s, %s)",
            [
                (match.match_id, seq, e.type, 1, Jsonb(as_version_1(e.type, e.data)))
                for seq, e in enumerate(match.events, start=1)
            ],
        )

    stored = store.read(match.match_id)
    assert [e.event for e in stored] == match.events
    assert {e.schema_version for e in stored if e.type == "hand_dealt"} == {2}
    assert store.load(match.match_id) == match.state

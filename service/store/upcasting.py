"""Event schema versions: stored events are never rewritten, older ones are upcast on read.

Each stored event carries the schema version of its data.  :data:`CURRENT_VERSIONS`
names the version the engine reads today (types not listed are at version 1); an
upcaster turns version ``n`` of a type into ``n + 1``, so reading applies them one step
at a time up to the current version.

Version 2 of ``hand_dealt`` added the deal's ``salt`` and ``commitment`` (version 1 had
only ``hand``, ``starter`` and ``deck``); version 2 of ``hand_ended`` added the reveal of
the hand's ``deck`` and ``salt``; version 2 of ``match_ended`` added how the match
ended, its ``reason`` (version 1 matches could only end by the score); version 2 of
``defended`` lists the layoffs in an order in which they can be played (version 1
sorted them by meld and rank, which for AD and 2D onto 3D-4D-5D is not playable).  An
old deal had no salt, so its salt is ``""`` and its commitment is computed from the deck
with that salt.

>>> old = {"hand": 1, "starter": 0, "deck": ["AS", "2S"]}
>>> new = upcast("hand_dealt", 1, old, history=None)
>>> new["salt"], new["commitment"] == commitment_of(["AS", "2S"], "")
('', True)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from service.engine import commitment_of
from service.engine.layoffs import play_order

from .errors import StoreError

#: The schema version of each event type's data as the engine writes and reads it.
CURRENT_VERSIONS: dict[str, int] = {
    "hand_dealt": 2,
    "hand_ended": 2,
    "match_ended": 2,
    "defended": 2,
}


def current_version(event_type: str) -> int:
    return CURRENT_VERSIONS.get(event_type, 1)


class History(Protocol):
    """The earlier events of the same match, for an upcaster that needs them."""

    def deal(self, hand: int) -> dict:
        """The (current-version) data of the ``hand_dealt`` event of hand number ``hand``."""

    def knock(self) -> dict:
        """The (current-version) data of the last ``knocked`` event before this one."""


#: ``history`` is None where the caller has none to give: then only upcasters that need
#: no earlier events can run (see upcast's doctest).
Upcaster = Callable[[dict, History | None], dict]

#: (event type, version it reads) -> the function returning the next version's data.
UPCASTERS: dict[tuple[str, int], Upcaster] = {}


def upcaster(event_type: str, from_version: int) -> Callable[[Upcaster], Upcaster]:
    def register(function: Upcaster) -> Upcaster:
        UPCASTERS[(event_type, from_version)] = function
        return function

    return register


def upcast(event_type: str, version: int, data: dict, history: History | None) -> dict:
    """``data`` stored at ``version``, brought to the current version of ``event_type``."""
    current = current_version(event_type)
    if version > current:
        raise StoreError(
            f"a {event_type!r} event is stored at schema version {version}, newer than the {current} "
            "this service reads: upgrade the service"
        )
    while version < current:
        data = UPCASTERS[(event_type, version)](data, history)
        version += 1
    return data


@upcaster("hand_dealt", 1)
def _deal_gets_salt_and_commitment(data: dict, history: History | None) -> dict:
    return {**data, "salt": "", "commitment": commitment_of(data["deck"], "")}


@upcaster("hand_ended", 1)
def _hand_end_reveals_the_deal(data: dict, history: History | None) -> dict:
    assert history is not None, "the deal of a hand_ended event is among the match's earlier events"
    deal = history.deal(data["hand"])
    return {**data, "deck": deal["deck"], "salt": deal["salt"]}


@upcaster("match_ended", 1)
def _match_end_says_why(data: dict, history: History | None) -> dict:
    return {**data, "reason": "score"}


@upcaster("defended", 1)
def _layoffs_in_playing_order(data: dict, history: History | None) -> dict:
    assert history is not None, "the melds of a defended event are in the match's earlier knocked event"
    melds = history.knock()["melds"]
    ordered = play_order(melds, [(x["card"], x["meld"]) for x in data["layoffs"]])
    return {**data, "layoffs": [{"card": card, "meld": meld} for card, meld in ordered]}

"""factory-boy factories: seats, match starts, seeded deals, and whole matches played.

``MatchFactory.build()`` plays a match with a seeded legal-move player and keeps the
events of each command as one batch, the way the service appends them;
``MatchFactory.create(store=store)`` also appends every batch.  The same seed gives the
same match (apart from ``match_id``)::

    match = MatchFactory(store=store, start__rules={"target_score": 30})
    short = MatchFactory.build(until=in_hand(2, moves=4))
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import factory

from service.engine import Event, State, execute
from service.engine.deals import shuffled_deck
from service.engine.game import AWAITING_DEAL
from tests.support.play import random_action


class HumanSeatFactory(factory.DictFactory):
    kind = "human"
    name = factory.Faker("first_name")


class ComputerSeatFactory(factory.DictFactory):
    kind = "computer"
    level = "easy"
    seed = factory.Sequence(lambda n: n)


class StartMatchFactory(factory.DictFactory):
    """A ``start_match`` command."""

    type = "start_match"
    rules = factory.Dict({"preset": "classic"})
    seats = factory.List([factory.SubFactory(HumanSeatFactory), factory.SubFactory(ComputerSeatFactory)])


class DealFactory(factory.DictFactory):
    """A ``deal`` command whose deck is shuffled by a generator seeded with ``seed``."""

    class Params:
        seed = factory.Sequence(lambda n: n)

    type = "deal"
    deck = factory.LazyAttribute(lambda o: shuffled_deck(random.Random(o.seed)))
    salt = factory.LazyAttribute(lambda o: f"{o.seed:016x}")


@dataclass
class PlayedMatch:
    match_id: uuid.UUID
    #: The events of each command, in order: one append each.
    batches: list[list[Event]]
    #: The state after the last batch.
    state: State

    @property
    def events(self) -> list[Event]:
        return [event for batch in self.batches for event in batch]

    def append_to(self, store, actor: str | None = None) -> None:
        version = 0
        for batch in self.batches:
            store.append(self.match_id, version, batch, actor=actor)
            version += len(batch)


def match_over(state: State) -> bool:
    return state.finished


def in_hand(hand: int, moves: int = 0) -> Callable[[State], bool]:
    """Stop once hand number ``hand`` is dealt and ``moves`` more events are played (a
    hand that ends sooner never stops play: the match is then played to its end)."""
    return lambda state: state.hand_number == hand and state.version - state.hand_start_version > moves


def play(start: dict, seed: int, until: Callable[[State], bool], salt: str | None = None) -> tuple[list, State]:
    """Play from ``start`` with the seeded player until ``until(state)`` or the match ends."""
    rng = random.Random(seed)
    state, events = execute(State(), start)
    batches = [events]
    while not (state.finished or until(state)):
        if state.phase == AWAITING_DEAL:
            deal = {"seed": rng.getrandbits(32)} if salt is None else {"seed": rng.getrandbits(32), "salt": salt}
            command = DealFactory(**deal)
        else:
            command = random_action(state, rng)
        state, events = execute(state, command)
        batches.append(events)
    return batches, state


class MatchFactory(factory.Factory):
    """A match played by a seeded random legal-move player (see the module docstring).

    ``until``: a predicate on the state that stops play early (default: play to the
    end); ``salt``: the salt of every deal (default: one per deal).
    """

    class Meta:
        model = PlayedMatch

    class Params:
        seed = factory.Sequence(lambda n: n)
        start = factory.SubFactory(StartMatchFactory)
        until = match_over
        salt = None
        played = factory.LazyAttribute(lambda o: play(o.start, o.seed, o.until, o.salt))

    match_id = factory.LazyFunction(uuid.uuid4)
    batches = factory.LazyAttribute(lambda o: o.played[0])
    state = factory.LazyAttribute(lambda o: o.played[1])

    @factory.post_generation
    def store(match: PlayedMatch, create: bool, store, **kwargs) -> None:
        if create:
            if store is None:
                raise TypeError("MatchFactory.create needs store=<EventStore>; use build() to only play")
            match.append_to(store, **kwargs)


def endless_match(events: int, seed: int = 0) -> PlayedMatch:
    """A legal match of at least ``events`` events between two people who only ever
    draw from the stock and throw that card away: every hand ends dead when the stock
    runs out, nobody scores, and the match goes on (a few seconds for 100,000 events)."""
    rng = random.Random(seed)
    start = StartMatchFactory(seats=[HumanSeatFactory(), HumanSeatFactory()])
    state, batch = execute(State(), start)
    batches = [batch]
    total = len(batch)
    while total < events:
        if state.phase == AWAITING_DEAL:
            command = DealFactory(seed=rng.getrandbits(32))
        elif state.phase == "draw":
            command = {"type": "draw", "source": "stock", "seat": state.turn}
        else:
            command = {"type": "discard", "card": state.hands[state.turn][-1], "seat": state.turn}
        state, batch = execute(state, command)
        batches.append(batch)
        total += len(batch)
    return PlayedMatch(uuid.uuid4(), batches, state)

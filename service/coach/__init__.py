"""The coach: hints while playing, and every decision of a hand weighed afterwards.

Both rest on one measure, ``assess``: for a seat's decision -- take or pass the upcard,
the draw's source, the discard (with knocking, going Gin or playing on) -- the value of
each of its plays, estimated by the hard computer's model from what that seat knew at
that moment, and nothing else: its view and its redacted events of the hand (as a bot
gets them).  The opponent's hidden cards and the stock never reach it, so a hint or an
analysis entry is the same for every deal consistent with what the seat had seen.

The values are points, as the hard computer weighs them:

- a discard by the *progress* of the ten cards kept (the deadwood expected after the
  next draw, less premiums for the chance to knock or go Gin, weighed against the
  deadwood by the chance that the opponent knocks first, plus a cost for the chance of
  feeding an opponent's meld); in a race to knock (an undercut bonus below 17), the best
  few discards are looked at two draws ahead;
- a draw by the progress of the hand it leads to, against the expected progress after
  a stock draw (a small margin favours the stock, which shows the opponent nothing);
- knocking or going Gin by the expected points of ending the hand now over plausible
  opponent hands (after the defender's best layoffs, undercuts included), against
  holding on one more turn (the opponent may knock or improve, the next draw may lower
  the count); Big Gin (all eleven cards laid down, no discard) by its bonus and the
  opponent's expected deadwood.

Knocks are those of the hand's knock limit (under Oklahoma the first upcard's value;
0 under Straight Gin, where only Gin ends a hand), and a hand whose score counts double
(Oklahoma's spade upcard) has its points, and so its costs, doubled.

The best play is the one of highest value; a play's *cost* is how far its value falls
short of the best (never below 0), and classes it (``THRESHOLDS``).  The estimate is
random only in its sampled opponent hands, whose generator is seeded by the match, the
hand and the number of events so far in it: the same record gives the same analysis,
and a hint is the play the analysis rates best at that moment.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from service.bots.common import Options
from service.bots.handeval import NEAR
from service.bots.hard import DEEP_CANDIDATES, KNOCK_SAMPLES, TAKE_MARGIN, Hard
from service.bots.knowledge import Knowledge, read
from service.engine.cards import CARD_INDEX

from . import reasons

#: A play is ``good`` when it costs less than 1.5 points, an ``inaccuracy`` below 4, a
#: ``mistake`` below 10, a ``blunder`` from 10 points on.
THRESHOLDS = (("good", 1.5), ("inaccuracy", 4.0), ("mistake", 10.0))
CLASSES = ("good", "inaccuracy", "mistake", "blunder")
#: A decision's score for the accuracy figure: 100 less 10 per point it cost, at least 0.
SCORE_PER_POINT = 10.0
#: Not going Gin when one can costs at least this much, a mistake: there is nothing to
#: gain by waiting, and the opponent may knock first.
GIN_DELAY_COST = 4.0
#: The kinds of decision, by the phase they are taken in.
KINDS = {"upcard_offer": "upcard", "draw": "draw", "discard": "discard"}
PLAYS = ("draw", "pass", "discard", "knock", "gin", "big_gin")


def classify(cost: float) -> str:
    for name, below in THRESHOLDS:
        if cost < below:
            return name
    return "blunder"


def score(cost: float) -> float:
    return max(0.0, 100.0 - SCORE_PER_POINT * cost)


def key_of(action: Mapping[str, Any]) -> tuple:
    """What identifies a play (a knock's melds are its layout, not another play)."""
    return (action.get("type"), action.get("source"), action.get("card"))


@dataclass(frozen=True)
class Assessment:
    kind: str  # upcard | draw | discard
    best: dict  # the best play, as listed in legal_actions
    values: dict[tuple, float]  # key_of(play) -> value, for the plays weighed
    reason: str  # why the best play is best, for a person

    def cost(self, action: Mapping[str, Any]) -> float:
        value = self.values.get(key_of(action))
        if value is None:  # a play not weighed is never better than the best
            raise KeyError(f"{key_of(action)} was not weighed")
        return max(0.0, self.values[key_of(self.best)] - value)


def seed_of(match_id: str, hand: int, history: Sequence[Mapping[str, Any]]) -> str:
    """The seed of a decision's samples: the match, the hand, and how many of the hand's
    events came before it (hints left out: asking for one changes nothing)."""
    played = sum(1 for e in history if e["type"] != "hint_shown")
    return f"coach:{match_id}:{hand}:{played}"


def assess(
    view: Mapping[str, Any], history: Sequence[Mapping[str, Any]], match_id: str, taken: Mapping[str, Any] | None = None
) -> Assessment | None:
    """The seat's decision in ``view`` weighed (None when it has no choice).  ``taken``,
    the play made, is weighed too when the best few would leave it out."""
    plays = [a for a in view["legal_actions"] if a["type"] in PLAYS]
    kind = KINDS.get(view["phase"])
    if kind is None or len(plays) < 2 or view["turn"] != view["seat"]:
        return None
    know = read(view, history)
    coach = _Coach(know, random.Random(seed_of(match_id, view["hand_number"], history)))
    options = Options(plays)
    if kind == "discard":
        values, by_key = coach.discard_values(options, taken)
    else:
        values, by_key = coach.draw_values(options)
    best_key = max(values, key=lambda k: (values[k], _order(k)))
    best = by_key[best_key]
    return Assessment(kind, best, values, reasons.reason(coach, best))


def _order(key: tuple) -> tuple:
    """Ties go to the first play in a fixed order (by type, then card)."""
    kind, source, card = key
    return (-PLAYS.index(kind), source or "", -(CARD_INDEX[card] if card else -1))


class _Coach(Hard):
    """The hard computer's measures, for every play rather than only its own choice."""

    def __init__(self, know: Knowledge, rng: random.Random):
        super().__init__(know, rng)
        #: For the reasons: whether the top card melds with the hand (draws), and per
        #: ending card (knock or Gin) its value now, its value held, and its deadwood.
        self.take_melds = False
        self.ending: dict[int, tuple[float, float, int]] = {}

    def draw_values(self, options: Options) -> tuple[dict, dict]:
        know = self.know
        take, decline = options.take, options.decline
        # assess() weighs a draw only when there are two plays: taking the top card, and not.
        assert take is not None and know.top is not None, "a draw with a choice can take the top card"
        bit = 1 << know.top
        kept = self.successor(know.hand | bit, keep=bit)
        values = {
            key_of(take): -(self.progress(kept) + TAKE_MARGIN),
            key_of(decline): -self.stock_value(know.hand),
        }
        self.take_melds = bool(NEAR[know.top] & know.hand)
        return values, {key_of(take): take, key_of(decline): decline}

    def discard_values(self, options: Options, taken: Mapping[str, Any] | None) -> tuple[dict, dict]:
        listed = [*options.discards.values(), *options.knocks.values(), *options.gins.values()]
        if options.big_gin is not None:
            listed.append(options.big_gin)
        by_key = {key_of(a): a for a in listed}
        costs = {x: self.discard_cost(x) for x in options.discards}
        if self.race and self.has_two_draws() and len(costs) > 1:
            weighed = set(sorted(costs, key=lambda x: (costs[x], x))[:DEEP_CANDIDATES])
            if taken is not None and taken.get("type") == "discard" and CARD_INDEX.get(taken.get("card", "")) in costs:
                weighed.add(CARD_INDEX[taken["card"]])
            costs = {x: self.discard_cost(x, deep=True) for x in weighed}
        least = min(costs.values())
        enders = {**options.knocks, **options.gins}
        if not enders and options.big_gin is None:
            values = {key_of(options.discards[x]): -c for x, c in costs.items()}
            return values, by_key
        # Ending the hand now, in points, against playing on with the best discard.
        margin = self.wait_margin()
        best_wait = None
        values = {}
        gins: list[float] = []
        if options.big_gin is not None:
            values[key_of(options.big_gin)] = self.gin_value(self.rules["big_gin_bonus"])
            gins.append(values[key_of(options.big_gin)])
        for card, action in enders.items():
            rest = self.know.hand & ~(1 << card)
            layouts, _, deadwood, exposure = self.knock_melds(rest)
            now, wait = self.knock_values(rest, layouts, deadwood, card)
            if action["type"] == "gin":
                now = self.gin_value(self.rules["gin_bonus"])
                gins.append(now)
            values[key_of(action)] = now
            self.ending[card] = (now, wait, deadwood)
            rank = (deadwood + exposure, card)
            if best_wait is None or rank < best_wait[0]:
                best_wait = (rank, wait)
        # Playing on: as good as the best knock's wait, and never better than Gin less the
        # cost of not declaring it (with Big Gin alone: that cost).
        play_on = best_wait[1] + margin if best_wait is not None else max(gins)
        if gins:
            play_on = min(play_on, max(gins) - GIN_DELAY_COST)
        for x, c in costs.items():
            values[key_of(options.discards[x])] = play_on - (c - least)
        return values, by_key

    def gin_value(self, bonus: int) -> float:
        """Expected points of going Gin (or Big Gin) with ``bonus``: the bonus and the
        opponent's deadwood, doubled with the hand."""
        samples = self.samples(KNOCK_SAMPLES)
        if not samples:
            return float(self.multiplier * bonus)
        return self.multiplier * (bonus + sum(self.dw(s) for s in samples) / len(samples))

"""hard: plays for points, from the cards it has seen and what the opponent's play betrays.

- Every card is tracked: its own, the pile, the cards the opponent took; the rest are
  unseen, and ``OpponentModel`` gives each the chance that the opponent holds it (from
  what it took, threw and declined).  The next stock card is one of the unseen cards
  the opponent does not hold.
- A hand is measured by its *progress*: the deadwood it expects after the next draw
  (every unseen card, weighted), less a premium for the chance that the draw lets it
  knock or go Gin.
- Discards: the one that leaves the best progress, weighed against the current
  deadwood by the chance that the opponent knocks first (estimated on sampled
  opponent hands), with a cost for the chance that the card feeds an opponent meld.
  When the undercut bonus is small the hand is a race to knock: the best few discards
  are then looked at two draws ahead (every unseen card as the next draw, each
  followed by its best discard and the progress after it), a hand able to knock after
  the next draw earns a premium, and knock chances weigh more.
- Draws look one draw further: the top card is taken when the hand it leads to has
  better progress than the expected progress after a stock draw (every unseen card
  looked at, each followed by its best discard).
- Knocks, in expected points over sampled opponent hands: knocking now (after the
  defender's best layoffs, undercuts included) against holding one more turn (the
  opponent may knock or improve; the next draw may bring Gin or a lower count), with
  a margin for waiting that grows with the undercut bonus.
- A knock names no melds, so the engine lays out the best of the least-deadwood
  arrangements against the defender's actual hand; only when the rules let the
  knocker lay out any arrangement (``knocker_arranges``) does it name one of more
  deadwood, when that deadwood and the layoff points it expects come out lower.
  Gin and defense take the suggested (optimal) ones.
- The knock limit is the hand's (under Oklahoma its first upcard's value).  With a
  limit of 0 (Straight Gin, an Oklahoma ace) no knock is ever legal and nothing can be
  undercut, so the hand is a race to Gin, played as the race to knock above.  A hand
  whose score counts double (Oklahoma's spade upcard) weighs its points, and the margin
  for waiting, twice.  Going Gin is Big Gin (no discard) when all eleven cards meld
  and ``big_gin_bonus`` is at least the Gin bonus, and the waiting side of a knock
  counts that bonus for a next draw that melds all eleven.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from service.engine import best_defense
from service.engine.cards import cards_of

from .arrangements import Meld, arrangements, expected_layoff
from .common import Options, gin_ending
from .handeval import NEAR, Deadwood, expected_after_draw
from .knowledge import VALUE, Knowledge, indices
from .opponent import OpponentModel

KNOCK_CHANCE_WORTH = 6.0
GIN_CHANCE_WORTH = 15.0
FEED_COST = 5.0
TAKE_MARGIN = 0.5
KNOCK_SAMPLES = 24
THREAT_SAMPLES = 16
MAX_EXTRA = 3
THREAT_SCALE = 0.6
EXTRA_PER_DRAW = 0.5
#: Points added to holding on, per point of undercut bonus above 17: the one-turn
#: lookahead leaves out the option of waiting again, worth more when the opponent's
#: knocks into a low count pay a big undercut bonus (measured in the benchmark: a
#: margin of about +4 under the 25 bonus and -4 under the 10 bonus played best).
WAIT_PER_UNDERCUT_POINT = 0.5
WAIT_PIVOT = 17
#: When the undercut bonus is small (below ``WAIT_PIVOT``) waiting to undercut pays
#: little and the hand is a race to knock first: discards are then looked at two draws
#: ahead (the best ``DEEP_CANDIDATES`` by the one-draw cost), a hand that can knock
#: after the next draw earns ``RACE_EARLY_KNOCK_WORTH``, and the chance to knock after a
#: draw is worth ``RACE_KNOCK_CHANCE_WORTH`` instead of ``KNOCK_CHANCE_WORTH``.
DEEP_CANDIDATES = 4
RACE_EARLY_KNOCK_WORTH = 6.0
RACE_KNOCK_CHANCE_WORTH = 12.0


def play(view: Mapping[str, Any], know: Knowledge, rng: random.Random) -> dict:
    return Hard(know, rng).play(Options(view["legal_actions"]))


class Hard:
    def __init__(self, know: Knowledge, rng: random.Random):
        self.know = know
        self.rng = rng
        self.rules = know.rules
        self.limit = know.knock_limit
        self.dw = Deadwood()
        self.model = OpponentModel(know)
        self.draws = self.model.draws
        self._progress: dict[int, float] = {}
        self._samples: list[int] | None = None
        self._threat: float | None = None
        self.race = self.rules["undercut_bonus"] < WAIT_PIVOT or self.limit == 0
        #: Points count double in this hand (Oklahoma's spade upcard).
        self.multiplier = know.multiplier
        self.knock_worth = RACE_KNOCK_CHANCE_WORTH if self.race else KNOCK_CHANCE_WORTH

    # --- the decisions ----------------------------------------------------------

    def play(self, options: Options) -> dict:
        if options.take is not None:
            return options.take if self.should_take() else options.decline
        gin = gin_ending(self.dw, self.know, options)
        if gin is not None:
            return gin
        scored = {x: self.discard_cost(x) for x in options.discards}
        if self.race and self.has_two_draws() and len(scored) > 1:
            ranked = sorted(scored, key=lambda x: (scored[x], x))[:DEEP_CANDIDATES]
            scored = {x: self.discard_cost(x, deep=True) for x in ranked}
        best = min(scored, key=lambda x: (scored[x], x))
        if options.knocks:
            knock = self.knock_if_better(options)
            if knock is not None:
                return knock
        return options.discards[best]

    def should_take(self) -> bool:
        know, dw = self.know, self.dw
        top, hand = know.top, know.hand
        assert top is not None, "asked only when the top card may be taken: the pile has one"
        if not NEAR[top] & hand:
            return False  # it melds with nothing: at best it replaces a loose card
        bit = 1 << top
        eleven = hand | bit
        if dw.best_discard(eleven, keep=bit)[0] == 0:
            return True
        take = self.progress(self.successor(eleven, keep=bit))
        return take + TAKE_MARGIN < self.stock_value(hand)

    def discard_cost(self, x: int, deep: bool = False) -> float:
        """The cost of throwing ``x``: the progress of the hand kept (``deep``: two draws
        ahead, after the next stock draw and its best discard, with a premium for a hand
        that may knock at once), weighed against its deadwood by the knock threat, and
        the chance of feeding the opponent."""
        rest = self.know.hand & ~(1 << x)
        q = self.threat()
        ahead = self.stock_value(rest, RACE_EARLY_KNOCK_WORTH) if deep else self.progress(rest)
        return (1 - q) * ahead + q * self.dw(rest) + FEED_COST * self.model.feeds(x)

    def has_two_draws(self) -> bool:
        return self.know.stock_count >= self.rules["dead_hand_stock"] + 4 and bool(self.draws)

    def stock_value(self, hand: int, early: float = 0.0) -> float:
        """Expected progress after drawing from the stock and discarding (two draws ahead).

        A stock card that melds with nothing is thrown back, or kept instead of the loose
        card whose loss costs least: its hand moves by the deadwood saved.  ``early`` is
        taken off for each draw after which the hand may knock.
        """
        dw = self.dw
        now, here = dw(hand), self.progress(hand)
        cheapest = dw.best_discard(hand)[0]
        total = 0.0
        limit = self.limit
        for u, p in self.draws:
            if NEAR[u] & hand:
                nxt = self.successor(hand | (1 << u))
                v = self.progress(nxt)
                if early and dw(nxt) <= limit:
                    v -= early
                total += p * v
            else:
                saved = max(0, now - cheapest - VALUE[u])
                total += p * (here - saved - (early if early and now - saved <= limit else 0.0))
        return total

    def knock_if_better(self, options: Options) -> dict | None:
        best = None
        for card, action in options.knocks.items():
            rest = self.know.hand & ~(1 << card)
            layouts, named, deadwood, exposure = self.knock_melds(rest)
            key = (deadwood + exposure, card)
            if best is None or key < best[0]:
                best = (key, card, action, rest, layouts, named, deadwood)
        assert best is not None, "asked only when a knock is legal"
        _, card, action, rest, layouts, named, deadwood = best
        now, wait = self.knock_values(rest, layouts, deadwood, card)
        if now < wait + self.wait_margin():
            return None
        if named:
            return {**action, "melds": [m.codes() for m in layouts[0]]}
        return action

    def wait_margin(self) -> float:
        """Points added to holding on (see ``WAIT_PER_UNDERCUT_POINT``), doubled with the hand."""
        return self.multiplier * WAIT_PER_UNDERCUT_POINT * (self.rules["undercut_bonus"] - WAIT_PIVOT)

    def gin_bonus(self, eleven: int) -> int:
        """The bonus of going Gin holding ``eleven`` cards after a draw: Big Gin's when
        all eleven meld and it pays more, else the Gin bonus."""
        gin, big = self.rules["gin_bonus"], self.rules.get("big_gin_bonus")
        if big is not None and big > gin and eleven.bit_count() == 11 and self.dw(eleven) == 0:
            return big
        return gin

    # --- measures ---------------------------------------------------------------

    def has_next_draw(self) -> bool:
        """Whether this seat draws again this hand after its coming discard."""
        return self.know.stock_count >= self.rules["dead_hand_stock"] + 2 and bool(self.draws)

    def progress(self, hand: int) -> float:
        """Expected deadwood after the next draw, less premiums for knock and Gin chances."""
        value = self._progress.get(hand)
        if value is None:
            if self.has_next_draw():
                exp, knock, gin = expected_after_draw(self.dw, hand, self.draws, self.limit)
                value = exp - self.knock_worth * knock - GIN_CHANCE_WORTH * gin
            else:
                value = float(self.dw(hand))
            self._progress[hand] = value
        return value

    def successor(self, eleven: int, keep: int = 0) -> int:
        """The 10 cards kept after the discard that leaves the least deadwood (ties by progress)."""
        _, ties = self.dw.best_discards(eleven, keep)
        if not ties & (ties - 1):
            return eleven & ~ties
        return min((eleven & ~(1 << c) for c in indices(ties)), key=self.progress)

    def samples(self, n: int) -> list[int]:
        if self._samples is None or len(self._samples) < n:
            extra = min(int(self.know.opp_draws * EXTRA_PER_DRAW + 0.5), MAX_EXTRA)
            self._samples = self.model.sample_hands(self.rng, n, self.dw, extra)
        return self._samples[:n]

    def stock_card(self, sample: int) -> int | None:
        pool = [u for u, _ in self.draws if not (sample >> u) & 1]
        return self.rng.choice(pool) if pool else None

    def threat(self) -> float:
        """The chance that the opponent can knock on its next turn (after a stock draw)."""
        if self._threat is None:
            know = self.know
            if know.stock_count <= self.rules["dead_hand_stock"]:
                self._threat = 0.0
            else:
                hits = 0
                samples = self.samples(THREAT_SAMPLES)
                for s in samples:
                    u = self.stock_card(s)
                    d = self.dw(s) if u is None else self.dw.best_discard(s | (1 << u))[0]
                    hits += d <= self.limit
                self._threat = THREAT_SCALE * hits / len(samples) if samples else 0.0
        return self._threat

    # --- knocking ---------------------------------------------------------------

    def knock_melds(self, hand: int) -> tuple[tuple[tuple[Meld, ...], ...], bool, int, float]:
        """The layouts a knock with ``hand`` may lay out, whether this seat names the
        layout (else the engine picks), their deadwood, and the points expected laid off.

        Left to the engine, the knock lays out whichever arrangement of the least deadwood
        leaves the defender the most (it knows the defender's hand), so every such
        arrangement is a candidate and the layoffs expected are those of the best of them
        by what this seat knows.  Under ``knocker_arranges`` an arrangement with more
        deadwood is named when its deadwood and its expected layoffs come out lower."""
        chance = self.model.chance.__getitem__
        least = self.dw(hand)
        lowest = tuple(m for _, m in arrangements(hand, least))
        exposure = min(expected_layoff(m, chance) for m in lowest)
        if self.rules.get("knocker_arranges"):
            more = [(d + expected_layoff(m, chance), d, m) for d, m in arrangements(hand, self.limit) if d > least]
            if more:
                score, deadwood, melds = min(more, key=lambda t: (t[0], t[1]))
                if score < least + exposure:
                    return (melds,), True, deadwood, score - deadwood
        return lowest, False, least, exposure

    def knock_values(self, hand: int, layouts: tuple[tuple[Meld, ...], ...], k: int, card: int) -> tuple[float, float]:
        """Expected points of knocking now (with the layout of ``layouts`` the engine
        would pick against each sampled hand), and of holding the same hand one more turn."""
        rules, dw, limit = self.rules, self.dw, self.limit
        undercut_bonus = rules["undercut_bonus"]
        stock, dead_at = self.know.stock_count, rules["dead_hand_stock"]
        samples = self.samples(KNOCK_SAMPLES)
        cards = [u for u, _ in self.draws]
        mine_next = [
            (p, k2, self.gin_bonus(hand | (1 << u)) if k2 == 0 else 0)
            for (u, p), k2 in zip(self.draws, dw.after_draws(hand, cards))
        ]
        laid_outs = [[m.codes() for m in melds] for melds in layouts]
        now_total = wait_total = 0.0
        for s in samples:
            raw = dw(s)
            held = cards_of(s)
            laid = max(best_defense(laid_out, held).deadwood for laid_out in laid_outs)
            now_total += outcome(k, laid, undercut_bonus)
            if stock <= dead_at:
                continue  # not knocking ends the hand dead: 0 points
            after, opp_draw, eleven = self.opponent_turn(s, card)
            if after <= limit:
                if after == 0:
                    wait_total -= k + self.gin_bonus(eleven)
                else:
                    wait_total -= outcome(after, k, undercut_bonus)
                continue
            if stock - (opp_draw == "stock") <= dead_at:
                continue
            layoff = raw - laid
            value = 0.0
            for p, k2, bonus in mine_next:
                value += p * (after + bonus if k2 == 0 else outcome(k2, after - layoff, undercut_bonus))
            wait_total += value
        n, m = len(samples) or 1, self.multiplier
        return m * now_total / n, m * wait_total / n

    def opponent_turn(self, sample: int, offered: int) -> tuple[int, str, int]:
        """The opponent's deadwood after its next turn, where it drew from, and the
        eleven cards it held after the draw."""
        dw = self.dw
        now = dw(sample)
        bit = 1 << offered
        taken, _ = dw.best_discard(sample | bit, keep=bit)
        if taken < now and dw(sample | bit) < now + VALUE[offered]:
            return taken, "discard", sample | bit
        u = self.stock_card(sample)
        if u is None:
            return now, "stock", sample
        return dw.best_discard(sample | (1 << u))[0], "stock", sample | (1 << u)


def outcome(knocker: int, defender: int, undercut_bonus: int) -> float:
    """The knocker's points (negative when undercut) for a knock with these counts."""
    if defender > knocker:
        return defender - knocker
    return -(knocker - defender + undercut_bonus)


"""A cross-check of the engine against DeepMind OpenSpiel's ``gin_rummy`` (``pyspiel``),
for ``tests/engine/test_openspiel.py`` and ``benchmarks/openspiel.py``.

Each hand is played on both at once.  The same 52-card order is dealt into OpenSpiel by
choosing its chance outcomes: it deals its player 0 the first ten cards, player 1 the
next ten, turns the 21st up, and player 0 acts first, so our starter (``deck[0:10]``) is
its player 0 and the other seat its player 1; each stock draw's outcome is the card our
stock had on top.  Moves are chosen on our side (a seeded, mostly greedy random player,
below) and mirrored into OpenSpiel.  Before every decision the two must agree on whose
turn and which step it is, both hands, the discard pile, the stock size and the moves on
offer; in the discard step, on the set of discards that allow a knock and those that
make Gin.  At a knock, our knocker's layout is laid with OpenSpiel's meld actions and our
defender's layoffs and melds with its layoff and meld actions; both sides' deadwood, and
the hand's winner and points (OpenSpiel's returns), must be equal.  Two figures are also
recomputed on OpenSpiel's side alone, by searching its own actions: the least deadwood
the defender can reach (every sequence of its layoff actions, then its best melds), and
the knocker's best layout (of its meld groups of least deadwood, the one leaving the
defender the most) -- our ``best_defense`` and ``best_layout`` must find the same.

OpenSpiel's rules differ from ours in a few places; those are compared exactly but
counted apart (``KNOWN``), not reported as mismatches:

- ``tie_no_undercut``: a knock where the defender's deadwood equals the knocker's scores
  0 in OpenSpiel (its returns only add the undercut bonus when the knocker's difference is
  negative); ours, like most rule books, counts it as an undercut (25).
- ``wall_knock``: when a discard leaves two cards in the stock, ours ends the hand dead at
  once; OpenSpiel's "wall" lets the next player still knock with that discard (else the
  hand is a draw).  We mirror by passing; counted when its Knock was on offer.
- ``hidden_knock`` / ``hidden_gin``: OpenSpiel offers its Knock action only when its
  11-card deadwood (``MinDeadwood``: the best meld group of all eleven, less its highest
  unmelded card) is within the knock card; that shortcut sometimes overstates the least
  deadwood left after the best discard, so a legal knock (or Gin) is not offered although
  its own ``LegalDiscards`` would accept it.  Such knocks are not chosen (they cannot be
  mirrored).
- ``taken_card_knock``: OpenSpiel lets the player discard, and knock by discarding, the
  card just taken from the pile; ours refuses (``no_return``).  Counted when OpenSpiel
  would accept such a knock; ``taken_card_only`` when it is the only one (we list none).

Not compared: OpenSpiel's repeated-move draw and its 50-upcard-draw limit (our player
never discards the card it took and takes the pile's card fewer than 40 times a hand),
and the OpenSpiel knocker's freedom to lay any arrangement within the knock card (ours,
without ``knocker_arranges``, lays one of least deadwood, which we replay).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pyspiel

from service.engine import State, decide, fold
from service.engine.cards import RANKS
from service.engine.deals import shuffled_deck
from service.engine.game import DISCARD, DRAW, UPCARD_OFFER, plays
from service.engine.melds import deadwood, discard_deadwoods

GR = pyspiel.gin_rummy
UTILS = GR.GinRummyUtils(13, 4, 10)
#: OpenSpiel's card index is suit * 13 + rank with its suits in the order s, c, d, h
#: (ranks A..K as ours); ours is CDHS.
OS_SUITS = "SCDH"
DRAW_UPCARD, DRAW_STOCK, PASS, KNOCK, MELD_BASE = (
    GR.DRAW_UPCARD_ACTION,
    GR.DRAW_STOCK_ACTION,
    GR.PASS_ACTION,
    GR.KNOCK_ACTION,
    GR.MELD_ACTION_BASE,
)
Phase = GR.Phase

#: Our rules and OpenSpiel's parameters for each ruleset compared.
RULESETS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "upcard-offer": ({"preset": "upcard-offer", "single_hand": True}, {}),
    "oklahoma": (
        {
            "preset": "oklahoma",
            "spade_doubles": False,
            "game_bonus": 0,
            "box_bonus": 0,
            "shutout_doubles": False,
            "single_hand": True,
        },
        {"oklahoma": True},
    ),
    # The Oklahoma preset's own hand scoring: a spade upcard doubles our points, never
    # OpenSpiel's (compared halved, and counted as ``spade_double``).
    "oklahoma-spades": (
        {"preset": "oklahoma", "game_bonus": 0, "box_bonus": 0, "shutout_doubles": False, "single_hand": True},
        {"oklahoma": True},
    ),
    "bonus-20-10": (
        {"preset": "upcard-offer", "gin_bonus": 20, "undercut_bonus": 10, "single_hand": True},
        {"gin_bonus": 20, "undercut_bonus": 10},
    ),
}

#: The rule differences counted apart (see the module's docstring).
KNOWN = ("tie_no_undercut", "wall_knock", "hidden_knock", "hidden_gin", "taken_card_knock", "taken_card_only", "spade_double")
#: Most draws from the discard pile a hand (OpenSpiel ends a hand at its 50th).
MAX_PILE_DRAWS = 40


def to_os(card: str) -> int:
    """OpenSpiel's index of one of our card codes."""
    return OS_SUITS.index(card[1]) * 13 + RANKS.index(card[0])


def from_os(index: int) -> str:
    return RANKS[index % 13] + OS_SUITS[index // 13]


def os_cards(indexes: list[int]) -> list[str]:
    return sorted(map(from_os, indexes))


@cache
def os_initial_state(ruleset: str) -> Any:
    """OpenSpiel's state before the deal (each hand clones it: a new one builds its meld
    tables, which takes a thousand times longer)."""
    return pyspiel.load_game("gin_rummy", RULESETS[ruleset][1]).new_initial_state()


def split_meld(meld: list[str]) -> list[list[str]]:
    """Our meld as OpenSpiel's meld actions: a run of six or more is laid as several
    (OpenSpiel's melds are sets and runs of three to five)."""
    if len(meld) <= 5:
        return [meld]
    return [meld[:3]] + split_meld(meld[3:])


def meld_action(meld: list[str]) -> int:
    return MELD_BASE + UTILS.meld_to_int([to_os(c) for c in meld])


class Mismatch(AssertionError):
    """The engine and OpenSpiel disagree; the message shows the hand to check by hand."""


@dataclass
class Hand:
    """One hand being compared: what a mismatch report shows."""

    ruleset: str
    number: int
    deck: list[str]
    moves: list[str] = field(default_factory=list)

    def mismatch(self, what: str, ours: object, theirs: object, os_state: Any = None) -> Mismatch:
        rows = [
            f"engine and OpenSpiel disagree ({self.ruleset}, hand {self.number}): {what}",
            f"  ours:      {ours}",
            f"  OpenSpiel: {theirs}",
            f"  rules: {RULESETS[self.ruleset][0]}   OpenSpiel: {RULESETS[self.ruleset][1]}",
            "  deck (starter = OpenSpiel player 0 gets 0-9, the other 10-19, upcard 20, stock from 21 top first):",
            f"    {' '.join(self.deck[:10])} | {' '.join(self.deck[10:20])} | {self.deck[20]} | {' '.join(self.deck[21:])}",
            "  moves (seat = OpenSpiel player):",
            *(f"    {i + 1}. {m}" for i, m in enumerate(self.moves)),
        ]
        if os_state is not None:
            rows.append("  OpenSpiel's state:" + str(os_state).replace("\n", "\n    "))
        return Mismatch("\n".join(rows))


@dataclass
class Report:
    """What a run compared: hands, decisions, endings, the known differences counted,
    and the mismatches found (with their reports)."""

    hands: int = 0
    decisions: int = 0
    knock_checks: int = 0
    endings: Counter[str] = field(default_factory=Counter)
    known: Counter[str] = field(default_factory=Counter)
    mismatches: list[str] = field(default_factory=list)
    #: A sample of each known difference: (ruleset, hand number, what was seen).
    examples: dict[str, str] = field(default_factory=dict)

    def note(self, kind: str, hand: Hand, detail: str) -> None:
        self.known[kind] += 1
        self.examples.setdefault(kind, f"{hand.ruleset} hand {hand.number}: {detail}; deck {' '.join(hand.deck)}")

    def describe(self, limit: int = 3) -> str:
        head = f"{len(self.mismatches)} mismatch(es) in {self.hands} hands; the first {min(limit, len(self.mismatches))}:"
        return "\n\n".join([head, *self.mismatches[:limit]])


def _greedy_take(hand: tuple[str, ...], top: str) -> bool:
    return min(v for c, v in discard_deadwoods([*hand, top]).items() if c != top) < deadwood(hand)


@dataclass(frozen=True)
class Style:
    """How one hand is played: how often a player knocks when it may, and how often it
    throws the card leaving the least deadwood rather than any card."""

    knock: float
    greedy: float

    @classmethod
    def draw(cls, rng: random.Random) -> Style:
        return cls(knock=rng.choice((0.1, 0.4, 0.9)), greedy=rng.choice((0.5, 0.8, 0.95)))


def choose(
    state: State, actions: list[dict[str, Any]], knockable: set[str], pile_draws: int, style: Style, rng: random.Random
) -> dict[str, Any]:
    """A mostly greedy random player: takes the pile's card when it helps (mostly), ends
    the hand when it may with the style's odds (Gin nearly always), and throws the card
    leaving the least deadwood with the style's odds, else any card.  Knocks only with a
    discard OpenSpiel would also accept (``knockable``)."""
    seat = state.turn
    assert seat is not None
    hand = state.hands[seat]
    if state.phase == UPCARD_OFFER:
        take = _greedy_take(hand, state.discard_pile[-1]) if rng.random() < 0.85 else rng.random() < 0.5
        return {"type": "draw", "source": "discard"} if take else {"type": "pass"}
    if state.phase == DRAW:
        if state.stock_only or pile_draws >= MAX_PILE_DRAWS:
            return {"type": "draw", "source": "stock"}
        take = _greedy_take(hand, state.discard_pile[-1]) if rng.random() < 0.85 else rng.random() < 0.2
        return {"type": "draw", "source": "discard" if take else "stock"}
    enders = [a for a in actions if a["type"] in ("gin", "knock") and a["card"] in knockable]
    gins = [a for a in enders if a["type"] == "gin"]
    if gins and rng.random() < 0.95:
        return rng.choice(gins)
    if enders and rng.random() < style.knock:
        return rng.choice(enders)
    discards = [a for a in actions if a["type"] == "discard"]
    if rng.random() < style.greedy:
        left = discard_deadwoods(list(hand))
        low = min(left[a["card"]] for a in discards)
        discards = [a for a in discards if left[a["card"]] == low]
    return rng.choice(discards)


def best_os_defense(layoff_state: Any) -> int:
    """The least deadwood OpenSpiel's defender can reach: every sequence of its layoff
    actions, then the best melds of what is left (its ``MinDeadwood``)."""
    seen: set[tuple[int, ...]] = set()
    best = 1000

    def walk(s: Any) -> None:
        nonlocal best
        key = tuple(sorted(s.layoffs()))
        if key in seen:
            return
        seen.add(key)
        best = min(best, UTILS.min_deadwood(s.hands()[s.current_player()]))
        if s.finished_layoffs():
            return
        for action in s.legal_actions():
            if action < 52:
                child = s.clone()
                child.apply_action(action)
                walk(child)

    walk(layoff_state)
    return best


def best_os_layout(knock_state: Any, knocker: int) -> tuple[int, int]:
    """After OpenSpiel's knocker discarded: its least deadwood, and the most deadwood its
    layouts of that deadwood can leave the defender after the defender's best defense."""
    hand = knock_state.hands()[knocker]
    total = UTILS.total_card_value(hand)
    groups = {frozenset(tuple(sorted(m)) for m in g) for g in UTILS.all_meld_groups(hand)} or {frozenset()}
    value = {g: total - sum(UTILS.total_card_value(list(m)) for m in g) for g in groups}
    least = min(value.values())
    most = -1
    for group in (g for g in groups if value[g] == least):
        s = knock_state.clone()
        for meld in sorted(group):
            s.apply_action(MELD_BASE + UTILS.meld_to_int(list(meld)))
        s.apply_action(PASS)
        most = max(most, best_os_defense(s))
    return least, most


class CrossCheck:
    """Plays one hand on both engines (see the module's docstring)."""

    def __init__(self, ruleset: str, number: int, deck: list[str], rng: random.Random, report: Report):
        self.ruleset = ruleset
        self.hand = Hand(ruleset, number, deck)
        self.rng = rng
        self.report = report
        rules = RULESETS[ruleset][0]
        self.state = fold(decide(State(), {"type": "start_match", "rules": rules}))
        self.state = fold(decide(self.state, {"type": "deal", "deck": deck, "salt": "0" * 16}), self.state)
        assert self.state.starter is not None
        self.starter = self.state.starter
        self.os = os_initial_state(ruleset).clone()
        for card in deck[:21]:
            self.os.apply_action(to_os(card))
        self.pile_draws = 0
        self.style = Style.draw(rng)

    def player(self, seat: int) -> int:
        """OpenSpiel's player for one of our seats: the starter is its player 0."""
        return (seat - self.starter) % 2

    def fail(self, what: str, ours: object, theirs: object) -> Mismatch:
        return self.hand.mismatch(what, ours, theirs, self.os)

    def expect(self, what: str, ours: object, theirs: object) -> None:
        if ours != theirs:
            raise self.fail(what, ours, theirs)

    def play(self) -> None:
        while self.state.phase in (UPCARD_OFFER, DRAW, DISCARD):
            self.step()
        if not self.os.is_terminal():
            raise self.fail("the hand ended", self.state.phase, f"OpenSpiel still in {self.os.current_phase()}")

    def check_sync(self, seat: int) -> None:
        state, os = self.state, self.os
        self.expect("the player to act", self.player(seat), os.current_player())
        for s in (0, 1):
            self.expect(f"seat {s}'s hand", sorted(state.hands[s]), os_cards(os.hands()[self.player(s)]))
        upcard = os.upcard()
        pile = [from_os(c) for c in os.discard_pile()] + ([from_os(upcard)] if upcard is not None else [])
        self.expect("the discard pile (bottom to top)", list(state.discard_pile), pile)
        self.expect("the stock size", state.stock_count, os.stock_size())
        self.expect("the knock limit", state.knock_limit, os.knock_card())

    def step(self) -> None:
        state, os, report = self.state, self.os, self.report
        seat = state.turn
        assert seat is not None
        self.check_sync(seat)
        report.decisions += 1
        actions = plays(state, seat)
        legal = os.legal_actions()
        phase = os.current_phase()
        knockable: set[str] = set()
        if state.phase == UPCARD_OFFER:
            self.expect("the step (ours: the upcard offer, take or pass)", (Phase.FIRST_UPCARD, [DRAW_UPCARD, PASS]), (phase, legal))
        elif state.phase == DRAW and state.stock_only:
            self.expect("the step (ours: both passed, draw from the stock)", (Phase.FIRST_UPCARD, [DRAW_STOCK]), (phase, legal))
        elif state.phase == DRAW:
            self.expect("the step (ours: draw from the stock or the pile)", (Phase.DRAW, [DRAW_UPCARD, DRAW_STOCK]), (phase, legal))
        else:
            self.expect("the step (ours: discard)", Phase.DISCARD, phase)
            knockable = self.compare_discard_step(seat, actions, legal)
        command = choose(state, actions, knockable, self.pile_draws, self.style, self.rng)
        events = decide(state, {**command, "seat": seat})
        self.state = fold(events, state)
        self.mirror(seat, command, events)

    def compare_discard_step(self, seat: int, actions: list[dict[str, Any]], legal: list[int]) -> set[str]:
        """The discards on offer, and which of them knock or make Gin; returns the knock
        discards OpenSpiel would accept (its Knock action, then its legal discards)."""
        state, report, hand = self.state, self.report, self.hand
        taken = state.taken_from_discard
        extra = {taken} if taken else set()
        discards = {a["card"] for a in actions if a["type"] == "discard"}
        self.expect("the discards on offer (OpenSpiel's less the card just taken)", discards, set(os_cards([a for a in legal if a < 52])) - extra)
        ours_knock = {a["card"] for a in actions if a["type"] in ("knock", "gin")}
        ours_gin = {a["card"] for a in actions if a["type"] == "gin"}
        os_hand = self.os.hands()[self.player(seat)]
        limit = state.knock_limit
        exact = set(os_cards(UTILS.legal_discards(os_hand, limit)))
        exact_gin = {c for c in exact if UTILS.min_deadwood([x for x in os_hand if x != to_os(c)]) == 0}
        report.knock_checks += 1
        self.expect("the discards that allow a knock or Gin (OpenSpiel's LegalDiscards less the card just taken)", ours_knock, exact - extra)
        self.expect("the discards that make Gin (deadwood 0 after them)", ours_gin, exact_gin - extra)
        offered: set[str] = set()
        if KNOCK in legal:
            probe = self.os.clone()
            probe.apply_action(KNOCK)
            offered = set(os_cards([a for a in probe.legal_actions() if a < 52]))
            self.expect("OpenSpiel with itself (ours: its LegalDiscards; OpenSpiel: its discards after its Knock)", exact, offered)
        if ours_knock and KNOCK not in legal:
            kind = "hidden_gin" if ours_gin else "hidden_knock"
            detail = f"{' '.join(sorted(state.hands[seat]))}: knock with {sorted(ours_knock)} (Gin {sorted(ours_gin)}), limit {limit}, "
            report.note(kind, hand, detail + f"OpenSpiel's 11-card deadwood {self.os.deadwood()[self.player(seat)]}")
        if taken and taken in offered:
            report.note("taken_card_only" if offered == {taken} else "taken_card_knock", hand, f"{' '.join(sorted(state.hands[seat]))}, took {taken}")
        return offered - extra

    def mirror(self, seat: int, command: dict[str, Any], events: list[Any]) -> None:
        os, hand = self.os, self.hand
        kind = command["type"]
        if kind == "pass":
            hand.moves.append(f"seat {seat}: pass the upcard")
            os.apply_action(PASS)
        elif kind == "draw":
            card = events[0].data["card"]
            hand.moves.append(f"seat {seat}: draw {command['source']} ({card})")
            if command["source"] == "discard":
                if os.current_phase() == Phase.DRAW:
                    self.pile_draws += 1
                os.apply_action(DRAW_UPCARD)
            else:
                os.apply_action(DRAW_STOCK)
                self.expect("a chance node deals the stock card", True, os.is_chance_node())
                os.apply_action(to_os(card))
        elif kind == "discard":
            hand.moves.append(f"seat {seat}: discard {command['card']}")
            os.apply_action(to_os(command["card"]))
            ended = [e.data for e in events if e.type == "hand_ended"]
            if ended:
                self.wall(seat, ended[0])
        else:
            self.knock(seat, command, events)

    def wall(self, seat: int, ended: dict[str, Any]) -> None:
        """Our dead hand: OpenSpiel's wall, where the other player may still knock."""
        os = self.os
        self.expect("the hand's end (ours dead at two stock cards; OpenSpiel's wall)", ended["result"], "dead")
        self.expect("OpenSpiel at the wall, the other player to act", (Phase.WALL, self.player(1 - seat)), (os.current_phase(), os.current_player()))
        if KNOCK in os.legal_actions():
            other = self.state.hands[1 - seat]
            self.report.note("wall_knock", self.hand, f"{' '.join(sorted(other))} could knock with {self.state.discard_pile[-1]}")
        self.hand.moves.append(f"seat {1 - seat}: (OpenSpiel's wall: pass)")
        os.apply_action(PASS)
        self.finish(ended, None, None)

    def knock(self, seat: int, command: dict[str, Any], events: list[Any]) -> None:
        os, hand = self.os, self.hand
        knocked = next(e.data for e in events if e.type == "knocked")
        defended = next(e.data for e in events if e.type == "defended")
        ended = next(e.data for e in events if e.type == "hand_ended")
        melds = [m for meld in knocked["melds"] for m in split_meld(meld)]
        hand.moves.append(
            f"seat {seat}: {command['type']} with {command['card']}: melds {knocked['melds']}, deadwood {knocked['deadwood_cards']} = {knocked['deadwood']}"
        )
        hand.moves.append(
            f"seat {1 - seat}: defend: layoffs {[(x['card'], x['meld']) for x in defended['layoffs']]}, melds {defended['melds']}, "
            f"deadwood {defended['deadwood_cards']} = {defended['deadwood']}"
        )
        hand.moves.append(f"hand ended: {ended['result']}, winner seat {ended['winner']}, {ended['points']} points")
        os.apply_action(KNOCK)
        os.apply_action(to_os(command["card"]))
        knocker = self.player(seat)
        if not knocked["gin"]:
            least, most = best_os_layout(os, knocker)
            self.expect("the knocker's least deadwood", knocked["deadwood"], least)
            self.expect("the defender's deadwood after the knocker's best layout and its best defense", defended["deadwood"], most)
        for meld in melds:
            self.apply_listed(meld_action(meld), f"the knocker's meld {meld}")
        self.apply_listed(PASS, "the knocker's pass after its melds")
        self.expect("the knocker's deadwood", knocked["deadwood"], os.deadwood()[knocker])
        self.expect("the defender to act", self.player(1 - seat), os.current_player())
        self.expect("the defender's least deadwood", defended["deadwood"], best_os_defense(os))
        layoffs = [x["card"] for x in defended["layoffs"]]
        own = [m for meld in defended["melds"] for m in split_meld(meld)]
        if not knocked["gin"]:
            for card in layoffs:
                self.apply_listed(to_os(card), f"the layoff {card}")
            self.apply_listed(PASS, "the defender's pass after its layoffs")
        for meld in own:
            self.apply_listed(meld_action(meld), f"the defender's meld {meld}")
        self.apply_listed(PASS, "the defender's pass after its melds")
        self.expect("the defender's deadwood", defended["deadwood"], os.deadwood()[self.player(1 - seat)])
        self.finish(ended, knocked, defended)

    def apply_listed(self, action: int, what: str) -> None:
        legal = self.os.legal_actions()
        if action not in legal:
            raise self.fail(f"{what} is legal", action, f"not among {[self.os.action_to_string(a) for a in legal]}")
        self.os.apply_action(action)

    def finish(self, ended: dict[str, Any], knocked: dict[str, Any] | None, defended: dict[str, Any] | None) -> None:
        os = self.os
        self.expect("OpenSpiel's hand is over", True, os.is_terminal())
        returns = [int(r) for r in os.returns()]
        expected = [0, 0]
        points = ended["points"]
        if ended.get("doubled"):
            self.report.note("spade_double", self.hand, f"upcard {self.state.upcard}: ours {points} points, OpenSpiel {returns}")
            self.expect("our doubled points are even", 0, points % 2)
            points //= 2
        if ended["winner"] is not None:
            winner = self.player(ended["winner"])
            expected[winner], expected[1 - winner] = points, -points
        self.report.endings[ended["result"]] += 1
        if ended["result"] == "undercut" and knocked is not None and defended is not None and knocked["deadwood"] == defended["deadwood"]:
            self.report.note("tie_no_undercut", self.hand, f"both {knocked['deadwood']}: ours undercut {points}, OpenSpiel {returns}")
            expected = [0, 0]
        self.expect(f"the returns (ours: {ended['result']}, winner seat {ended['winner']}, {ended['points']} points)", expected, returns)


def cross_check(ruleset: str, hands: int, seed: object, report: Report | None = None, progress: Callable[[int], None] | None = None) -> Report:
    """Play ``hands`` hands of a ruleset on both engines; a mismatch ends its hand and is
    recorded in the report, the others go on."""
    report = report or Report()
    rng = random.Random(seed)
    for number in range(hands):
        check = CrossCheck(ruleset, number, shuffled_deck(rng), random.Random(rng.getrandbits(64)), report)
        try:
            check.play()
        except Mismatch as exc:
            report.mismatches.append(str(exc))
        report.hands += 1
        if progress is not None:
            progress(number)
    return report

"""The bots' round-robin, in duplicate format: every deal sequence is played twice with
the seats swapped, so the luck of the cards cancels out.

    python benchmarks/bots.py                      # the full run: 500 matches per pair and preset
    python benchmarks/bots.py --matches 20 --presets classic --pairs medium-hard
    python benchmarks/bots.py --presets all --pairs medium-hard          # every preset of the engine
    python benchmarks/bots.py --presets oklahoma,straight,hollywood --target 50

Matches are played to each preset's target score (``--target`` overrides it: under
Hollywood scoring it is the target of each of the three games, and a match is the
three games) on the engine directly (``tests/support/arena.py``), each decision given
exactly the seat view and redacted history the service would give.
For each pair and preset it prints match and hand win rates with 95% (Wilson)
intervals, points per hand, the mix of endings, and decision-time percentiles per
level; then, per preset, the stronger level's match win share with its interval; then the issue's requirements: medium wins at least 75% of its matches against
easy, and hard at least 62% against medium with the whole interval above 55%.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: the tests' support modules
from service.engine import PRESETS as ENGINE_PRESETS  # noqa: E402
from tests.support.arena import MatchRecord, play_match  # noqa: E402

PAIRS = ("easy-medium", "medium-hard", "easy-hard")
PRESETS = ("classic", "bonus-20-10")
#: ``--presets all``: every preset the engine plays (``new``: the variants' presets).
ALL_PRESETS = tuple(ENGINE_PRESETS)
NEW_PRESETS = ("oklahoma", "straight", "hollywood")
ENDINGS = ("knock", "gin", "undercut", "dead")
#: (weaker, stronger, least share of matches the stronger must win, least lower bound of its interval)
REQUIREMENTS = (("easy", "medium", 0.75, None), ("medium", "hard", 0.62, 0.55))


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def play_deal(job: tuple[str, str, str, str, int, int | None]) -> tuple[MatchRecord, MatchRecord]:
    """One deal sequence, played with ``first`` in seat 0, then in seat 1."""
    first, second, preset, seed, index, target = job
    deal_seed = f"{seed}:{preset}:{first}-{second}:{index}"
    bot_seeds = (index * 2 + 1, index * 2 + 2)
    rules: dict[str, object] = {"preset": preset}
    if target is not None:
        rules["target_score"] = target
    return (
        play_match((first, second), rules, deal_seed, bot_seeds),
        play_match((second, first), rules, deal_seed, bot_seeds),
    )


@dataclass
class Tally:
    """Results from the point of view of the pair's second (stronger) level."""

    weaker: str
    stronger: str
    preset: str
    matches: int = 0
    match_wins: int = 0
    hands: int = 0
    decided: int = 0
    hand_wins: int = 0
    points: dict[str, int] = field(default_factory=Counter)
    net_per_hand: list[int] = field(default_factory=list)
    endings: Counter = field(default_factory=Counter)
    #: Ending kinds by the level that knocked (a dead hand has none).
    by_knocker: Counter = field(default_factory=Counter)
    times: dict[str, list[float]] = field(default_factory=dict)

    def add(self, record: MatchRecord) -> None:
        strong = record.levels.index(self.stronger)
        self.matches += 1
        self.match_wins += record.winner == strong
        for hand in record.hands:
            self.hands += 1
            self.endings[hand.result] += 1
            if hand.knocker is not None:
                self.by_knocker[(record.levels[hand.knocker], hand.result)] += 1
            net = 0
            if hand.winner is not None:
                self.decided += 1
                self.hand_wins += hand.winner == strong
                self.points[record.levels[hand.winner]] += hand.points
                net = hand.points if hand.winner == strong else -hand.points
            self.net_per_hand.append(net)
        for level, times in record.times.items():
            self.times.setdefault(level, []).extend(times)

    def match_rate(self) -> float:
        return self.match_wins / self.matches if self.matches else 0.0

    def report(self) -> str:
        lines = [f"{self.stronger} vs {self.weaker} under {self.preset}: {self.matches} matches, {self.hands} hands"]
        lo, hi = wilson(self.match_wins, self.matches)
        lines.append(f"  matches won by {self.stronger:<6}: {self.match_rate():6.1%}  (95% CI {lo:.1%} to {hi:.1%})")
        lo, hi = wilson(self.hand_wins, self.decided)
        rate = self.hand_wins / self.decided if self.decided else 0.0
        lines.append(
            f"  hands won by {self.stronger:<6}  : {rate:6.1%}  (95% CI {lo:.1%} to {hi:.1%}; of {self.decided} hands that scored)"
        )
        n = len(self.net_per_hand) or 1
        mean = sum(self.net_per_hand) / n
        sd = statistics.pstdev(self.net_per_hand) if len(self.net_per_hand) > 1 else 0.0
        half = 1.96 * sd / math.sqrt(n)
        lines.append(
            f"  points per hand      : {self.stronger} {self.points[self.stronger] / n:.2f}, "
            f"{self.weaker} {self.points[self.weaker] / n:.2f}; net {mean:+.2f} (95% CI {mean - half:+.2f} to {mean + half:+.2f})"
        )
        mix = ", ".join(f"{e} {self.endings[e] / n:.1%}" for e in ENDINGS)
        lines.append(f"  endings              : {mix}")
        for level in (self.stronger, self.weaker):
            made = ", ".join(f"{e} {self.by_knocker[(level, e)]}" for e in ("knock", "gin", "undercut"))
            lines.append(f"  hands ended by {level:<6}: {made} (undercut = it knocked and was undercut)")
        return "\n".join(lines)


def percentiles(times: list[float]) -> str:
    ts = sorted(times)
    if not ts:
        return "no decisions"

    def at(q: float) -> float:
        return ts[min(len(ts) - 1, int(q * len(ts)))] * 1000

    return (
        f"{len(ts):>7} decisions: p50 {at(0.5):6.2f} ms, p90 {at(0.9):6.2f} ms, "
        f"p99 {at(0.99):6.2f} ms, max {ts[-1] * 1000:7.2f} ms"
    )


def run(
    pairs, presets, matches: int, hands: int, seed: str, workers: int, out=print, target: int | None = None
) -> list[Tally]:
    tallies = []
    deals_min = max(1, (matches + 1) // 2)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for preset in presets:
            for pair in pairs:
                weaker, stronger = pair.split("-")
                tally = Tally(weaker, stronger, preset)
                start = time.perf_counter()
                index, batch = 0, deals_min
                while batch:
                    jobs = [(weaker, stronger, preset, seed, index + i, target) for i in range(batch)]
                    for a, b in pool.map(play_deal, jobs, chunksize=max(1, batch // (8 * workers))):
                        tally.add(a)
                        tally.add(b)
                    index += batch
                    batch = 16 if tally.hands < hands else 0  # more deals until enough hands
                out(tally.report())
                out(f"  ({time.perf_counter() - start:.0f} s)")
                tallies.append(tally)
    return tallies


def summary(tallies: list[Tally], out=print) -> bool:
    times: dict[str, list[float]] = {}
    for t in tallies:
        for level, ts in t.times.items():
            times.setdefault(level, []).extend(ts)
    out("decision times (CPU time of the deciding thread, every decision of every match above):")
    for level in ("easy", "medium", "hard"):
        if level in times:
            out(f"  {level:<6} {percentiles(times[level])}")
    out("match win share of the stronger level, per preset (95% Wilson interval):")
    for t in tallies:
        lo, hi = wilson(t.match_wins, t.matches)
        out(
            f"  {t.preset:<12} {t.stronger} vs {t.weaker}: {t.match_rate():6.1%}  (95% CI {lo:.1%} to {hi:.1%}; "
            f"{t.matches} matches, {t.hands} hands)"
        )
    ok = True
    out("requirements:")
    for weaker, stronger, share, lower in REQUIREMENTS:
        for t in tallies:
            if (t.weaker, t.stronger) != (weaker, stronger):
                continue
            lo, _ = wilson(t.match_wins, t.matches)
            met = t.match_rate() >= share and (lower is None or lo > lower)
            ok &= met
            need = f">= {share:.0%}" + (f", CI above {lower:.0%}" if lower is not None else "")
            out(
                f"  {stronger} vs {weaker} ({t.preset}): {t.match_rate():.1%} (CI from {lo:.1%}); "
                f"needs {need}: {'PASS' if met else 'FAIL'}"
            )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--matches", type=int, default=500, help="matches per pair and preset (half as many deals, each played twice)"
    )
    parser.add_argument("--hands", type=int, default=2000, help="play more deals until at least this many hands")
    parser.add_argument(
        "--presets",
        "--preset",
        default=",".join(PRESETS),
        help="comma-separated presets; 'all' for every preset, 'new' for oklahoma, straight and hollywood",
    )
    parser.add_argument(
        "--target", type=int, default=None, help="target score of every match (under hollywood: of each of its games)"
    )
    parser.add_argument("--pairs", default=",".join(PAIRS), help="comma-separated weaker-stronger pairs")
    parser.add_argument("--seed", default="bots-2026")
    parser.add_argument("--workers", type=int, default=2, help="processes (decision times are per process)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a requirement is not met")
    args = parser.parse_args(argv)
    pairs = [p.strip() for p in args.pairs.split(",") if p.strip()]
    for pair in pairs:
        levels = pair.split("-")
        if len(levels) != 2 or any(lv not in ("easy", "medium", "hard") for lv in levels) or levels[0] == levels[1]:
            parser.error(f"a pair is two different levels such as medium-hard, got {pair!r}")
    presets: list[str] = []
    for name in (p.strip() for p in args.presets.split(",")):
        for preset in ALL_PRESETS if name == "all" else NEW_PRESETS if name == "new" else (name,) if name else ():
            if preset not in ENGINE_PRESETS:
                parser.error(f"unknown preset {preset!r}; the presets are {', '.join(ENGINE_PRESETS)}, all and new")
            if preset not in presets:
                presets.append(preset)
    if args.target is not None and not 1 <= args.target <= 1000:
        parser.error(f"--target must be from 1 to 1000, got {args.target}")
    target = f", target {args.target}" if args.target is not None else ", each preset's target"
    print(
        f"duplicate round-robin: {args.matches} matches (at least {args.hands} hands) per pair and preset{target}, "
        f"seed {args.seed!r}"
    )
    tallies = run(pairs, presets, args.matches, args.hands, args.seed, args.workers, target=args.target)
    ok = summary(tallies)
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    sys.exit(main())

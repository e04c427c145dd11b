"""Hard against itself changed, hand by hand on the same deals: is a change to hard better?

    python benchmarks/bots_paired.py --set FEED_COST=2 --deals 1000
    python benchmarks/bots_paired.py --oracle-feeds --deals 600     # what knowing medium's hand is worth

The match round-robin (``benchmarks/bots.py``) is too coarse to tune with: 500 matches
give an interval of about ±4 points on the match rate. Here each deal is played as a
single hand, twice with the seats swapped (duplicate), by ``hard`` against ``--against``
(medium by default): once by hard as it is and once by the *variant*, on the same
deals with the same seeds. Most of the variant's decisions are the same as the
baseline's, so the difference per deal is far less noisy than either result: about
0.05 to 0.3 points per hand of standard error over 1,000 deals, against about 0.3 for
one result alone.

The variant is hard with some of its module constants changed (``--set NAME=VALUE``,
any upper-case number of ``service.bots.hard``), and/or, with ``--oracle-feeds``, hard
told the opponent's true hand as its per-card chances (what its estimates of
feeding a meld and of layoffs start from). The
oracle cheats on purpose: it measures what better inference of the opponent's hand
could be worth at most; it is never part of a bot.

It prints each side's net points per hand (for hard, with the standard error), the
paired difference (variant minus baseline, with its standard error), and the mix of
endings of each.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from service.bots import hard, opponent
from service.bots.knowledge import mask_of

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: the tests' support modules
from tests.support import arena  # noqa: E402


def constants() -> dict[str, float]:
    """The tunable constants of ``service.bots.hard``: its upper-case numbers."""
    return {
        k: v
        for k, v in vars(hard).items()
        if k.isupper() and isinstance(v, (int, float)) and not isinstance(v, bool)
    }


def parse_set(items: list[str]) -> dict[str, float]:
    known = constants()
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in known:
            raise ValueError(f"--set takes NAME=VALUE with NAME one of {', '.join(sorted(known))}; got {item!r}")
        whole = not isinstance(known[name], float)
        try:
            out[name] = int(value) if whole else float(value)
        except ValueError:
            raise ValueError(f"{name} takes a {'whole ' if whole else ''}number, got {value!r}") from None
    return out


def _oracle_feeds() -> None:
    """Give hard's opponent model the true hand as its per-card chances (which feed the
    estimates of feeding a meld and of the layoffs a knock leaves)."""
    seen: dict[str, object] = {}
    seat_view = arena.seat_view

    def remembering_seat_view(state, seat):
        seen["state"] = state
        return seat_view(state, seat)

    arena.seat_view = remembering_seat_view
    model_init = opponent.OpponentModel.__init__

    def init(self, know):
        model_init(self, know)
        held = mask_of(seen["state"].hands[1 - know.seat])
        self.chance = [1.0 if (held >> i) & 1 else 0.0 for i in range(52)]

    opponent.OpponentModel.__init__ = init


def setup(overrides: dict[str, float], oracle: bool) -> None:
    """Runs in each worker process, before its first hand."""
    for name, value in overrides.items():
        setattr(hard, name, value)
    if oracle:
        _oracle_feeds()


def play_deal(job: tuple[str, str, str, int]) -> tuple[int, list[tuple[int, str, str | None]]]:
    """One deal as a single hand, hard in seat 0 then in seat 1: (hard's net points, ending, who knocked)."""
    against, preset, seed, index = job
    out = []
    for levels in (("hard", against), (against, "hard")):
        rules = {"preset": preset, "single_hand": True}
        record = arena.play_match(levels, rules, f"{seed}:{preset}:{index}", (2 * index + 1, 2 * index + 2))
        hand, me = record.hands[0], levels.index("hard")
        net = 0 if hand.winner is None else (hand.points if hand.winner == me else -hand.points)
        knocker = None if hand.knocker is None else ("hard" if hand.knocker == me else against)
        out.append((net, hand.result, knocker))
    return index, out


def play_all(args, overrides: dict[str, float], oracle: bool) -> dict[int, list]:
    jobs = [(args.against, args.preset, args.seed, i) for i in range(args.deals)]
    with ProcessPoolExecutor(args.workers, initializer=setup, initargs=(overrides, oracle)) as pool:
        return dict(pool.map(play_deal, jobs, chunksize=max(1, args.deals // (8 * args.workers))))


def mean_se(xs: list[float]) -> tuple[float, float]:
    """The mean and its standard error (``--deals`` is at least 2)."""
    return statistics.fmean(xs), statistics.stdev(xs) / math.sqrt(len(xs))


def per_deal(results: dict[int, list]) -> dict[int, float]:
    """Hard's mean net points per hand of each deal (the two seatings averaged)."""
    return {i: sum(r[0] for r in rs) / len(rs) for i, rs in results.items()}


def endings(results: dict[int, list]) -> str:
    mix = Counter(f"{r[1]} by {r[2]}" if r[2] else r[1] for rs in results.values() for r in rs)
    return ", ".join(f"{k} {v}" for k, v in sorted(mix.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a constant of service.bots.hard")
    parser.add_argument("--oracle-feeds", action="store_true", help="the variant knows the opponent's hand for feeds")
    parser.add_argument("--deals", type=int, default=1000, help="deals, each played twice")
    parser.add_argument("--against", default="medium", choices=("easy", "medium"))
    parser.add_argument("--preset", default="bonus-20-10")
    parser.add_argument("--seed", default="paired-2026")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    try:
        overrides = parse_set(args.set)
    except ValueError as e:
        parser.error(str(e))
    if not overrides and not args.oracle_feeds:
        parser.error("nothing to compare: give --set NAME=VALUE or --oracle-feeds")
    if args.deals < 2:
        parser.error("--deals must be at least 2")
    label = " ".join([*(f"{k}={v}" for k, v in overrides.items()), *(["oracle-feeds"] if args.oracle_feeds else [])])
    print(f"hard vs {args.against} under {args.preset}, {args.deals} deals each played twice as a single hand")
    start = time.perf_counter()
    base = play_all(args, {}, False)
    variant = play_all(args, overrides, args.oracle_feeds)
    a, b = per_deal(base), per_deal(variant)
    for name, res, nets in (("baseline", base, a), (f"variant ({label})", variant, b)):
        m, se = mean_se(list(nets.values()))
        print(f"  {name:<30} net {m:+.2f} points per hand (se {se:.2f}); {endings(res)}")
    m, se = mean_se([b[i] - a[i] for i in a])
    print(f"  difference, variant - baseline: {m:+.3f} points per hand (se {se:.3f}, 95% CI {m - 1.96 * se:+.2f} to {m + 1.96 * se:+.2f})")
    print(f"  ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Engine speed: best_melds, best defense, random-play hands, folding a long match.

    python benchmarks/engine.py [--seconds 2]

Targets (issue 2): >= 200,000 best_melds/s on random 10-card hands (one core),
>= 1,000 complete random-play hands/s, a long 100-point match folded in < 5 ms.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from service.engine import DECK, best_defense, best_melds, fold

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: the tests' players
from tests.support.play import play_greedy_match, play_match  # noqa: E402


def rate(fn, items, seconds: float) -> float:
    """Calls per second of fn over items, repeated for about ``seconds``."""
    done = 0
    start = time.perf_counter()
    while True:
        for item in items:
            fn(item)
        done += len(items)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done / elapsed


def fold_time(events: list, runs: int = 30) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(runs):
            fold(events)
        best = min(best, (time.perf_counter() - start) / runs)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--greedy-matches", type=int, default=200, help="greedy matches to find a long one")
    args = parser.parse_args()
    rng = random.Random(args.seed)

    tens = [rng.sample(DECK, 10) for _ in range(20_000)]
    elevens = [rng.sample(DECK, 11) for _ in range(20_000)]
    best_melds(tens[0])  # fill the lazy per-suit tables before timing
    print(f"best_melds, random 10-card hands : {rate(best_melds, tens, args.seconds):>12,.0f} /s  (target 200,000)")
    print(f"best_melds, random 11-card hands : {rate(best_melds, elevens, args.seconds):>12,.0f} /s")

    # Defense: a knocker's real arrangement (deadwood <= 10) against a random hand.
    knocks = []
    while len(knocks) < 2_000:
        cards = rng.sample(DECK, 20)
        arrangement = best_melds(cards[:10])
        if arrangement.deadwood <= 10:
            knocks.append((arrangement.melds, cards[10:]))
    print(f"best_defense against a knock     : {rate(lambda k: best_defense(*k), knocks, args.seconds):>12,.0f} /s")

    hands = 0
    matches = []
    start = time.perf_counter()
    presets = ["classic", "short-stock", "upcard-offer", "bonus-20-10"]
    while time.perf_counter() - start < args.seconds * 2:
        state, events = play_match(rng, {"preset": presets[len(matches) % 4]})
        hands += state.hand_number
        matches.append(events)
    elapsed = time.perf_counter() - start
    print(f"random-play hands (to 100)       : {hands / elapsed:>12,.0f} /s  (target 1,000; {len(matches)} matches)")

    # A long match as people (or bots) play it: the longest of many greedy matches to 100.
    greedy = [play_greedy_match(rng, {"preset": presets[i % 4]}) for i in range(args.greedy_matches)]
    long_match = max(greedy, key=len)
    last = fold(long_match)
    print(
        f"fold a long 100-point match      : {fold_time(long_match) * 1000:>12.2f} ms  (target < 5 ms; "
        f"longest of {len(greedy)} greedy matches: {len(long_match)} events, {last.hand_number} hands)"
    )
    # Random players rarely knock, so their matches run to dozens of hands: the extreme case.
    longest = max((m for m in matches if m[0].data["rules"]["target_score"] == 100), key=len)
    last = fold(longest)
    per_fold = fold_time(longest, runs=10)
    print(
        f"fold the longest random match    : {per_fold * 1000:>12.2f} ms  "
        f"({len(longest)} events, {last.hand_number} hands: {per_fold / len(longest) * 1e6:.2f} µs per event)"
    )


if __name__ == "__main__":
    main()

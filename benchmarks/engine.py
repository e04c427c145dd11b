"""Engine speed: best_melds, best defense, random-play hands, folding a long match.

    python benchmarks/engine.py [--seconds 2]

Targets (issue 2): >= 200,000 best_melds/s on random 10-card hands (one core),
>= 1,000 complete random-play hands/s, a long 100-point match folded in < 5 ms.
"""

from __future__ import annotations

import argparse
import random
import time

from service.engine import DECK, best_defense, best_melds, fold
from service.engine.simulate import play_match


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--seed", type=int, default=2026)
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

    longest = max((m for m in matches if m[0].data["rules"]["target_score"] == 100), key=len)
    runs = 50
    start = time.perf_counter()
    for _ in range(runs):
        fold(longest)
    per_fold = (time.perf_counter() - start) / runs
    last = fold(longest)
    print(
        f"fold the longest match played    : {per_fold * 1000:>12.2f} ms  (target < 5 ms; "
        f"{len(longest)} events, {last.hand_number} hands, scores {list(last.scores)})"
    )


if __name__ == "__main__":
    main()

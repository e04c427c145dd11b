"""Decisions stay fast: hard under 50 ms at the 99th percentile, easy and medium under 5 ms.

Times are CPU time of the deciding thread (``time.thread_time``), so another program busy on
the same machine does not count against a bot.
"""

from __future__ import annotations

import random
import time

from service.bots import choose_action
from service.bots.arena import play_match

BOUNDS_MS = {"easy": 5.0, "medium": 5.0, "hard": 50.0}


def p99(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[int(0.99 * len(ordered))] * 1000


def timed_decisions(levels: tuple[str, str], matches: int, preset: str) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {level: [] for level in levels}

    def timed(view, history, level, rng: random.Random) -> dict:
        start = time.thread_time()
        action = choose_action(view, history, level, rng)
        times[level].append(time.thread_time() - start)
        return action

    for i in range(matches):
        play_match(levels, {"preset": preset, "target_score": 50}, f"timing-{preset}-{i}", (i, i + 3), chooser=timed)
    return times


def test_hard_decides_within_50_ms_at_the_99th_percentile():
    times = timed_decisions(("hard", "medium"), 8, "classic")
    times_b = timed_decisions(("medium", "hard"), 8, "bonus-20-10")
    hard = times["hard"] + times_b["hard"]
    assert len(hard) > 500
    assert p99(hard) < BOUNDS_MS["hard"], f"hard p99 {p99(hard):.1f} ms over {len(hard)} decisions"


def test_easy_and_medium_decide_within_5_ms_at_the_99th_percentile():
    times = timed_decisions(("easy", "medium"), 20, "classic")
    for level in ("easy", "medium"):
        assert len(times[level]) > 500
        assert p99(times[level]) < BOUNDS_MS[level], f"{level} p99 {p99(times[level]):.2f} ms"

"""The round-robin benchmark runs end to end in a short version and prints every figure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_benchmark(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "benchmarks/bots.py", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_short_duplicate_round_robin_prints_rates_points_endings_and_times():
    result = run_benchmark(
        "--matches", "4", "--hands", "0", "--presets", "classic,bonus-20-10", "--pairs", "easy-medium", "--workers", "1"
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for preset in ("classic", "bonus-20-10"):
        assert f"medium vs easy under {preset}: 4 matches" in out
    assert "matches won by medium" in out and "95% CI" in out
    assert "hands won by medium" in out
    assert "points per hand" in out and "net" in out
    assert "endings" in out and "knock" in out and "undercut" in out and "dead" in out
    assert "easy" in out and "p99" in out
    assert "requirements:" in out


def test_the_benchmark_refuses_a_pair_that_is_not_two_levels():
    result = run_benchmark("--pairs", "medium-expert")
    assert result.returncode == 2 and "a pair is two different levels" in result.stderr

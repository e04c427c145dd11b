"""The bots' benchmarks run end to end in a short version and print every figure."""

from __future__ import annotations

import subprocess

from tests.scripts import run_script


def run_benchmark(*args: str) -> subprocess.CompletedProcess:
    return run_script("benchmarks/bots.py", *args)


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


def run_paired(*args: str) -> subprocess.CompletedProcess:
    return run_script("benchmarks/bots_paired.py", "--deals", "3", "--workers", "1", *args)


def test_a_variant_equal_to_hard_plays_every_deal_alike():
    """The same constants on the same deals and seeds: the same decisions, a difference of exactly 0."""
    from service.bots import hard

    result = run_paired("--set", f"FEED_COST={hard.FEED_COST}")
    assert result.returncode == 0, result.stderr
    assert "hard vs medium under bonus-20-10, 3 deals" in result.stdout
    assert "difference, variant - baseline: +0.000 points per hand (se 0.000" in result.stdout


def test_a_changed_variant_and_the_oracle_report_both_sides_and_the_difference():
    result = run_paired("--set", "FEED_COST=40", "--oracle-feeds", "--preset", "classic")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "baseline" in out and "variant (FEED_COST=40.0 oracle-feeds)" in out
    assert out.count(" net ") == 2 and "difference, variant - baseline" in out and "95% CI" in out


def test_the_paired_benchmark_refuses_an_unknown_constant_and_an_empty_comparison():
    unknown = run_paired("--set", "NOT_A_CONSTANT=1")
    assert unknown.returncode == 2 and "NAME one of" in unknown.stderr and "FEED_COST" in unknown.stderr
    empty = run_paired()
    assert empty.returncode == 2 and "nothing to compare" in empty.stderr

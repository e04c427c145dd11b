"""The engine cross-checked against DeepMind OpenSpiel's ``gin_rummy`` over many hands:
``tests/engine/test_openspiel.py``'s check (``tests/support/openspiel.py``), longer.

    python benchmarks/openspiel.py                        # 10,000 hands of each ruleset
    python benchmarks/openspiel.py --hands 2000 --rulesets oklahoma --jobs 2

For each ruleset it prints the hands and decisions compared, the knock checks (discard
steps whose knock and Gin discards were compared), the endings, each known rule
difference counted (with one example) and the mismatches; a mismatch's full report
(deck, moves, both sides' figures) follows, the first few of each ruleset.  Exits 1 on a
mismatch.  Needs the test extra's ``open_spiel``.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: the tests' support modules
from tests.support.openspiel import KNOWN, RULESETS, Report, cross_check  # noqa: E402


def run_chunk(ruleset: str, hands: int, seed: str) -> Report:
    return cross_check(ruleset, hands, seed=seed)


def merge(reports: list[Report]) -> Report:
    total = Report()
    for r in reports:
        total.hands += r.hands
        total.decisions += r.decisions
        total.knock_checks += r.knock_checks
        total.endings.update(r.endings)
        total.known.update(r.known)
        total.mismatches.extend(r.mismatches)
        for kind, example in r.examples.items():
            total.examples.setdefault(kind, example)
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=10_000, help="hands per ruleset")
    parser.add_argument("--rulesets", default=",".join(RULESETS), help=f"comma-separated, of {', '.join(RULESETS)}")
    parser.add_argument("--jobs", type=int, default=1, help="processes")
    parser.add_argument("--seed", default="openspiel-benchmark")
    parser.add_argument("--show", type=int, default=2, help="full mismatch reports shown per ruleset")
    args = parser.parse_args()
    failed = False
    for ruleset in args.rulesets.split(","):
        if ruleset not in RULESETS:
            parser.error(f"unknown ruleset {ruleset!r}")
        start = time.perf_counter()
        chunks = max(1, args.jobs) * 4
        sizes = [args.hands // chunks + (i < args.hands % chunks) for i in range(chunks)]
        with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            parts = list(pool.map(run_chunk, [ruleset] * chunks, sizes, [f"{args.seed}-{ruleset}-{i}" for i in range(chunks)]))
        report = merge(parts)
        seconds = time.perf_counter() - start
        print(f"{ruleset}: {report.hands} hands, {report.decisions} decisions, {report.knock_checks} knock checks "
              f"in {seconds:.1f} s ({report.hands / seconds:.0f} hands/s)")
        print("  endings: " + ", ".join(f"{k} {v}" for k, v in sorted(report.endings.items())))
        for kind in KNOWN:
            if report.known[kind]:
                print(f"  known difference {kind}: {report.known[kind]}  e.g. {report.examples[kind]}")
        print(f"  mismatches: {len(report.mismatches)}")
        for text in report.mismatches[: args.show]:
            print("\n" + text + "\n")
        failed |= bool(report.mismatches)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""The coach: analysing complete 100-point matches, and hints through the HTTP API.

    python benchmarks/coach.py [--matches 5] [--hints 300]

1. Plays complete matches to 100 between the hard and the medium computer and times
   the analysis of every decision of each (uncached), against two baselines measured
   in the same run on the same matches: replaying (folding) every event, and the
   computers' own thinking for the match's decisions.
2. Starts the app on a scratch database (DATABASE_URL's server, or an embedded one)
   and, in matches of a person against the hard computer, asks ``GET /hint`` before
   every play and plays the hint; prints the hint's p50/p99 against ``GET /matches/{id}``
   (the view) measured alongside.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

from service.api import create_app
from service.application.views import view_for
from service.bots import choose_action
from service.coach.analysis import analyse
from service.engine import State, decide, fold, redact_event
from service.engine.game import AWAITING_DEAL
from service.store import EventStore, connect
from service.store.database import temporary_server
from service.store.migrate import scratch_database

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: the tests' support modules
from tests.support.arena import deal_for  # noqa: E402

OPERATOR = "bench-operator"


def play(seed: str) -> tuple[list[dict], float]:
    """A match to 100, hard (seat 0) against medium: its events, and the seconds the
    computers thought."""
    levels = ("hard", "medium")
    seats = [{"name": f"bot {i}", "kind": "computer", "level": lv, "seed": i + 1} for i, lv in enumerate(levels)]
    new = decide(State(), {"type": "start_match", "rules": {}, "seats": seats})
    events: list[dict] = []
    state = None
    thought = 0.0
    while True:
        for e in new:
            events.append({"seq": len(events) + 1, "type": e.type, "data": e.data})
        state = fold(new, state)
        if state.finished:
            return events, thought
        if state.phase == AWAITING_DEAL:
            new = decide(state, deal_for(seed, state.hand_number + 1))
            continue
        seat = state.turn
        history = [redact_event(x, seat) for x in events[state.hand_start_version :]]
        started = time.perf_counter()
        action = choose_action(view_for(state, seat, uuid.UUID(int=0)), history, levels[seat], random.Random(f"{seat}:{state.version}"))
        thought += time.perf_counter() - started
        new = decide(state, {**action, "seat": seat})


def analysis_runs(matches: int, seed: str) -> None:
    print(f"analysis of complete 100-point matches (hard vs medium), {matches} matches")
    print(f"{'events':>7} {'decisions':>9} {'analysis s':>11} {'replay s':>9} {'bots s':>7} {'x replay':>9} {'x bots':>7}")
    times = []
    for i in range(matches):
        events, thought = play(f"{seed}-{i}")
        started = time.perf_counter()
        fold(events)
        replay_s = time.perf_counter() - started
        started = time.perf_counter()
        hands = analyse(events, str(uuid.uuid4()))
        seconds = time.perf_counter() - started
        times.append(seconds)
        decisions = sum(len(d) for d in hands.values())
        print(f"{len(events):>7} {decisions:>9} {seconds:>11.3f} {replay_s:>9.4f} {thought:>7.3f} {seconds / replay_s:>9.0f} {seconds / thought:>7.2f}")
    print(f"analysis seconds: median {statistics.median(times):.3f}, max {max(times):.3f}")


@contextlib.contextmanager
def scratch_url():
    admin = os.environ.get("DATABASE_URL")
    with contextlib.ExitStack() as stack:
        if not admin:
            admin = stack.enter_context(temporary_server("gin-rummy-bench-")).get_uri()
        yield stack.enter_context(scratch_database(admin, "gin_rummy_coach_bench"))


def pct(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def hint_runs(count: int) -> None:
    with scratch_url() as url:
        pool = connect(url, max_size=4)
        app = create_app({
            "STORE": EventStore(pool), "OPERATOR_TOKEN": OPERATOR, "TESTING": True,
            "RATE_LIMIT_PER_TOKEN": "off", "RATE_LIMIT_PER_ADDRESS": "off",
        })
        client = app.test_client()
        hints: list[float] = []
        views: list[float] = []
        while len(hints) < count:
            created = client.post("/matches", json={"seats": [{"name": "Ann"}, {"kind": "computer", "level": "hard"}]}).json
            mid, headers = created["id"], {"Authorization": f"Bearer {created['seats'][0]['token']}"}
            while len(hints) < count:
                started = time.perf_counter()
                view = client.get(f"/matches/{mid}", headers=headers).json
                views.append(time.perf_counter() - started)
                if view["status"] == "finished":
                    break
                if view["phase"] == "defense":
                    client.post(f"/matches/{mid}/actions", json=view["legal_actions"][0], headers=headers)
                    continue
                started = time.perf_counter()
                r = client.get(f"/matches/{mid}/hint", headers=headers)
                hints.append(time.perf_counter() - started)
                assert r.status_code == 200, r.json
                assert client.post(f"/matches/{mid}/actions", json=r.json["action"], headers=headers).status_code == 200
        app.extensions["gin_rummy"].hub.shutdown()
        pool.close()
    h50, h99, v50, v99 = pct(hints, 50), pct(hints, 99), pct(views, 50), pct(views, 99)
    print(f"hints through HTTP (the Flask test client, one process), {len(hints)} hints, {len(views)} views")
    print(f"GET /hint   p50 {h50 * 1000:6.1f} ms  p99 {h99 * 1000:6.1f} ms  max {max(hints) * 1000:6.1f} ms")
    print(f"GET view    p50 {v50 * 1000:6.1f} ms  p99 {v99 * 1000:6.1f} ms  (baseline)")
    print(f"hint / view: p50 x{h50 / v50:.1f}, p99 x{h99 / v99:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=5)
    parser.add_argument("--hints", type=int, default=300)
    parser.add_argument("--seed", default="coach-2026")
    args = parser.parse_args()
    analysis_runs(args.matches, args.seed)
    if args.hints:
        hint_runs(args.hints)


if __name__ == "__main__":
    main()

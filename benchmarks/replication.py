"""What replication costs the players: the two-people load on one PostgreSQL node, on
three with asynchronous replication and on three with synchronous replication, in one
run; and how far the standbys' replay is behind the primary meanwhile.

    python benchmarks/replication.py [--seconds 20] [--rounds 2] [--clients 16]
                                     [--instances 1] [--workers 2] [--setups a,b,c]

Run it from the repository's root with its virtual environment, as root (Patroni runs
PostgreSQL as the postgres user), where tests/scale/patroni.py can run: patroni, etcd,
PostgreSQL 15 and nginx installed.

Each setup is a fresh deployment of tests/scale/patroni.py, the same but for its nodes:
etcd, Patroni, PostgreSQL 15 with the same settings (fsync and synchronous_commit on),
``--instances`` service instances (default 1) of ``--workers`` gunicorn workers
(default 2) behind nginx, pointed at the nodes by a multi-host URL
(``target_session_attrs=read-write``):

- (a) one node, a lone Patroni-run PostgreSQL without standbys: the baseline;
- (b) three nodes, asynchronous replication (two streaming standbys);
- (c) three nodes, Patroni's synchronous mode (a commit waits for one standby's flush).

All three are started first and run the whole time.  On each, after ``--warmup``
seconds (default 3) of untimed load, ``--clients`` clients (default 16, in
``--client-processes`` processes, default 2) run the two-people load of
``benchmarks/load.py`` through nginx for ``--seconds`` (default 20) in all: each drives
two matches in turn for both seats, GET the view of the seat to play, POST an action
with If-Match and an Idempotency-Key.  The time is split in ``--rounds`` rounds
(default 2) in which the setups take turns, the order rotating, so that a drift of a
shared machine hits all three alike.  The rate limits are off.

Printed per setup: actions (POSTs answered 200) per second, requests per second, the
p50/p99 latency of every request and of the POSTs of an action in ms, the errors (an
answer >= 400 or none), the ratios of actions/s and of the action p99 to (a)'s,
measured in the same run, and the actions/s of each round (their spread is the noise).
The machine's cores are shared by the nodes, the instances and the clients, so a
standby's work is taken from the others (the core count is printed); the idle setups'
Patroni loops and etcd cost each setup's turn alike.

Replica lag, during (b) and (c)'s timed load: for each standby, a thread with a
connection kept open to the primary and one to the standby takes
``pg_current_wal_lsn()`` on the primary every ``--lag-every`` s (default 0.05), then asks
the standby's ``pg_last_wal_replay_lsn()`` every ``--lag-poll`` s (default 0.001) until
it has reached that position: the time from the primary's answer to the standby's, in
ms, p50/p99/max and the samples (its resolution is the poll and a query's round trip).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repository root: the scale tests' deployment, load.py's clients
from benchmarks import load  # noqa: E402
from tests.scale.cluster import nginx_binary  # noqa: E402
from tests.scale.patroni import Replicated, available  # noqa: E402

SETUPS = {
    "a": ("(a) one node", 1, False),
    "b": ("(b) 3 nodes, asynchronous", 3, False),
    "c": ("(c) 3 nodes, synchronous", 3, True),
}
SERVICE_ENV = {"GIN_RUMMY_RATE_LIMIT_PER_TOKEN": "off", "GIN_RUMMY_RATE_LIMIT_PER_ADDRESS": "off"}


class LagSampler(threading.Thread):
    """How long until a standby has replayed the primary's current WAL position, sampled."""

    def __init__(self, primary_url: str, standby_url: str, every: float, poll: float):
        super().__init__(daemon=True)
        self.primary_url, self.standby_url, self.every, self.poll = primary_url, standby_url, every, poll
        self.samples: list[tuple[float, float]] = []  # (time.monotonic() of the primary's answer, lag in ms)
        self.done = threading.Event()
        self.error: str | None = None

    def run(self):
        try:
            with psycopg.connect(self.primary_url, autocommit=True) as primary, \
                    psycopg.connect(self.standby_url, autocommit=True) as standby:
                due = time.monotonic()
                while not self.done.is_set():
                    lsn = primary.execute("SELECT pg_current_wal_lsn()").fetchall()[0][0]
                    at, started = time.monotonic(), time.perf_counter()
                    while not standby.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,)).fetchall()[0][0]:
                        if self.done.is_set():
                            return
                        time.sleep(self.poll)
                    self.samples.append((at, (time.perf_counter() - started) * 1000))
                    due += self.every
                    time.sleep(max(0.0, due - time.monotonic()))
        except psycopg.Error as exc:
            self.error = f"{type(exc).__name__}: {exc}"

    def stop(self) -> None:
        self.done.set()
        self.join(10)


@dataclass
class Lag:
    standby: str
    role: str
    values: list[float]  # ms, sorted
    error: str | None


@dataclass
class Setup:
    """One deployment, started, and what its timed loads gathered."""

    key: str
    title: str
    replicated: Replicated
    folder: Path
    tally: load.Tally = field(default_factory=load.Tally)
    rounds: list[float] = field(default_factory=list)  # actions/s of each round
    standbys: list = field(default_factory=list)  # (name, role) of each standby
    samples: dict = field(default_factory=dict)  # standby name -> lag in ms
    errors: dict = field(default_factory=dict)  # standby name -> a sampler's failure

    @property
    def figure(self) -> load.Figure:
        return load.Figure.of("people", 0, self.tally)

    def lags(self) -> list[Lag]:
        return [Lag(name, role, sorted(self.samples.get(name, [])), self.errors.get(name)) for name, role in self.standbys]


def start(key: str, args, stack: ExitStack) -> Setup:
    title, nodes, synchronous = SETUPS[key]
    folder = Path(tempfile.mkdtemp(prefix="gin-rummy-replication-"))
    stack.callback(shutil.rmtree, folder, ignore_errors=True)
    replicated = Replicated(folder, synchronous=synchronous, nodes=nodes, instances=args.instances,
                            workers=args.workers, env=SERVICE_ENV)
    stack.callback(replicated.stop)
    try:
        replicated.start()
    except BaseException:
        print(f"{title}: the deployment did not start:\n{replicated.logs()}", file=sys.stderr)
        raise
    setup = Setup(key, title, replicated, folder)
    if args.warmup > 0:
        run(setup, args, args.warmup)
    return setup


def run(setup: Setup, args, seconds: float) -> load.Tally:
    assert setup.replicated.nginx is not None
    return load.run_load("people", setup.replicated.nginx.port, args.clients, seconds, args.client_processes, "medium",
                         args.matches_per_client)


def measure(setup: Setup, args, seconds: float) -> None:
    """One timed round of load on ``setup``, the standbys' lag sampled meanwhile."""
    replicated = setup.replicated
    leader = replicated.wait_healthy()
    roles = {m["name"]: m.get("role", "?") for m in replicated.members()}
    standbys = [n for n in replicated.nodes if n is not leader]
    setup.standbys = [(n.name, roles.get(n.name, "?")) for n in standbys]
    samplers = [LagSampler(leader.admin_url, n.admin_url, args.lag_every, args.lag_poll) for n in standbys]
    for sampler in samplers:
        sampler.start()
    try:
        tally = run(setup, args, seconds)
        ended = time.monotonic()
    finally:
        for sampler in samplers:
            sampler.stop()
    total = setup.tally.seconds + tally.seconds
    setup.tally.add(tally)
    setup.tally.seconds = total
    setup.rounds.append(tally.actions / (tally.seconds or 1.0))
    # Only the samples taken while the clients played (not while they got ready).
    window = ended - tally.seconds
    for node, sampler in zip(standbys, samplers):
        setup.samples.setdefault(node.name, []).extend(ms for at, ms in sampler.samples if window <= at <= ended)
        if sampler.error:
            setup.errors[node.name] = sampler.error


HEADER = (
    f"{'setup':<28}{'actions/s':>10}{'requests/s':>11}{'p50 ms':>8}{'p99 ms':>8}{'action p50':>11}{'action p99':>11}"
    f"{'errors':>8}{'actions/s vs (a)':>17}{'action p99 vs (a)':>18}  actions/s by round"
)


def action_latency(f: load.Figure) -> tuple[float, float]:
    _, p50, p99 = f.by_request.get("POST action", (0, float("nan"), float("nan")))
    return p50, p99


def row(r: Setup, base: Setup | None) -> str:
    f = r.figure
    p50, p99 = action_latency(f)
    if base is None or r is base:
        ratios = ("-", "-")
    else:
        _, base_p99 = action_latency(base.figure)
        ratios = (f"{f.actions_per_s / base.figure.actions_per_s:.2f}x" if base.figure.actions_per_s else "-",
                  f"{p99 / base_p99:.2f}x" if base_p99 else "-")
    errors = f"{f.error_count}" + (f" {f.errors}" if f.errors else "")
    rounds = " ".join(f"{rate:.0f}" for rate in r.rounds)
    return (
        f"{r.title:<28}{f.actions_per_s:>10,.0f}{f.requests_per_s:>11,.0f}{f.p50:>8.1f}{f.p99:>8.1f}{p50:>11.1f}{p99:>11.1f}"
        f"{errors:>8}{ratios[0]:>17}{ratios[1]:>18}  {rounds}"
    )


def print_lags(results: list[Setup], args) -> None:
    print(
        f"\nreplica lag under load: ms from pg_current_wal_lsn() on the primary until the standby's"
        f" pg_last_wal_replay_lsn() reached it (sampled every {args.lag_every * 1000:g} ms, polled every"
        f" {args.lag_poll * 1000:g} ms)"
    )
    print(f"{'setup':<28}{'standby':<9}{'role':<14}{'samples':>8}{'p50 ms':>8}{'p99 ms':>8}{'max ms':>8}")
    for r in results:
        for lag in r.lags():
            values = lag.values
            figures = (
                f"{load.percentile(values, 0.5):>8.1f}{load.percentile(values, 0.99):>8.1f}{values[-1]:>8.1f}"
                if values else f"{'-':>8}{'-':>8}{'-':>8}"
            )
            print(f"{r.title:<28}{lag.standby:<9}{lag.role:<14}{len(values):>8}{figures}"
                  + (f"  (sampler failed: {lag.error})" if lag.error else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="timed load per setup (default 20)")
    parser.add_argument("--warmup", type=float, default=3.0, help="untimed load before it (default 3)")
    parser.add_argument("--rounds", type=int, default=2, help="each setup's time split in rounds taking turns (default 2)")
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients (default 16)")
    parser.add_argument("--instances", type=int, default=1, help="service instances behind nginx (default 1)")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers per instance (default 2)")
    parser.add_argument("--client-processes", type=int, default=2, help="processes the clients run in (default 2)")
    parser.add_argument("--matches-per-client", type=int, default=2, help="matches each client drives in turn (default 2)")
    parser.add_argument("--setups", default="a,b,c", help="which of (a) (b) (c) to run, (a) first if any (default a,b,c)")
    parser.add_argument("--lag-every", type=float, default=0.05, help="seconds between lag samples (default 0.05)")
    parser.add_argument("--lag-poll", type=float, default=0.001, help="seconds between a sample's polls (default 0.001)")
    args = parser.parse_args(argv)
    keys = [k for k in args.setups.split(",") if k]
    if set(keys) - set(SETUPS):
        parser.error(f"unknown setups: {', '.join(sorted(set(keys) - set(SETUPS)))}")
    keys = sorted(set(keys))
    missing = available() or (None if nginx_binary() else "nginx is not installed")
    if missing:
        parser.error(missing)
    # `timeout` and the like: stop the deployment on the way out (its processes are in sessions of their own).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    print(
        f"two-people load, {args.clients} clients in {args.client_processes} processes through nginx,"
        f" {args.instances} instance(s) x {args.workers} workers; {args.seconds:g} s per setup in {args.rounds} rounds"
        f" taking turns, after {args.warmup:g} s of warm-up; PostgreSQL 15 under Patroni; cores: {os.cpu_count()}",
        flush=True,
    )
    with ExitStack() as stack:
        setups = [start(key, args, stack) for key in keys]
        for number in range(args.rounds):
            turn = number % len(setups)
            for setup in setups[turn:] + setups[:turn]:
                measure(setup, args, args.seconds / args.rounds)
    print(HEADER)
    base = setups[0] if setups[0].key == "a" else None
    for setup in setups:
        print(row(setup, base))
    print_lags([s for s in setups if s.standbys], args)
    return 0

if __name__ == "__main__":
    sys.exit(main())

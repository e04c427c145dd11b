"""HTTP load on loopback: the service under gunicorn beside a bare INSERT-per-request app.

    python benchmarks/load.py [--seconds 6] [--clients 1,4,16] [--workers N] [--threads 8]
                              [--database-url URL] [--level medium] [--rate-limits]

Three kinds of load, each at every client count (1, 4 and 16 concurrent clients):

- two people: each client drives its own matches (``--matches-per-client``, default 2,
  taken in turn) for both seats: GET the view of the seat to play, POST one of its
  ``legal_actions`` with If-Match and an Idempotency-Key, and so on until the match
  ends (then it creates another) or the time is up;
- against the computer: the same with one human seat; the computer answers within the
  same request;
- baseline: a bare Flask app (``benchmarks/load_baseline.py``) whose one endpoint does
  one INSERT per request, under the same gunicorn settings (``service.gunicorn_conf``)
  and the same worker and thread counts (by default those of ``gin-rummy serve``: 2
  workers of 8 threads), measured in the same run.

Each figure: actions per second (successful POSTs of an action; the baseline has none),
requests per second (everything sent, creations included), p50/p95/p99 latency of a
request in ms, errors (any answer >= 400, no answer, or one the client could not use),
and the CPU each request cost, in microseconds, on three sides (below), each also as a
ratio to the baseline's in the same run; and the action's p99 (POST of an action) as a
ratio to the baseline's p99 (its one request, the INSERT) in the same run.  Both servers
run the whole time; the loads take turns (``--rounds`` rounds, the order rotating), so
slow drifts of a shared machine hit all.

Throughput and latency swing with whatever else the machine runs; CPU per request much
less (it is the time the processes ran, not the time they waited for a CPU).  It is
read before and after each measured window (from the clients' "go" until every client
has reported) and divided by the requests of the window, every request counted once (the
two-people client's GET of the view and POST of the action are two):

- workers: the gunicorn workers of the server under load (every process descended from
  the master, the master itself apart: it serves no request);
- postgres: the PostgreSQL backends serving that server: each server connects with its
  own ``application_name`` (``gin-rummy-load-service`` / ``-baseline``, in the URL's
  query), and its backends are those of ``pg_stat_activity`` in the scratch database
  with that name.  The list (and every process's CPU) is read again every
  ``POLL_SECONDS`` during the window, so a backend born in the window (the pool
  growing) counts from its start, its connection's setup included, and one that ends in
  the window counts up to its last reading.  The server's shared processes (WAL
  writer, checkpointer, autovacuum) are not counted.  Only where the database server
  runs on this machine (else ``n/a``);
- clients: the client processes' own CPU (``time.process_time``, every thread).

A process's CPU is its kernel CPU clock (``clock_gettime`` of the process's
CPUCLOCK_SCHED clock id): nanoseconds on a CPU of all its threads, those that ended
included, which is the first field of ``/proc/<pid>/task/*/schedstat`` summed over the
threads, plus the threads gone.  Where that clock cannot be read, utime + stime of
``/proc/<pid>/stat`` (whole clock ticks, ``SC_CLK_TCK``: 10 ms at 100 Hz).

Targets, at every client count unless said: the two-people load answers at least 75% of
the baseline's requests per second, with no error; at 16 clients (the largest count
run), its workers' CPU per request at most 1.25x the baseline's, its PostgreSQL CPU per
request at most 1.5x, and the action's p99 at most 1.25x the baseline's p99.  Against
the computer (medium), at least 60% of the baseline's requests per second, and at 16
clients the workers' CPU per request at most 1.5x the baseline's.

Clients are threads with keep-alive ``http.client`` connections, in processes of their
own (``--client-processes``, default 2) apart from the servers.  The database is a
scratch one made (and dropped) on the server of ``--database-url`` / ``DATABASE_URL``,
else on postgresql://postgres@127.0.0.1:5432/test when it answers, else on an embedded
server in a temporary directory.  The rate limits are turned off unless ``--rate-limits``
(every client shares one address, which the per-address limit would count as one).
"""

from __future__ import annotations

import argparse
import glob
import http.client
import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
LOCAL_SERVER = "postgresql://postgres@127.0.0.1:5432/test"
KINDS = ("baseline", "people", "computer")
TITLES = {"baseline": "baseline INSERT", "people": "two people", "computer": "vs computer"}
TARGET_SHARE = 0.75
#: At the largest client count (16 by default), each a ratio to the baseline's in the same run.
TARGET_WORKER_CPU = 1.25
TARGET_POSTGRES_CPU = 1.5
TARGET_P99_RATIO = 1.25
#: Against the computer (its decisions are part of each action).
TARGET_COMPUTER_SHARE = 0.60
TARGET_COMPUTER_WORKER_CPU = 1.5
#: Each server's application_name (its PostgreSQL backends are found by it).
APPLICATION_NAMES = {"service": "gin-rummy-load-service", "baseline": "gin-rummy-load-baseline"}
#: How often the processes measured are listed and read again during a window.
POLL_SECONDS = 0.25
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}

# `gin-rummy serve`'s default (2 workers of 8 threads).
DEFAULT_WORKERS = 2


# --- clients (in their own processes) ------------------------------------------------


@dataclass
class Tally:
    actions: int = 0
    requests: int = 0
    errors: dict = field(default_factory=dict)  # status (0: no answer) -> count
    latencies: list = field(default_factory=list)  # ms, one per request
    by_request: dict = field(default_factory=dict)  # "GET view" ... -> its latencies
    seconds: float = 0.0
    cpu: float = 0.0  # CPU-seconds of the client processes over the window

    def add(self, other: Tally) -> None:
        self.actions += other.actions
        self.requests += other.requests
        self.cpu += other.cpu
        for status, n in other.errors.items():
            self.errors[status] = self.errors.get(status, 0) + n
        self.latencies.extend(other.latencies)
        for name, values in other.by_request.items():
            self.by_request.setdefault(name, []).extend(values)


class Client:
    """One keep-alive connection; every request timed and tallied."""

    def __init__(self, port: int, tally: Tally):
        self.port, self.tally = port, tally
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def send(self, name: str, method: str, path: str, body: dict | None = None, headers: dict | None = None):
        """(status, JSON body or None); one retry on a connection the server closed.
        ``name`` is what the request does ("GET view"), for the latencies by request."""
        data = None if body is None else json.dumps(body).encode()
        for attempt in (1, 2):
            started = time.perf_counter()
            try:
                self.conn.request(method, path, body=data, headers={**JSON_HEADERS, **(headers or {})})
                response = self.conn.getresponse()
                raw = response.read()
            except (OSError, http.client.HTTPException):
                self.conn.close()
                if attempt == 1:
                    continue  # an idle keep-alive connection closed by the server: safe to resend
                self._count(name, 0, started)
                return 0, None
            self._count(name, response.status, started)
            try:
                return response.status, json.loads(raw) if raw else None
            except ValueError:
                return response.status, None
        raise AssertionError("unreachable")

    def _count(self, name: str, status: int, started: float) -> None:
        ms = (time.perf_counter() - started) * 1000
        self.tally.latencies.append(ms)
        self.tally.by_request.setdefault(name, []).append(ms)
        self.tally.requests += 1
        if status == 0 or status >= 400:
            self.tally.errors[status] = self.tally.errors.get(status, 0) + 1


#: Actions that end a match instead of playing the cards (listed whoever's turn it is).
ENDINGS = ("resign", "claim_timeout", "abort")


def plays(view: dict) -> list[dict]:
    return [a for a in view["legal_actions"] if a["type"] not in ENDINGS]


def greedy(view: dict) -> dict:
    """Knock or gin when allowed, else the discard that leaves the least deadwood, else draw from the stock."""
    actions = plays(view)
    for action in actions:
        if action["type"] in ("gin", "knock"):
            return action
    discards = [a for a in actions if a["type"] == "discard"]
    if discards:
        return min(discards, key=lambda a: view["discard_deadwood"][a["card"]])
    return next((a for a in actions if a.get("source") == "stock"), actions[0])


class Player:
    """Drives matches through the API, one step (GET the view, POST an action) at a time."""

    def __init__(self, client: Client, kind: str, level: str, matches: int):
        self.client, self.kind, self.level = client, kind, level
        self.matches = [self.new_match() for _ in range(matches)]
        self.turn = 0

    def new_match(self) -> dict | None:
        seats = [{"name": "Ann"}, {"name": "Bob"}] if self.kind == "people" else [
            {"name": "Ann"}, {"kind": "computer", "level": self.level}
        ]
        status, body = self.client.send("POST create", "POST", "/matches", {"seats": seats})
        if status != 201:
            return None
        tokens = {s["seat"]: s["token"] for s in body["seats"] if s["token"]}
        return {"id": body["id"], "tokens": tokens, "seat": min(tokens)}

    def step(self) -> None:
        self.turn = (self.turn + 1) % len(self.matches)
        match = self.matches[self.turn]
        if match is None:
            self.matches[self.turn] = self.new_match()
            return
        auth = {"Authorization": f"Bearer {match['tokens'][match['seat']]}"}
        status, view = self.client.send("GET view", "GET", f"/matches/{match['id']}", headers=auth)
        if status != 200:
            self.matches[self.turn] = None  # start afresh next time
            return
        if view["status"] == "finished":
            self.matches[self.turn] = self.new_match()
            return
        if not plays(view):
            if len(match["tokens"]) > 1:
                match["seat"] = 1 - match["seat"]
            return
        headers = {**auth, "If-Match": f'"{view["version"]}"', "Idempotency-Key": uuid.uuid4().hex}
        status, result = self.client.send(
            "POST action", "POST", f"/matches/{match['id']}/actions", greedy(view), headers
        )
        if status != 200:
            self.matches[self.turn] = None
            return
        self.client.tally.actions += 1
        turn = result["view"]["turn"]
        if turn in match["tokens"]:
            match["seat"] = turn


def client_thread(kind: str, port: int, level: str, matches: int, tally: Tally, ready, go, stop) -> None:
    client = Client(port, tally)
    player, failed = None, None
    try:
        if kind != "baseline":
            player = Player(client, kind, level, matches)
    except Exception as exc:  # counted below, as an error of the run
        failed = type(exc).__name__
    finally:
        ready.release()
    go.wait()
    # What setting up cost is not part of the figures.
    tally.actions = tally.requests = 0
    tally.errors.clear()
    tally.latencies.clear()
    tally.by_request.clear()
    if failed:
        tally.errors[f"client {failed}"] = 1
        return
    started = time.perf_counter()
    try:
        while not stop.is_set():
            try:
                if player is None:
                    client.send("POST insert", "POST", "/hits", {"hello": "world"})
                else:
                    player.step()
            except Exception as exc:  # an answer the client did not expect: an error, and a fresh match
                name = f"client {type(exc).__name__}"
                tally.errors[name] = tally.errors.get(name, 0) + 1
                if player is not None:
                    player.matches[player.turn] = None
    finally:
        tally.seconds = time.perf_counter() - started
        client.conn.close()


def client_process(kind: str, port: int, threads: int, seconds: float, level: str, matches: int, conn) -> None:
    """``threads`` clients for ``seconds`` once the parent says go; sends back one Tally."""
    ready, go, stop = threading.Semaphore(0), threading.Event(), threading.Event()
    tallies = [Tally() for _ in range(threads)]
    workers = [
        threading.Thread(target=client_thread, args=(kind, port, level, matches, t, ready, go, stop), daemon=True)
        for t in tallies
    ]
    for w in workers:
        w.start()
    for _ in workers:
        ready.acquire()
    conn.send("ready")
    conn.recv()  # go
    cpu = time.process_time()  # every thread's, those that end included
    go.set()
    time.sleep(seconds)
    stop.set()
    for w in workers:
        w.join()
    total = Tally(seconds=max(t.seconds for t in tallies), cpu=time.process_time() - cpu)
    for t in tallies:
        total.add(t)
    conn.send(total)
    conn.close()


def run_load(
    kind: str, port: int, clients: int, seconds: float, processes: int, level: str, matches: int, window=None,
) -> Tally:
    """``clients`` clients spread over ``processes`` processes, started together;
    ``window`` (a context manager) spans the measured time, from "go" until every
    client has reported."""
    context = multiprocessing.get_context("spawn")
    shares = [clients // processes + (1 if i < clients % processes else 0) for i in range(min(processes, clients))]
    pipes, procs = [], []
    for share in shares:
        parent, child = context.Pipe()
        proc = context.Process(target=client_process, args=(kind, port, share, seconds, level, matches, child))
        proc.start()
        child.close()  # the parent keeps only its end: a client process that dies is then seen as EOF
        pipes.append(parent)
        procs.append(proc)
    for pipe in pipes:
        if not pipe.poll(120):
            raise RuntimeError("the clients did not get ready")
        pipe.recv()
    total = Tally()
    with window or ExitStack():
        for pipe in pipes:
            pipe.send("go")
        for pipe in pipes:
            if not pipe.poll(seconds + 120):
                raise RuntimeError("the clients did not finish")
            part = pipe.recv()
            total.add(part)
            total.seconds = max(total.seconds, part.seconds)
    for proc in procs:
        proc.join()
    return total


# --- servers ---------------------------------------------------------------------------


def free_ports(count: int) -> list[int]:
    """``count`` different free ports: all held open until all are chosen (one at a
    time, the system may hand out the same port twice)."""
    with ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]


@contextmanager
def gunicorn(app: str, port: int, workers: int, threads: int, env: dict, log: Path):
    """``app`` served by gunicorn with the service's settings, until the block ends."""
    env = {
        **os.environ,
        **env,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "GIN_RUMMY_BIND": f"127.0.0.1:{port}",
        "GIN_RUMMY_WORKERS": str(workers),
        "GIN_RUMMY_THREADS": str(threads),
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)  # each server makes its own
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--config", "python:service.gunicorn_conf", app],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    try:
        wait_until_up(port, proc, log)
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_until_up(port: int, proc: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"gunicorn exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/health/live")
            conn.getresponse().read()
            conn.close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"gunicorn did not answer on port {port}:\n{log.read_text()[-3000:]}")


@contextmanager
def scratch_database(url: str | None):
    """A fresh, migrated database (with the baseline's table) on a server; dropped at the end."""
    from service.store.database import temporary_server
    from service.store.migrate import scratch_database as migrated

    with ExitStack() as stack:
        admin = url or os.environ.get("DATABASE_URL") or (LOCAL_SERVER if _answers(LOCAL_SERVER) else None)
        if admin is None:
            admin = stack.enter_context(temporary_server("gin-rummy-load-")).get_uri()
        scratch = stack.enter_context(migrated(admin, "gin_rummy_load"))
        import psycopg

        sys.path.insert(0, str(ROOT / "benchmarks"))
        from load_baseline import TABLE

        with psycopg.connect(scratch, autocommit=True) as conn:
            conn.execute(TABLE)
        yield scratch


def _answers(url: str) -> bool:
    import psycopg

    try:
        psycopg.connect(url, connect_timeout=2).close()
        return True
    except psycopg.Error:
        return False


# --- CPU of the processes measured ------------------------------------------------------

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_ns(pid: int) -> int:
    """Nanoseconds process ``pid`` has run on a CPU, all its threads (those that ended
    included); OSError when it is gone (or not to be seen from here)."""
    try:
        # The process's CPUCLOCK_SCHED clock (MAKE_PROCESS_CPUCLOCK(pid, 2) of the
        # kernel's posix-timers.h): its threads' sum_exec_runtime, the first field of
        # /proc/<pid>/task/*/schedstat, the threads gone included.
        return time.clock_gettime_ns((~pid << 3) | 2)
    except OSError:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1_000_000_000 // CLOCK_TICKS  # utime + stime, in ticks


def cpu_source() -> str:
    try:
        time.clock_gettime_ns((~os.getpid() << 3) | 2)
        return "process CPU clocks (ns)"
    except OSError:
        return f"/proc/<pid>/stat utime+stime ({1000 / CLOCK_TICKS:g} ms ticks)"


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (not ``pid`` itself)."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        children = []
        for path in glob.glob(f"/proc/{parent}/task/*/children"):
            try:
                children += [int(c) for c in Path(path).read_text().split()]
            except OSError:
                pass  # the thread ended
        found += children
        todo += children
    return found


class Backends:
    """The pids of the PostgreSQL backends of one application_name in one database,
    from a connection of the benchmark's own (named apart, so never counted)."""

    def __init__(self, url: str):
        import psycopg

        self.database = urlsplit(url).path.lstrip("/")
        self.conn = psycopg.connect(with_application_name(url, "gin-rummy-load-meter"), autocommit=True)
        self.lock = threading.Lock()
        # The database server runs on this machine: this connection's own backend is seen here.
        self.local = _is_postgres(self.conn.info.backend_pid)

    def of(self, application_name: str) -> list[int]:
        if not self.local:
            return []
        with self.lock:
            rows = self.conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s AND application_name = %s AND backend_type = 'client backend'",
                (self.database, application_name),
            ).fetchall()
        return [pid for (pid,) in rows if _is_postgres(pid)]

    def close(self) -> None:
        self.conn.close()


def _is_postgres(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip().startswith("postgres")
    except OSError:
        return False


class Meter:
    """The CPU-nanoseconds of groups of processes over a window (a context manager):
    ``groups`` names, for each, a function listing its processes now.  Every
    ``POLL_SECONDS`` the lists and each process's CPU are read again, so a process that
    appears during the window counts from zero (it started in the window) and one that
    ends counts up to its last reading.  ``ns[name]`` once the window has ended."""

    def __init__(self, groups: dict):
        self.groups = groups
        self.first: dict[str, dict[int, int]] = {name: {} for name in groups}
        self.last: dict[str, dict[int, int]] = {name: {} for name in groups}
        self.ns: dict[str, int] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, daemon=True)

    def _read(self, start: bool = False) -> None:
        for name, listing in self.groups.items():
            try:
                pids = listing()
            except Exception:  # a listing that failed this once (the next one counts)
                continue
            for pid in pids:
                try:
                    ns = cpu_ns(pid)
                except OSError:
                    continue  # gone already: its last reading stands
                self.first[name].setdefault(pid, ns if start else 0)
                self.last[name][pid] = ns

    def _poll(self) -> None:
        while not self.stop.wait(POLL_SECONDS):
            self._read()

    def __enter__(self) -> Meter:
        self._read(start=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()
        self._read()
        self.ns = {
            name: sum(ns - self.first[name][pid] for pid, ns in self.last[name].items())
            for name in self.groups
        }


def with_application_name(url: str, name: str) -> str:
    """``url`` with ``application_name=name`` in its query."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "application_name"] + [("application_name", name)]
    return urlunsplit(parts._replace(query=urlencode(query)))


# --- figures ---------------------------------------------------------------------------

#: The three sides whose CPU per request is figured.
SIDES = ("workers", "postgres", "clients")


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


@dataclass
class Figure:
    kind: str
    clients: int
    actions_per_s: float
    requests_per_s: float
    p50: float
    p95: float
    p99: float
    errors: dict
    by_request: dict  # name -> (count, p50, p99)
    cpu_us: dict  # side (SIDES) -> CPU-microseconds per request, None where not measured

    @classmethod
    def of(cls, kind: str, clients: int, tally: Tally, cpu_ns: dict) -> Figure:
        values = sorted(tally.latencies)
        seconds = tally.seconds or 1.0
        requests = tally.requests or 1
        return cls(
            kind, clients, tally.actions / seconds, tally.requests / seconds,
            percentile(values, 0.50), percentile(values, 0.95), percentile(values, 0.99), dict(tally.errors),
            {
                name: (len(v), percentile(sorted(v), 0.50), percentile(sorted(v), 0.99))
                for name, v in sorted(tally.by_request.items())
            },
            {side: None if ns is None else ns / 1000 / requests for side, ns in cpu_ns.items()},
        )

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    @property
    def action_p99(self) -> float | None:
        """The p99 of the action's POST (the baseline: of its INSERT, its one request)."""
        name = "POST insert" if self.kind == "baseline" else "POST action"
        return self.by_request[name][2] if name in self.by_request else None


def cpu_ratio(f: Figure, base: Figure | None, side: str) -> float | None:
    if f.kind == "baseline" or base is None or f.cpu_us.get(side) is None or not base.cpu_us.get(side):
        return None
    return f.cpu_us[side] / base.cpu_us[side]


def p99_ratio(f: Figure, base: Figure | None) -> float | None:
    if f.kind == "baseline" or base is None or f.action_p99 is None or not base.action_p99:
        return None
    return f.action_p99 / base.action_p99


def measure(args, ports: dict[str, int], masters: dict[str, int], backends: Backends) -> dict[tuple[str, int], Figure]:
    figures = {}
    for clients in args.clients:
        tallies = {kind: Tally() for kind in args.kinds}
        used = {kind: dict.fromkeys(("workers", "postgres"), 0) for kind in args.kinds}
        for round_ in range(args.rounds):
            order = args.kinds[round_ % len(args.kinds):] + args.kinds[: round_ % len(args.kinds)]
            for kind in order:
                server = "baseline" if kind == "baseline" else "service"
                meter = Meter({
                    "workers": lambda master=masters[server]: descendants(master),
                    "postgres": lambda name=APPLICATION_NAMES[server]: backends.of(name),
                })
                part = run_load(
                    kind, ports[server], clients, args.seconds / args.rounds, args.client_processes, args.level,
                    args.matches_per_client, meter,
                )
                for side in used[kind]:
                    used[kind][side] += meter.ns[side]
                seconds = tallies[kind].seconds + part.seconds
                tallies[kind].add(part)
                tallies[kind].seconds = seconds
        for kind in args.kinds:
            cpu = {
                "workers": used[kind]["workers"],
                "postgres": used[kind]["postgres"] if backends.local else None,
                "clients": tallies[kind].cpu * 1e9,
            }
            figures[kind, clients] = Figure.of(kind, clients, tallies[kind], cpu)
        for kind in args.kinds:  # once all are known: the ratios to the baseline whatever the order
            print(row(figures[kind, clients], figures.get(("baseline", clients))), flush=True)
    return figures


HEADER = (
    f"{'':<83}{'CPU us per request':^24}{'x baseline':^30}\n"
    f"{'load':<16}{'clients':>7}{'actions/s':>11}{'requests/s':>12}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}"
    f"{'errors':>8}{'':<2}{'workers':>8}{'pg':>8}{'clients':>8}{'workers':>8}{'pg':>6}{'clients':>8}{'act p99':>8}"
    f"{'rps / baseline':>16}"
)


def _us(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def row(f: Figure, base: Figure | None) -> str:
    actions = "-" if f.kind == "baseline" else f"{f.actions_per_s:,.0f}"
    share = "-" if f.kind == "baseline" or base is None or not base.requests_per_s else f"{f.requests_per_s / base.requests_per_s:.0%}"
    errors = f"{f.error_count}" + (f" {f.errors}" if f.errors else "")
    return (
        f"{TITLES[f.kind]:<16}{f.clients:>7}{actions:>11}{f.requests_per_s:>12,.0f}{f.p50:>9.1f}{f.p95:>9.1f}"
        f"{f.p99:>9.1f}{errors:>8}{'':<2}"
        + "".join(f"{_us(f.cpu_us[side]):>8}" for side in SIDES)
        + f"{_times(cpu_ratio(f, base, 'workers')):>8}{_times(cpu_ratio(f, base, 'postgres')):>6}"
        + f"{_times(cpu_ratio(f, base, 'clients')):>8}{_times(p99_ratio(f, base)):>8}{share:>16}"
    )


def breakdown(figures: dict[tuple[str, int], Figure]) -> None:
    print("\nlatency by request (ms): p50 / p99, and the count")
    for (kind, clients), f in figures.items():
        parts = "   ".join(f"{name} {p50:.1f} / {p99:.1f} ({n:,})" for name, (n, p50, p99) in f.by_request.items())
        print(f"  {TITLES[kind]:<16}{clients:>3} clients   {parts}")


def _ratio_target(figures, kind: str, top: int, what: str, target: float, value) -> bool | None:
    """Print one "at most ``target``x the baseline's" target at ``top`` clients; None when not measured."""
    f, base = figures.get((kind, top)), figures.get(("baseline", top))
    ratio = value(f, base) if f is not None else None
    if ratio is None:
        print(f"  {what} at most {target:g}x the baseline's at {top} clients: not measured")
        return None
    ok = ratio <= target
    print(f"  {what} at most {target:g}x the baseline's at {top} clients: {'met' if ok else 'NOT met'} ({ratio:.2f}x)")
    return ok


def verdict(figures: dict[tuple[str, int], Figure], clients: list[int], level: str = "medium") -> bool:
    """Print whether the targets are met; True when all that could be measured are."""
    met = True
    if ("people", clients[0]) not in figures:
        return met
    top = max(clients)
    print("\ntargets (two people):")
    if ("baseline", clients[0]) in figures:
        shares = {n: figures["people", n].requests_per_s / figures["baseline", n].requests_per_s for n in clients}
        ok = all(share >= TARGET_SHARE for share in shares.values())
        met &= ok
        listed = ", ".join(f"{share:.0%} at {n}" for n, share in shares.items())
        print(f"  at least {TARGET_SHARE:.0%} of the baseline's requests/s: {'met' if ok else 'NOT met'} ({listed})")
        for what, target, value in (
            ("workers' CPU per request", TARGET_WORKER_CPU, lambda f, b: cpu_ratio(f, b, "workers")),
            ("PostgreSQL's CPU per request", TARGET_POSTGRES_CPU, lambda f, b: cpu_ratio(f, b, "postgres")),
            ("the action's p99", TARGET_P99_RATIO, p99_ratio),
        ):
            met &= _ratio_target(figures, "people", top, what, target, value) is not False
    errors = sum(f.error_count for f in figures.values())
    ok = errors == 0
    met &= ok
    print(f"  no errors (every load): {'met' if ok else 'NOT met'} ({errors})")
    if ("computer", clients[0]) in figures and ("baseline", clients[0]) in figures:
        shares = {n: figures["computer", n].requests_per_s / figures["baseline", n].requests_per_s for n in clients}
        ok = all(share >= TARGET_COMPUTER_SHARE for share in shares.values())
        met &= ok
        listed = ", ".join(f"{share:.0%} at {n}" for n, share in shares.items())
        print(f"  against the computer, at least {TARGET_COMPUTER_SHARE:.0%} of the baseline: {'met' if ok else 'NOT met'} ({listed})")
        what = f"against the computer ({level}{'' if level == 'medium' else '; the target is for medium'}), workers' CPU per request"
        met &= _ratio_target(
            figures, "computer", top, what, TARGET_COMPUTER_WORKER_CPU, lambda f, b: cpu_ratio(f, b, "workers"),
        ) is not False
    return met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=6.0, help="per load and client count (default 6)")
    parser.add_argument("--clients", default="1,4,16", help="client counts (default 1,4,16)")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"loads to run (default {','.join(KINDS)})")
    parser.add_argument("--rounds", type=int, default=2, help="each load's time split in rounds taking turns (default 2)")
    parser.add_argument(
        "--workers", type=int, default=DEFAULT_WORKERS,
        help=f"gunicorn worker processes of each server (default {DEFAULT_WORKERS}, as gin-rummy serve)",
    )
    parser.add_argument("--threads", type=int, default=8, help="threads per worker (default 8)")
    parser.add_argument("--client-processes", type=int, default=2, help="processes the clients run in (default 2)")
    parser.add_argument("--matches-per-client", type=int, default=2, help="matches each client drives in turn (default 2)")
    parser.add_argument("--level", default="medium", choices=["easy", "medium", "hard"], help="the computer (default medium)")
    parser.add_argument("--database-url", help="server to make the scratch database on (default: DATABASE_URL, ...)")
    parser.add_argument("--rate-limits", action="store_true", help="keep the service's rate limits (default: off)")
    args = parser.parse_args(argv)
    args.clients = [int(n) for n in args.clients.split(",")]
    args.kinds = [k for k in args.kinds.split(",") if k]
    unknown = set(args.kinds) - set(KINDS)
    if unknown:
        parser.error(f"unknown loads: {', '.join(sorted(unknown))}")

    limits = {} if args.rate_limits else {"GIN_RUMMY_RATE_LIMIT_PER_TOKEN": "off", "GIN_RUMMY_RATE_LIMIT_PER_ADDRESS": "off"}
    with ExitStack() as stack:
        url = stack.enter_context(scratch_database(args.database_url))
        logs = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gin-rummy-load-")))
        backends = Backends(url)
        stack.callback(backends.close)
        ports = dict(zip(("service", "baseline"), free_ports(2), strict=True))
        masters = {}
        servers = {"service": "service.wsgi:app", "baseline": "benchmarks.load_baseline:app"}
        for server, app in servers.items():
            if server == "service" and not set(args.kinds) & {"people", "computer"} or server == "baseline" and "baseline" not in args.kinds:
                continue
            env = {"DATABASE_URL": with_application_name(url, APPLICATION_NAMES[server]), **limits}
            proc = stack.enter_context(gunicorn(app, ports[server], args.workers, args.threads, env, logs / f"{server}.log"))
            masters[server] = proc.pid
        print(
            f"gunicorn gevent, {args.workers} workers per server; {args.seconds:g} s per load "
            f"and client count in {args.rounds} rounds; clients in {args.client_processes} processes; "
            f"rate limits {'on' if args.rate_limits else 'off'}; computer: {args.level}; cores: {os.cpu_count()}"
        )
        print(
            f"CPU per request: {cpu_source()}; workers: the gunicorn workers (the master apart); pg: their PostgreSQL "
            f"backends{'' if backends.local else ' (n/a: the database server is not on this machine)'}; "
            "clients: the client processes"
        )
        print(HEADER, flush=True)
        figures = measure(args, ports, masters, backends)
        breakdown(figures)
        met = verdict(figures, args.clients, args.level)
    if not met:
        print("\nsome targets not met")
    elif "baseline" in args.kinds:
        print("\nall targets met")
    else:  # the ratios and shares are to the baseline's figures
        print("\nall targets measured met (without the baseline, only the errors are)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

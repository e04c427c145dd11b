"""The heavy computations (an import's check, an analysis) run in a child process of a
gevent worker, so that its event loop keeps the whole interpreter meanwhile."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from service.cooperative import off_process_timed
from service.records.records import RecordError, checked_record

ROOT = Path(__file__).resolve().parents[2]


def spin(seconds: float) -> int:
    """``seconds`` of CPU, then the process id it ran in."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return os.getpid()

PROGRAM = """
from gevent import monkey; monkey.patch_all()
import os, time
import gevent
from service.cooperative import off_process_timed
from service.records.records import RecordError, checked_record
from tests.application.test_off_process import spin

# Computed elsewhere: another process, its CPU measured there.
pid, cpu = off_process_timed(spin, 0.3)
print("pid", pid != os.getpid(), round(cpu, 1))

# Meanwhile the loop answers at once: a greenlet ticking every 10 ms keeps its pace.
ticks = []
def tick():
    for _ in range(20):
        started = time.perf_counter(); gevent.sleep(0.01); ticks.append(time.perf_counter() - started)
ticker = gevent.spawn(tick)
off_process_timed(spin, 0.4)
ticker.join()
print("worst tick ms", round(max(ticks) * 1000))

# A refusal comes back as the refusal it was, its fields kept.
try:
    off_process_timed(checked_record, {"format": "something else"})
except RecordError as exc:
    print("refused", exc.code, exc.index)

# Two calls at once take two children; both are answered.
jobs = [gevent.spawn(off_process_timed, spin, 0.1) for _ in range(2)]
gevent.joinall(jobs)
print("both", all(j.value[0] != os.getpid() for j in jobs))
"""


def test_under_gevent_a_heavy_computation_runs_in_a_child_process_and_the_loop_keeps_answering():
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "pid True 0.3", lines
    worst = int(lines[1].split()[-1])
    assert worst < 200, lines  # a tick of 10 ms, not held up by the 400 ms computation
    assert lines[2] == "refused unsupported_format None", lines
    assert lines[3] == "both True", lines
    assert "Traceback" not in done.stderr, done.stderr


def test_without_gevent_it_runs_here_and_a_refusal_is_raised_as_it_is():
    result, cpu = off_process_timed(sum, [1, 2, 3])
    assert result == 6 and cpu >= 0
    try:
        off_process_timed(checked_record, [])
    except RecordError as exc:
        assert exc.code == "invalid_record" and str(exc) == "a record is a JSON object"
    else:
        raise AssertionError("a list is not a record")


def test_a_refusal_over_a_limit_pauses_only_where_a_pause_costs_a_greenlet():
    program = """
from gevent import monkey; monkey.patch_all()
import time
import gevent
from service.cooperative import pause
started = time.perf_counter()
waiting = [gevent.spawn(pause, 0.3) for _ in range(50)]  # fifty refusals at once
gevent.joinall(waiting)
print(round(time.perf_counter() - started, 1))
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert 0.3 <= float(done.stdout) < 2  # side by side, not one after another (15 s)
    from service.cooperative import pause

    started = time.perf_counter()
    pause(5)  # no gevent here (a test, a development server's thread): no pause
    assert time.perf_counter() - started < 0.5


def test_every_429_is_sent_after_a_pause_of_at_most_a_second_or_its_retry_after(store, monkeypatch):
    from service.api import create_app, errors

    paused: list[float] = []
    monkeypatch.setattr(errors, "pause", paused.append)
    client = create_app({"STORE": store, "TESTING": True, "GUESTS_PER_ADDRESS": "1/hour burst 1"}).test_client()
    assert client.post("/players", json={"name": "Ann"}).status_code == 201
    refused = client.post("/players", json={"name": "Bob"})
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 1
    assert paused == [1.0]
    assert client.get("/matches/not-an-id").status_code == 404 and paused == [1.0]  # other refusals: none

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

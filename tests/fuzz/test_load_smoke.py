"""The load benchmark runs end to end in a short version: both servers under gunicorn,
every load, two clients, no error, and every figure printed (so the script cannot rot)."""

from __future__ import annotations

import os
import re

import pytest

from tests.scripts import run_script


@pytest.mark.slow
def test_a_short_load_run_prints_every_figure_without_errors():
    args = ["--seconds", "2", "--clients", "2", "--rounds", "1", "--client-processes", "1", "--level", "easy"]
    if os.environ.get("TEST_DATABASE_URL"):
        args += ["--database-url", os.environ["TEST_DATABASE_URL"]]
    result = run_script("benchmarks/load.py", *args, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    rows = {}
    for line in out.splitlines():
        match = re.match(r"(baseline INSERT|two people|vs computer)\s+(\d+)\s+(\S+)\s+([\d,]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)", line)
        if match:
            rows[match[1]] = match
    assert set(rows) == {"baseline INSERT", "two people", "vs computer"}, out
    for name, row in rows.items():
        assert row[2] == "2", row[0]
        assert int(row[4].replace(",", "")) > 0, row[0]  # requests per second
        assert row[8] == "0", f"errors in {name}:\n{out}"
        assert float(row[5]) <= float(row[6]) <= float(row[7]), row[0]  # p50 <= p95 <= p99
    assert int(rows["two people"][3].replace(",", "")) > 0 and int(rows["vs computer"][3].replace(",", "")) > 0
    assert "rps / baseline" in out and rows["two people"].string.rstrip().endswith("%")
    assert "latency by request" in out and "GET view" in out and "POST action" in out
    assert "targets (two people):" in out and "the action's p99 at most 1.25x" in out and "no errors" in out
    # CPU per request (workers, PostgreSQL, clients), and as ratios to the baseline's.
    assert "CPU us per request" in out and "workers' CPU per request at most 1.25x" in out
    for name, row in rows.items():
        cpu = re.match(r"\s+([\d,]+)\s+([\d,]+|n/a)\s+([\d,]+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", row.string[row.end():])
        assert cpu, row.string
        assert int(cpu[1].replace(",", "")) > 0 and int(cpu[3].replace(",", "")) > 0, row.string
        if name != "baseline INSERT":
            assert float(cpu[4]) > 0 and float(cpu[7]) > 0, row.string  # workers' and the action's p99 ratios

"""Running the repository's scripts (benchmarks, tools) the way a reader of the README would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_script(script: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python SCRIPT ARGS`` from the repository's root, its output captured; never raises on failure."""
    return subprocess.run(
        [sys.executable, script, *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )

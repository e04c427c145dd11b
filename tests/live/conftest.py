"""Service instances (``gin-rummy serve``: gunicorn, gevent workers) on the session's
database, started with the settings a test needs, stopped at its end."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.scale.cluster import Instance, tail


@pytest.fixture
def serve(database_url, request):
    """``serve(workers=2, **env)``: a started instance (its ``port``; ``stop()``, ``start()``,
    ``wait_ready()``), on the session's database, with ``env`` added to its environment."""
    folder = Path(tempfile.mkdtemp(prefix="gin-rummy-live-"))
    started: list[Instance] = []

    def start(workers: int = 2, **env: str) -> Instance:
        instance = Instance(f"instance-{len(started)}", folder, database_url, workers=workers, env=env)
        started.append(instance)
        instance.start()
        instance.wait_ready()
        return instance

    failed_before = request.session.testsfailed
    yield start
    for instance in started:
        instance.stop()
    if request.session.testsfailed > failed_before:
        for instance in started:
            print(f"--- {instance.name} ---\n{tail(instance.log)}")
    shutil.rmtree(folder, ignore_errors=True)

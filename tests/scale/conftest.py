"""The deployment the scale tests run against: one per module (see cluster.py)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from .client import Ledger, Routes
from .cluster import Cluster, nginx_binary
from .report import REPORT


def running(request, deployment, folder: Path):
    """Start ``deployment`` (anything with start, stop and logs) for a module's tests,
    yield it, and stop it and delete ``folder`` afterwards; its logs go into the report
    when a test of the module failed."""
    try:
        deployment.start()
    except BaseException:
        logs = deployment.logs()
        deployment.stop()
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"the deployment did not start:\n{logs}") from None
    failed_before = request.session.testsfailed
    yield deployment
    if request.session.testsfailed > failed_before:
        REPORT.setdefault("logs of the failed run", {})["tails"] = "\n" + deployment.logs()
    deployment.stop()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster(request):
    if nginx_binary() is None:
        pytest.skip("nginx is not installed (apt-get install nginx): the scale-out tests put it in front of the instances")
    folder = Path(tempfile.mkdtemp(prefix="gin-rummy-scale-"))
    folder.chmod(0o755)  # nginx's workers and PostgreSQL run as other users
    yield from running(request, Cluster(folder), folder)


@pytest.fixture(scope="module")
def ledger():
    return Ledger()


@pytest.fixture(scope="module")
def routes(cluster):
    return Routes(cluster.nginx.port, [i.port for i in cluster.instances])


def pytest_terminal_summary(terminalreporter):
    if not REPORT:
        return
    if terminalreporter.verbosity < 0:  # a quiet run (the default): one line, -v for the figures
        terminalreporter.write_line(f"scale tests measured: {', '.join(REPORT)} (-v: the figures)")
        return
    terminalreporter.write_sep("=", "scale tests: instances behind nginx, on one PostgreSQL or a replicated one")
    for section, values in REPORT.items():
        terminalreporter.write_line(f"{section}:")
        for name, value in values.items():
            terminalreporter.write_line(f"    {name}: {value}")

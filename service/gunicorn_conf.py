"""gunicorn settings for the service (``gunicorn --config python:service.gunicorn_conf``).

Threads, not just processes: a live stream (SSE) holds its thread while it waits.
Every value can be overridden by the usual GUNICORN_CMD_ARGS or the variables below.

Metrics: the workers share their Prometheus counts through files in
``PROMETHEUS_MULTIPROC_DIR`` (a fresh temporary directory unless it is set), so
``/metrics`` answers for the whole server whichever worker serves it.  The directory
is emptied when the server starts, and a dead worker's files are folded into the
totals; the workers import the app (and so prometheus_client) after this file has set
the variable, which is why the app must not be preloaded.
"""

import multiprocessing
import os
import shutil
import tempfile

bind = os.environ.get("GIN_RUMMY_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GIN_RUMMY_WORKERS", min(4, multiprocessing.cpu_count() * 2)))
worker_class = "gthread"
threads = int(os.environ.get("GIN_RUMMY_THREADS", 8))
timeout = 60
graceful_timeout = 20
keepalive = 5
accesslog = None  # the service writes its own structured request log
preload_app = False

_made_metrics_dir = None
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    _made_metrics_dir = os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="gin-rummy-metrics-")


def on_starting(server):
    """Counts start at zero with the server: drop the files of an earlier run."""
    path = os.environ["PROMETHEUS_MULTIPROC_DIR"]
    os.makedirs(path, exist_ok=True)
    for name in os.listdir(path):
        if name.endswith(".db"):
            os.remove(os.path.join(path, name))


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    if _made_metrics_dir:
        shutil.rmtree(_made_metrics_dir, ignore_errors=True)

"""gunicorn settings for the service (``gunicorn --config python:service.gunicorn_conf service.wsgi:app``).

The serving model: a few worker processes, each one gevent event loop.  Every request
is a greenlet, which waits for the database or the network without holding anything
but its own small stack, so a live stream (``GET /matches/{id}/stream``) costs a
socket and a few kilobytes, not a thread: one process holds thousands of them, and
health checks and actions never queue behind streams.  Why gevent rather than an
asyncio server: the Flask app and psycopg run unchanged under it (psycopg 3 detects
gevent's patched ``select`` and waits cooperatively), so a request has no hop
between an event loop and a thread pool (measured: an ASGI server bridging to the
same Flask app in threads answered 25-35% fewer requests per second than gthread, while
gevent answered as many or more; docs/serving.md).  The one thing an event
loop does not forgive is a long computation: the hard computer's decisions, the only
ones that may take tens of milliseconds, run in gevent's pool of native threads
(``service.cooperative``).

gevent must patch the standard library before psycopg and psycopg_pool are imported
(they choose their waiting and locking primitives at import), which gunicorn's gevent
worker does first thing in each worker process; so the app must not be preloaded in
the master, and ``gin-rummy serve`` starts gunicorn in a process of its own.

Every value can be overridden by the usual GUNICORN_CMD_ARGS or the variables below:
``GIN_RUMMY_BIND`` (default ``0.0.0.0:8000``), ``GIN_RUMMY_WORKERS`` (processes,
default twice the cores, at most 4) and ``GIN_RUMMY_CONNECTIONS`` (simultaneous
connections per process, streams included, default 5000; beyond it a process stops
accepting until one closes).

Metrics: the workers share their Prometheus counts through files in
``PROMETHEUS_MULTIPROC_DIR`` (a fresh temporary directory unless it is set), so
``/metrics`` answers for the whole server whichever worker serves it.  The directory
is emptied when the server starts, and a dead worker's files are folded into the
totals; the workers import the app (and so prometheus_client) after this file has set
the variable, which is another reason the app must not be preloaded.
"""

import os
import shutil
import tempfile

from service.settings import Settings

settings = Settings.from_env()
bind = settings.bind
workers = settings.workers
worker_class = "service.serving.Worker"
worker_connections = settings.connections
# Streams listen for far longer than any request runs; gunicorn's timeout is the
# heartbeat of a worker's event loop (a worker stuck that long is restarted), not a
# limit on a request.
timeout = 60
graceful_timeout = 20
keepalive = 5
accesslog = None  # the service writes its own structured request log
preload_app = False

# The workers inherit this process's environment: prometheus_client reads the directory
# from it when they import it.
_made_metrics_dir = None
metrics_dir = settings.metrics_dir
if metrics_dir is None:
    metrics_dir = _made_metrics_dir = os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="gin-rummy-metrics-")


def on_starting(server):
    """Counts start at zero with the server: drop the files of an earlier run."""
    path = metrics_dir
    assert path is not None, "made at import when the settings name none"
    os.makedirs(path, exist_ok=True)
    for name in os.listdir(path):
        if name.endswith(".db"):
            os.remove(os.path.join(path, name))


def worker_exit(server, worker):
    """A worker's last act: its streams ended, its pools closed (an unclosed pool is
    torn down by the interpreter at exit, which under gevent prints a traceback)."""
    app = getattr(worker, "wsgi", None)
    services = getattr(app, "extensions", {}).get("gin_rummy")
    if services is not None:
        services.close()
    import logging

    for handler in logging.getLogger("gin_rummy.requests").handlers:
        handler.flush()  # the request log's last lines (written in batches)


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    if _made_metrics_dir:
        shutil.rmtree(_made_metrics_dir, ignore_errors=True)

"""gunicorn settings for the service (``gunicorn --config python:service.gunicorn_conf``).

Threads, not just processes: a live stream (SSE) holds its thread while it waits.
Every value can be overridden by the usual GUNICORN_CMD_ARGS or the variables below.
"""

import multiprocessing
import os

bind = os.environ.get("GIN_RUMMY_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GIN_RUMMY_WORKERS", min(4, multiprocessing.cpu_count() * 2)))
worker_class = "gthread"
threads = int(os.environ.get("GIN_RUMMY_THREADS", 8))
timeout = 60
graceful_timeout = 20
keepalive = 5
accesslog = None  # the service writes its own structured request log

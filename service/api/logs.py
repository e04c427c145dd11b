"""Each request's id, log line and metrics, from one pair of hooks.

The id comes from the ``X-Request-Id`` header (nginx sets one) when it is a plain id
(1 to 64 letters, digits, ``.``, ``_``, ``:``, ``-``), or is made here, and is echoed in
the response.  The log line is one JSON document per request on the logger
``gin_rummy.requests`` (``gin-rummy serve`` prints it on standard error): request id,
method, path, route, status, milliseconds and ``remote``, the client address (behind
trusted proxies, the forwarded one: see ``TRUSTED_PROXIES``).  Paths are logged without
their query string and no header is logged, so no token sent the documented way ever
reaches a log line.  The same hooks count the request for ``/metrics``
(``service.api.metrics``): one before and one after every request, since each hook
Flask runs costs every request.

A server writes its request log through ``BatchedLines`` (``service.wsgi``): the lines
of a moment go out in one write, at most ``FLUSH_SECONDS`` after the first of them
(or once ``LIMIT`` bytes wait), instead of a write per request; and while that handler
is the logger's only one, a line goes to it directly, without a ``LogRecord``.  A line
per request cost a worker about 35 us of CPU, 6% of an action's request; a process
killed outright loses at most the lines of its last ``FLUSH_SECONDS``.
"""

from __future__ import annotations

import atexit
import itertools
import logging
import re
import secrets
import threading
import time
from typing import TextIO

import orjson
from flask import Flask, g, request

from . import metrics

log = logging.getLogger("gin_rummy.requests")

REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")

# Ids made here: this process's random prefix and a count, 32 hex digits like a UUID.
# Not uuid4: an id needs to be unique, not unpredictable, and the random bytes of a
# uuid4 cost a system call on every request.
_PREFIX = secrets.token_hex(8)
_COUNT = itertools.count()


def new_request_id() -> str:
    return f"{_PREFIX}{next(_COUNT) & 0xFFFFFFFFFFFFFFFF:016x}"


def request_id_of(given: str | None) -> str:
    """The request's id: the one sent when it is a plain id, else a new one."""
    return given if given and REQUEST_ID.fullmatch(given) else new_request_id()


def register_request_logs(app: Flask) -> None:
    @app.before_request
    def _start():
        g.request_started = time.perf_counter()
        g.request_id = request_id_of(request.headers.get("X-Request-Id"))

    @app.after_request
    def _finish(response):
        started = g.get("request_started")
        seconds = time.perf_counter() - started if started is not None else None
        request_id = g.get("request_id", "")
        response.headers["X-Request-Id"] = request_id
        rule = request.url_rule
        route = rule.rule if rule is not None else None
        answered(request_id, request.method, request.path, route, response.status_code, seconds, g.get("problem_code"), request.remote_addr)
        return response


def answered(
    request_id: str, method: str, path: str, route: str | None, status: int, seconds: float | None,
    problem_code: str | None, remote: str | None,
) -> None:
    """Count an answered request for the metrics, and write its log line."""
    metrics.count_request(method, route, status, seconds, problem_code)
    if log.isEnabledFor(logging.INFO):
        line = {
            "request_id": request_id,
            "method": method,
            "path": path,
            "route": route,
            "status": status,
            "ms": round(seconds * 1000, 2) if seconds is not None else None,
            "remote": remote,
        }
        text = orjson.dumps(line).decode()
        direct = _direct()
        if direct is not None:
            direct.write(text)
        else:
            log.info(text)


#: How long a request log line may wait to be written with the next ones, and how many
#: bytes may wait at most.
FLUSH_SECONDS = 0.05
LIMIT = 64 * 1024


class BatchedLines(logging.Handler):
    """A handler writing its records' messages (one line each) to ``stream`` in batches:
    at most ``FLUSH_SECONDS`` after the first line of a batch, at once when ``LIMIT``
    bytes wait, and at exit.  Lines keep their order."""

    def __init__(self, stream: TextIO, *, flush_seconds: float = FLUSH_SECONDS, limit: int = LIMIT):
        super().__init__()
        self.stream = stream
        self.flush_seconds = flush_seconds
        self.limit = limit
        self._lines: list[str] = []
        self._size = 0
        self._gather = threading.Lock()  # the waiting lines
        self._writing = threading.Lock()  # one batch written at a time, in order
        self._due = threading.Event()
        self._thread: threading.Thread | None = None
        atexit.register(self.flush)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.write(self.format(record))
        except Exception:
            self.handleError(record)

    def write(self, line: str) -> None:
        with self._gather:
            self._lines.append(line)
            self._size += len(line) + 1
            full = self._size >= self.limit
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="request-log", daemon=True)
                self._thread.start()
        if full:
            self.flush()
        else:
            self._due.set()

    def flush(self) -> None:
        with self._writing:
            with self._gather:
                lines, self._lines, self._size = self._lines, [], 0
            if lines:
                self.stream.write("\n".join(lines) + "\n")
                self.stream.flush()

    def _run(self) -> None:
        while True:
            self._due.wait()
            time.sleep(self.flush_seconds)
            self._due.clear()
            try:
                self.flush()
            except Exception:  # a closed or broken stream: the lines are dropped, not the thread
                pass


def _direct() -> BatchedLines | None:
    """The request log's handler when a line may go straight to it: it is the logger's
    only handler, and nothing filters."""
    handlers = log.handlers
    if len(handlers) == 1 and not log.filters and isinstance(handlers[0], BatchedLines) and not handlers[0].filters:
        return handlers[0]
    return None

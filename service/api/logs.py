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
"""

from __future__ import annotations

import itertools
import logging
import re
import secrets
import time

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


def register_request_logs(app: Flask) -> None:
    @app.before_request
    def _start():
        g.request_started = time.perf_counter()
        given = request.headers.get("X-Request-Id")
        g.request_id = given if given and REQUEST_ID.fullmatch(given) else new_request_id()

    @app.after_request
    def _finish(response):
        started = g.get("request_started")
        seconds = time.perf_counter() - started if started is not None else None
        request_id = g.get("request_id", "")
        response.headers["X-Request-Id"] = request_id
        rule = request.url_rule
        route = rule.rule if rule is not None else None
        status = response.status_code
        metrics.count_request(request.method, route, status, seconds, g.get("problem_code"))
        if log.isEnabledFor(logging.INFO):
            line = {
                "request_id": request_id,
                "method": request.method,
                "path": request.path,
                "route": route,
                "status": status,
                "ms": round(seconds * 1000, 2) if seconds is not None else None,
                "remote": request.remote_addr,
            }
            log.info(orjson.dumps(line).decode())
        return response

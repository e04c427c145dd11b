"""Structured request logs: one JSON line per request, with a request id.

The id comes from the ``X-Request-Id`` header (nginx sets one) when it is a plain id
(1 to 64 letters, digits, ``.``, ``_``, ``:``, ``-``), or is made here, and is echoed in
the response.  Paths are logged without their query string and no other header is
logged, so no token sent the documented way ever reaches a log line.  ``remote`` is the
client address (behind trusted proxies, the forwarded one: see ``TRUSTED_PROXIES``).
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid

from flask import Flask, g, request

log = logging.getLogger("gin_rummy.requests")

REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")


def register_request_logs(app: Flask) -> None:
    @app.before_request
    def _start():
        g.request_started = time.perf_counter()
        given = request.headers.get("X-Request-Id", "")
        g.request_id = given if REQUEST_ID.fullmatch(given) else uuid.uuid4().hex

    @app.after_request
    def _log(response):
        response.headers["X-Request-Id"] = g.get("request_id", "")
        started = g.get("request_started")
        log.info(
            json.dumps(
                {
                    "request_id": g.get("request_id"),
                    "method": request.method,
                    "path": request.path,
                    "route": request.url_rule.rule if request.url_rule else None,
                    "status": response.status_code,
                    "ms": round((time.perf_counter() - started) * 1000, 2) if started else None,
                    "remote": request.remote_addr,
                },
                separators=(",", ":"),
            )
        )
        return response

"""The WSGI entry point for servers: ``service.wsgi:app``.

A server process prints the request log (one JSON line per request, see
``service.api.logs``) and the service's warnings and errors on standard error, unless
``GIN_RUMMY_REQUEST_LOG`` is ``off`` (then only warnings and errors).  The request log's
lines are written in batches, at most 50 ms late (``service.api.logs.BatchedLines``).
"""

import logging
import sys

from service.api import create_app
from service.api.logs import BatchedLines
from service.settings import Settings


def configure_logging(settings: Settings) -> None:
    requests = logging.getLogger("gin_rummy.requests")
    if not requests.handlers and settings.request_log:
        lines = BatchedLines(sys.stderr)
        lines.setFormatter(logging.Formatter("%(message)s"))
        requests.addHandler(lines)
        requests.setLevel(logging.INFO)
        requests.propagate = False
    service = logging.getLogger("service")
    if not service.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        service.addHandler(handler)
        service.setLevel(logging.WARNING)


settings = Settings.from_env()
configure_logging(settings)
app = create_app(settings=settings)

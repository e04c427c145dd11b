"""The REST API: ``create_app(config=None)`` is the only composition root.

Configuration (keys of ``config``, or environment variables where named):

- ``DATABASE_URL`` (env ``DATABASE_URL``): the PostgreSQL server; without one, the
  embedded server is started (``service.store.database``).
- ``OPERATOR_TOKEN`` (env ``GIN_RUMMY_OPERATOR_TOKEN``): the token that may read every
  match, for support and auditing.  Unset: there is no operator.
- ``STORE``: an ``EventStore`` to use instead of connecting (tests).
- ``STREAM_POLL_SECONDS``: how often a live stream looks for new events (0.25).
- ``MAX_CONTENT_LENGTH``: largest request body in bytes (64 KiB).
- ``CORS_ORIGINS`` (env ``GIN_RUMMY_CORS_ORIGINS``, comma-separated, or ``*``): browser
  origins allowed to call the API from another site.  Unset: same origin only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from flask import Flask

from service.matches import MatchService
from service.store import EventStore, connect

from .cors import register_cors
from .errors import register_error_handlers
from .logs import register_request_logs


@dataclass
class Services:
    store: EventStore
    matches: MatchService


def create_app(config: dict[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(
        OPERATOR_TOKEN=os.environ.get("GIN_RUMMY_OPERATOR_TOKEN") or None,
        CORS_ORIGINS=os.environ.get("GIN_RUMMY_CORS_ORIGINS", ""),
        STREAM_POLL_SECONDS=0.25,
        MAX_CONTENT_LENGTH=64 * 1024,
        JSON_SORT_KEYS=False,
    )
    app.config.update(config or {})
    store = app.config.get("STORE")
    if store is None:
        store = EventStore(connect(app.config.get("DATABASE_URL") or os.environ.get("DATABASE_URL")))
    app.extensions["gin_rummy"] = Services(store, MatchService(store))
    app.json.sort_keys = False

    register_error_handlers(app)
    register_cors(app)
    register_request_logs(app)
    from . import matches, meta, records, web

    app.register_blueprint(meta.bp)
    app.register_blueprint(matches.bp)
    app.register_blueprint(records.bp)
    app.register_blueprint(web.bp)
    return app

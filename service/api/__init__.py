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
- ``RATE_LIMIT_PER_TOKEN`` (env ``GIN_RUMMY_RATE_LIMIT_PER_TOKEN``, default
  ``"100/second burst 300"``) and ``RATE_LIMIT_PER_ADDRESS`` (env
  ``GIN_RUMMY_RATE_LIMIT_PER_ADDRESS``, default ``"1000/second burst 3000"``): requests
  allowed per bearer token and per client address, as ``"N/second burst B"`` (or
  ``N/minute``, ``N/hour``); ``0`` or ``off`` turns a limit off.  Beyond a limit the
  answer is 429 ``rate_limited`` with ``Retry-After``.  The counts are kept per worker
  process (see ``service.api.ratelimit`` for why), so a deployment of W processes
  allows up to W times these; the defaults are far above a person's or a front end's
  needs and only stop runaway clients.  Health checks and ``/metrics`` are exempt.
- ``TRUSTED_PROXIES`` (env ``GIN_RUMMY_TRUSTED_PROXIES``, default 0): how many proxies
  (nginx, a load balancer) stand in front of the service.  With N > 0 the client
  address is taken from the N-th last X-Forwarded-For entry (and the scheme from
  X-Forwarded-Proto); with 0 those headers are ignored, since any client can send them.
  The address limit and the request log use that address.
- ``METRICS_TOKEN`` (env ``GIN_RUMMY_METRICS_TOKEN``): when set, ``GET /metrics`` needs
  it as a bearer token.  Unset: ``/metrics`` is open (keep it off the public network, e.g.
  by nginx).  With several workers, ``PROMETHEUS_MULTIPROC_DIR`` makes ``/metrics`` sum
  over them (``service.api.metrics``).
- ``IDEMPOTENCY_PURGE_SECONDS`` (default 3600): how often a service that connected on
  its own (not given a ``STORE``) deletes the answers to Idempotency-Keys older than 24
  hours (``service.store.idempotency``); 0: never (then run
  ``gin-rummy db purge-idempotency`` from a scheduler).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from service.matches import MatchService
from service.store import EventStore, connect
from service.store.idempotency import purge_periodically

from . import metrics
from .auth import KnownTokens
from .cors import register_cors
from .errors import Request, register_error_handlers
from .logs import register_request_logs
from .ratelimit import register_rate_limits

DEFAULT_RATE_LIMIT_PER_TOKEN = "100/second burst 300"
DEFAULT_RATE_LIMIT_PER_ADDRESS = "1000/second burst 3000"


@dataclass
class Services:
    store: EventStore
    matches: MatchService


def create_app(config: dict[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    app.request_class = Request
    app.config.update(
        OPERATOR_TOKEN=os.environ.get("GIN_RUMMY_OPERATOR_TOKEN") or None,
        CORS_ORIGINS=os.environ.get("GIN_RUMMY_CORS_ORIGINS", ""),
        RATE_LIMIT_PER_TOKEN=os.environ.get("GIN_RUMMY_RATE_LIMIT_PER_TOKEN", DEFAULT_RATE_LIMIT_PER_TOKEN),
        RATE_LIMIT_PER_ADDRESS=os.environ.get("GIN_RUMMY_RATE_LIMIT_PER_ADDRESS", DEFAULT_RATE_LIMIT_PER_ADDRESS),
        TRUSTED_PROXIES=int(os.environ.get("GIN_RUMMY_TRUSTED_PROXIES") or 0),
        METRICS_TOKEN=os.environ.get("GIN_RUMMY_METRICS_TOKEN") or None,
        STREAM_POLL_SECONDS=0.25,
        MAX_CONTENT_LENGTH=64 * 1024,
        JSON_SORT_KEYS=False,
        IDEMPOTENCY_PURGE_SECONDS=3600,
    )
    app.config.update(config or {})
    store = app.config.get("STORE")
    if store is None:
        store = EventStore(connect(app.config.get("DATABASE_URL") or os.environ.get("DATABASE_URL")))
        if app.config["IDEMPOTENCY_PURGE_SECONDS"]:
            purge_periodically(store.pool, every=float(app.config["IDEMPOTENCY_PURGE_SECONDS"]))
    app.extensions["gin_rummy"] = Services(store, MatchService(store, hooks=metrics.HOOKS))
    app.extensions["gin_rummy_known_tokens"] = KnownTokens()
    app.json.sort_keys = False
    proxies = int(app.config["TRUSTED_PROXIES"])
    if proxies > 0:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies)

    register_error_handlers(app)
    register_cors(app)
    # Order matters: a refused request (429) must already have its id and its clock.
    register_request_logs(app)
    metrics.register_request_metrics(app)
    register_rate_limits(app, on_limited=metrics.rate_limited)
    from . import matches, meta, records, web

    app.register_blueprint(meta.bp)
    app.register_blueprint(metrics.bp)
    app.register_blueprint(matches.bp)
    app.register_blueprint(records.bp)
    app.register_blueprint(web.bp)
    return app

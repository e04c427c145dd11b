"""The REST API: ``create_app(config=None)`` is the only composition root.

The settings (every one, with its environment variable, type and default:
``service.settings``) are read from the environment once, here; ``config`` may
override any of them by its name in capitals (``{"OPERATOR_TOKEN": ...}``), and may
give two components of its own, for tests: ``STORE``, an ``EventStore`` to use instead
of connecting, and ``CLOCK``, a function giving the time now (an aware ``datetime``),
so that deadlines pass without waiting.  Other keys are Flask's (``TESTING``).

The app holds the ``Application`` (``app.extensions["gin_rummy"]``) and the HTTP
layer around it: errors as problem documents, CORS, the request log and metrics, the
rate limits, and one blueprint per resource, each route parsing its request, calling
one use case and encoding the answer; in front of them, every turn's two requests
answered without Flask's request machinery (``service.api.turns``).
"""

from __future__ import annotations

from typing import Any

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

from service.application import Application
from service.settings import Settings, setting_names

from . import coach, matches, matchmaking, meta, metrics, players, problems, records, streams, web, webhooks
from .cors import origins_of, register_cors
from .errors import Request, register_error_handlers
from .logs import register_request_logs
from .ratelimit import TokenBuckets, register_rate_limits
from .turns import Turns

#: ``config`` keys that are components, not settings.
COMPONENTS = ("STORE", "CLOCK")


def create_app(config: dict[str, Any] | None = None, *, settings: Settings | None = None) -> Flask:
    """The app; ``settings`` read from the environment unless given (a server that read
    them already), with ``config``'s overrides."""
    config = dict(config or {})
    components = {key: config.pop(key) for key in COMPONENTS if key in config}
    names = setting_names()
    overrides = {key.lower(): config.pop(key) for key in list(config) if key.lower() in names}
    settings = (Settings.from_env() if settings is None else settings).overridden(**overrides)

    app = Flask(__name__)
    app.request_class = Request
    app.config.update(MAX_CONTENT_LENGTH=settings.max_content_length, JSON_SORT_KEYS=False, **config)
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["gin_rummy"] = Application.build(
        settings, store=components.get("STORE"), hooks=metrics.HOOKS, clock=components.get("CLOCK")
    )
    register_error_handlers(app)
    register_cors(app, settings.cors_origins)
    # Order matters: a refused request (429) must already have its id and its clock.
    register_request_logs(app)  # and the request metrics
    register_rate_limits(app, settings.rate_limit_per_token, settings.rate_limit_per_address, on_limited=metrics.rate_limited)
    imports = settings.import_rate_limit_per_address
    app.extensions["gin_rummy_import_limiter"] = TokenBuckets(imports) if imports else None

    for blueprint in (meta.bp, metrics.bp, matches.bp, streams.bp, players.bp, matchmaking.bp, webhooks.bp, records.bp, coach.bp, problems.bp, web.bp):
        app.register_blueprint(blueprint)
    # Every turn's two requests first (they fall through to Flask's routes in any other form).
    app.wsgi_app = Turns(app, app.wsgi_app, origins_of(settings.cors_origins))  # type: ignore[method-assign]
    if settings.trusted_proxies > 0:
        proxies = settings.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies, x_host=proxies)  # type: ignore[method-assign]
    return app

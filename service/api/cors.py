"""Cross-origin requests, for front ends served from another site (the settings' ``cors_origins``).

``GIN_RUMMY_CORS_ORIGINS`` lists the origins allowed (``https://play.example.com``), and
two words: ``*`` (any origin) and ``localhost`` (a page on this machine, any port:
``http://localhost:5173``, ``http://127.0.0.1:3000``, ``http://[::1]:8080``), the default,
so that a front end on its development server talks to a local service at once.  In
production list your front end's origins instead (the default is then replaced).
The API authenticates with bearer tokens, never cookies, so a page allowed to call it
holds no power the token it sends does not give.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Flask, request

ALLOWED_HEADERS = "Authorization, Content-Type, If-Match, If-None-Match, Idempotency-Key, Last-Event-ID"
EXPOSED_HEADERS = "ETag, Location, Retry-After, Idempotent-Replayed, RateLimit, RateLimit-Policy, X-Request-Id"


#: The hosts of ``localhost`` in GIN_RUMMY_CORS_ORIGINS.
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def on_this_machine(origin: str) -> bool:
    """Whether ``origin`` is a page served from this machine (http or https, any port)."""
    try:
        parts = urlsplit(origin)
        parts.port  # noqa: B018  (raises for a port that is no number)
        return parts.scheme in ("http", "https") and parts.hostname in LOOPBACK_HOSTS and not parts.path
    except ValueError:  # a port that is no number
        return False


def allows(origins: frozenset[str], origin: str) -> bool:
    return "*" in origins or origin in origins or ("localhost" in origins and on_this_machine(origin))


def register_cors(app: Flask, allowed: tuple[str, ...]) -> None:
    """Answer cross-origin requests from the ``allowed`` origins (``*``: any;
    ``localhost``: this machine's, any port)."""
    origins = frozenset(allowed) - {"none", "off"}
    if not origins:
        return

    @app.after_request
    def _cors(response):
        origin = request.headers.get("Origin")
        if origin and allows(origins, origin):
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers.add("Vary", "Origin")
            response.headers["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
            if request.method == "OPTIONS":
                response.headers["Access-Control-Allow-Methods"] = "GET, POST, PATCH, DELETE, OPTIONS"
                response.headers["Access-Control-Allow-Headers"] = ALLOWED_HEADERS
                response.headers["Access-Control-Max-Age"] = "600"
        return response

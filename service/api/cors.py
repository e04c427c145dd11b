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


def origins_of(allowed: tuple[str, ...]) -> frozenset[str]:
    """The origins of GIN_RUMMY_CORS_ORIGINS (empty: cross-origin requests are not answered)."""
    return frozenset(allowed) - {"none", "off"}


def cors_fields(origins: frozenset[str], origin: str | None, method: str) -> list[tuple[str, str]]:
    """The CORS fields of an answer to a request from ``origin`` (none when it is not allowed)."""
    if not origin or not allows(origins, origin):
        return []
    fields = [("Access-Control-Allow-Origin", origin), ("Vary", "Origin"), ("Access-Control-Expose-Headers", EXPOSED_HEADERS)]
    if method == "OPTIONS":
        fields += [
            ("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE, OPTIONS"),
            ("Access-Control-Allow-Headers", ALLOWED_HEADERS),
            ("Access-Control-Max-Age", "600"),
        ]
    return fields


def register_cors(app: Flask, allowed: tuple[str, ...]) -> None:
    """Answer cross-origin requests from the ``allowed`` origins (``*``: any;
    ``localhost``: this machine's, any port)."""
    origins = origins_of(allowed)
    if not origins:
        return

    @app.after_request
    def _cors(response):
        for name, value in cors_fields(origins, request.headers.get("Origin"), request.method):
            if name == "Vary":
                response.headers.add(name, value)
            else:
                response.headers[name] = value
        return response

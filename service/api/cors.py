"""Cross-origin requests, for front ends served from another site (the settings' ``cors_origins``)."""

from __future__ import annotations

from flask import Flask, request

ALLOWED_HEADERS = "Authorization, Content-Type, If-Match, If-None-Match, Idempotency-Key, Last-Event-ID"
EXPOSED_HEADERS = "ETag, Location, Retry-After, Idempotent-Replayed"


def register_cors(app: Flask, allowed: tuple[str, ...]) -> None:
    """Answer cross-origin requests from the ``allowed`` origins (``*``: any)."""
    origins = set(allowed)
    if not origins:
        return

    @app.after_request
    def _cors(response):
        origin = request.headers.get("Origin")
        if origin and ("*" in origins or origin in origins):
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers.add("Vary", "Origin")
            response.headers["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
            if request.method == "OPTIONS":
                response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
                response.headers["Access-Control-Allow-Headers"] = ALLOWED_HEADERS
                response.headers["Access-Control-Max-Age"] = "600"
        return response

"""The reference web client: static files from ``service/web``, served at ``/``.

These routes are not API operations (they carry no OpenAPI metadata): ``GET /`` is the
page, ``GET /web/<path>`` its modules, style sheet and screenshots.  The client calls
the documented endpoints exactly as a third-party app would.
"""

from __future__ import annotations

from importlib import resources

from flask import Blueprint, abort, send_from_directory

bp = Blueprint("web", __name__)

#: Explicit types: an ES module must be served as JavaScript whatever the host's mime.types says.
TYPES = {
    ".html": "text/html",
    ".js": "text/javascript",
    ".css": "text/css",
    ".png": "image/png",
    ".svg": "image/svg+xml",
}


def _directory() -> str:
    return str(resources.files("service.web"))


def _send(path: str):
    suffix = path[path.rfind(".") :] if "." in path else ""
    if suffix not in TYPES:
        abort(404)  # the package's Python files are not part of the client
    response = send_from_directory(_directory(), path, mimetype=TYPES.get(suffix))
    # Revalidate every time (ETag / Last-Modified): an upgraded service is picked up on reload.
    response.headers["Cache-Control"] = "no-cache"
    return response


@bp.get("/")
def index():
    return _send("index.html")


@bp.get("/web/<path:path>")
def static_file(path: str):
    return _send(path)

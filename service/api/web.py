"""The reference web client: static files from ``service/web``, served at ``/``.

These routes are not API operations (they carry no OpenAPI metadata): ``GET /`` is the
page, ``GET /web/<path>`` its modules, style sheet and screenshots.  The client calls
the documented endpoints exactly as a third-party app would.

``/`` is also where an ingress-nginx controller sends the errors it answers itself, when
this service is its default backend for them (``custom-http-errors`` and
``default-backend``, as in ``deploy/k8s/gin-rummy.yaml``): it rewrites the request to
``/``, keeps its method, and names the status in ``X-Code``.  Such a request is answered
with the problem document that status would have in ``deploy/nginx.conf``, so the
clients behind an ingress get the one error shape too.
"""

from __future__ import annotations

from importlib import resources

from flask import Blueprint, abort, request, send_from_directory
from werkzeug.exceptions import MethodNotAllowed

from .errors import HTTP_CODES, Problem
from .http import is_number

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


#: The statuses an ingress may hand over, as deploy/nginx.conf answers them: (code, detail, Retry-After).
PROXY_ERRORS = {
    400: ("bad_request", "the request is not valid HTTP/1.1: a malformed request line, or a header with a character not allowed", None),
    404: ("not_found", "no such resource here", None),
    413: ("body_too_large", "the request body is larger than the proxy accepts (a match record may be up to 4 MiB, any other body 64 KiB)", None),
    414: ("uri_too_long", "the request line (method, path and query) is longer than the proxy reads", None),
    431: ("headers_too_large", "a header, or the headers together, are larger than the proxy reads", None),
    502: ("service_unreachable", "no instance of the service could be reached; retry later", "5"),
    503: ("service_unavailable", "no instance of the service is ready; retry later", "5"),
    504: ("service_timeout", "the instance did not answer in time; retry later (an action with an Idempotency-Key is applied at most once)", "5"),
}


def proxy_error(code: str) -> Problem:
    """The problem for a status an ingress answered itself (``X-Code``); never echoes the request."""
    status = int(code) if is_number(code) and 400 <= int(code) <= 599 else 502
    name, detail, retry = PROXY_ERRORS.get(status, (HTTP_CODES.get(status, "proxy_error"), "the proxy in front of the service refused the request", None))
    return Problem(status, name, detail, headers={"Retry-After": retry} if retry else None)


@bp.route("/", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
def index():
    if (code := request.headers.get("X-Code")) is not None:
        raise proxy_error(code.strip())
    if request.method not in ("GET", "HEAD"):
        raise MethodNotAllowed(valid_methods=["GET", "HEAD"])
    return _send("index.html")


@bp.get("/web/<path:path>")
def static_file(path: str):
    return _send(path)

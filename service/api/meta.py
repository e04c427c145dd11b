"""Health, the OpenAPI document, its browsable page and its guides, and the rules presets.

Two health checks, for two questions: ``/health/live`` (liveness: the process answers;
never touches the database, so a database outage does not get healthy processes
restarted) and ``/health`` (readiness: the database answers too, on a connection kept
for this check alone; a load balancer sends no traffic to an instance that says 503).
Neither is rate limited, and neither waits behind streams or actions: each request is
a greenlet of the worker's event loop (service.gunicorn_conf).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import threading
from importlib import resources

from flask import Blueprint, Response, current_app, jsonify, request
from flask.blueprints import BlueprintSetupState

from service.engine import PRESET_DESCRIPTIONS, PRESETS
from service.engine.rules import RANGES

from . import guides
from . import schemas as s
from .docs import operation
from .errors import Problem
from .http import app
from .openapi import spec_dict
from .problems import by_code

bp = Blueprint("meta", __name__)


@bp.get("/health")
@operation(
    summary="Readiness: the service and its database",
    tags=["service"],
    responses={200: s.HealthSchema, 503: s.HealthSchema},
    auth=False,
    description=(
        "For readiness probes and load balancers: 200 when the database answers a query, else 503 "
        '(`{"status": "unavailable"}`, with Retry-After). Not rate limited.'
    ),
)
def health():
    # A connection of its own: the check never waits behind the requests.
    probe = app().probe
    try:
        # (Inside the try: an app with no probe answers 503 as it always has.)
        assert probe is not None, "an app on a store without a pool (the OpenAPI document's) has no probe"
        probe.check()
    except Exception as exc:  # any failure to reach the database means not ready
        current_app.logger.warning("health: database unavailable: %s", type(exc).__name__)
        response = jsonify({"status": "unavailable", "database": "unreachable"})
        response.status_code = 503
        response.headers["Retry-After"] = "5"
        return response
    return jsonify({"status": "ok", "database": "ok"})


@bp.get("/health/live")
@operation(
    summary="Liveness: the process answers (no database check)",
    tags=["service"],
    responses={200: s.HealthSchema},
    auth=False,
    description=(
        "For liveness probes: 200 whenever the process can answer; the database is not consulted, so an "
        "outage of the database (see /health) does not get the process restarted. Not rate limited."
    ),
)
def live():
    return jsonify({"status": "ok", "database": "not checked"})


@bp.get("/rules/presets")
@operation(
    summary="The rules presets and the range of every parameter",
    tags=["rules"],
    responses={200: s.PresetListSchema},
    auth=False,
)
def presets():
    body = {
        "presets": [
            {"name": name, "description": PRESET_DESCRIPTIONS[name], "rules": rules.to_json(complete=True)}
            for name, rules in PRESETS.items()
        ],
        "parameters": {
            name: {"type": "boolean"} if spec[0] is bool
            else {"type": "string", "enum": list(spec[1])} if spec[0] is str
            else {"type": "integer", "minimum": spec[1], "maximum": spec[2]}
            for name, spec in RANGES.items()
        },
    }
    return s.shared(s.PresetListSchema).dump(body)


@bp.get("/openapi.json")
@operation(summary="This API's OpenAPI 3.1 document", tags=["service"], responses={200: "The document"}, auth=False)
def openapi_json():
    document = current_app.extensions.get("gin_rummy_openapi_json")
    if document is None:  # the same for the app's life: encoded once
        document = current_app.extensions["gin_rummy_openapi_json"] = json.dumps(spec_dict(current_app)).encode()
    return served(document, "application/json", "no-cache")


@bp.get("/docs")
@operation(
    summary="The API reference: Swagger UI on this document (works offline)",
    tags=["service"],
    responses={200: "An HTML page"},
    auth=False,
    content_type="text/html",
)
def docs():
    page = resources.files("service.api").joinpath("docs.html").read_text()
    response = Response(page, mimetype="text/html")
    response.headers["Cache-Control"] = "no-cache"
    return response


#: The page's files (not API operations): Swagger UI's, from the flask-swagger-ui package,
#: which ships its release files, and the favicon; nothing is fetched from elsewhere.
DOCS_FILES = {
    "swagger-ui.css": ("flask_swagger_ui", "dist", "text/css"),
    "swagger-ui-bundle.js": ("flask_swagger_ui", "dist", "text/javascript"),
    "favicon.svg": ("service.api", "", "image/svg+xml"),
    "site.css": ("service.api.guides", "", "text/css"),  # the header, shared with the guides
}


@bp.get("/docs/<name>")
def docs_file(name: str):
    if name not in DOCS_FILES:
        raise Problem(404, "not_found", f"no file {name!r} belongs to the API reference")
    package, folder, mimetype = DOCS_FILES[name]
    # Kept an hour, then revalidated by its ETag: an upgraded package is picked up then.
    return served(_docs_file(package, folder, name), mimetype, "public, max-age=3600")


@bp.get("/docs/guides")
def guide_index():
    return served(_guides()["index"], "text/html", "no-cache")


@bp.get("/docs/guides/<name>")
def guide(name: str):
    """A guide (``service.api.guides``): its Markdown as HTML, with the reference's header."""
    if name not in guides.GUIDES:
        raise Problem(404, "not_found", f"no guide {name!r}: /docs/guides lists them")
    return served(_guides()[name], "text/html", "no-cache")


def _guides() -> dict[str, bytes]:
    """The guides' pages, rendered once for the app's life (they link its operations)."""
    pages = current_app.extensions.get("gin_rummy_guides")
    if pages is None:
        pages = current_app.extensions["gin_rummy_guides"] = guides.pages(spec_dict(current_app), by_code())
    return pages


#: Compressed ahead of the first visit (``_compress_ahead``): the largest of the page's files.
COMPRESSED_AHEAD = ("swagger-ui-bundle.js", "swagger-ui.css")
_compressing = threading.Lock()


@bp.record_once
def _compress_ahead(state: BlueprintSetupState) -> None:
    """Gzips Swagger UI's files once per process, in a thread, as the first app is made:
    the bundle takes gzip 50 ms, several times that on a busy machine, which the first visit
    to /docs of each process otherwise waited for before the bundle could even be parsed."""
    if _compressing.acquire(blocking=False):  # never released: once per process
        threading.Thread(target=_compress_docs_files, name="docs-gzip", daemon=True).start()


def _compress_docs_files() -> None:
    for name in COMPRESSED_AHEAD:
        package, folder, _ = DOCS_FILES[name]
        data = _docs_file(package, folder, name)
        _tag(data)
        _gzipped(data)


@functools.cache
def _docs_file(package: str, folder: str, name: str) -> bytes:
    return resources.files(package).joinpath(folder).joinpath(name).read_bytes()


@functools.lru_cache(maxsize=16)
def _gzipped(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=6, mtime=0)


@functools.lru_cache(maxsize=16)
def _tag(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:20]


def served(data: bytes, mimetype: str, cache_control: str) -> Response:
    """``data`` as a response with an ETag (304 to a matching If-None-Match), gzipped
    when the client accepts it (Swagger UI's bundle: 1.7 MB, about 0.5 MB gzipped)."""
    compress = "gzip" in request.headers.get("Accept-Encoding", "").lower()
    response = Response(_gzipped(data) if compress else data, mimetype=mimetype)
    if compress:
        response.headers["Content-Encoding"] = "gzip"
    response.vary.add("Accept-Encoding")
    response.headers["Cache-Control"] = cache_control
    response.set_etag(_tag(data) + ("-gzip" if compress else ""))
    response.make_conditional(request)  # 304 to a matching If-None-Match, in place
    return response


@bp.get("/.well-known/jwks.json")
@operation(
    summary="The public keys of this service's record signatures (JWKS)",
    tags=["records"],
    responses={200: s.JwksSchema},
    auth=False,
    description=(
        "Ed25519 keys as RFC 8037 JWKs (`kty` OKP, `crv` Ed25519, `x` the public key, `kid` its RFC 7638 "
        "thumbprint), the one signing now first; keys of earlier signatures stay listed. A record's `signature` "
        "names its key by `key_id`."
    ),
)
def jwks():
    response = jsonify(app().signer.jwks())
    response.headers["Cache-Control"] = "public, max-age=300"
    return response

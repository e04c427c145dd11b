"""One error shape for every 4xx and 5xx: ``application/problem+json`` (RFC 9457).

Every problem has a stable machine-readable ``code``, a human ``detail``, the HTTP
``status`` and a ``title``; a rule violation adds the ``rule`` broken, and a request
that fails validation adds ``errors`` (field name -> messages).  Its ``type`` is
``/problems/{code}``, a reference relative to the service (RFC 9457 resolves it against
the request's URL), where the code's entry of the catalogue is served
(``service.api.problems``; every code raised is catalogued there).

What is refused is mapped here once: a ``Problem`` raised by a route (what is wrong
with the HTTP request itself), the application's refusals (``ApplicationError``, one
status per kind: ``STATUS_OF_KIND``), the engine's (``IllegalMoveError`` 409,
``CommandError`` 422), the store's (``MatchNotFound`` 404, ``ConcurrencyError`` 409),
the body's validation (422), werkzeug's HTTP errors, and a database out of reach (503).
"""

from __future__ import annotations

import logging

import flask
import psycopg
from flask import Flask, Response, current_app, g, has_request_context, json, request
from marshmallow import ValidationError
from psycopg_pool import PoolTimeout
from werkzeug.exceptions import HTTPException
from werkzeug.wsgi import LimitedStream

from service.application.errors import ApplicationError, Unauthorized
from service.cooperative import pause
from service.engine import CommandError, IllegalMoveError
from service.store import ConcurrencyError, MatchNotFound

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"
#: The problem types: ``/problems/{code}``, on this service (``service.api.problems`` serves them).
PROBLEM_BASE = "/problems/"


class Problem(Exception):
    """Raise anywhere in a request to answer with a problem document."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        rule: str | None = None,
        errors: dict | None = None,
        headers: dict | None = None,
        extra: dict | None = None,
    ):
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.rule = rule
        self.errors = errors
        self.headers = headers or {}
        self.extra = extra or {}

    def body(self) -> dict:
        body = {
            "type": PROBLEM_BASE + self.code,
            "title": TITLES.get(self.status, "Error"),
            "status": self.status,
            "code": self.code,
            "detail": self.detail,
        }
        if self.rule:
            body["rule"] = self.rule
        if self.errors:
            body["errors"] = self.errors
        body.update(self.extra)
        return body


TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    409: "Conflict",
    412: "Precondition Failed",
    413: "Content Too Large",
    414: "URI Too Long",
    415: "Unsupported Media Type",
    422: "Unprocessable Content",
    428: "Precondition Required",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}

HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "body_too_large",
    415: "unsupported_media_type",
    429: "too_many_requests",
}


class Request(flask.Request):
    """A request whose body limit (``MAX_CONTENT_LENGTH``, or the view's own) holds for
    streamed bodies too.

    A body with a Content-Length over the limit is refused before it is read.  A
    chunked one has no length: werkzeug reads it up to the limit and stops there, so
    an oversize body would be cut short silently (and then judged as malformed JSON).
    Here, a body read to the limit is probed for one more byte, which raises 413."""

    def get_data(self, cache: bool = True, as_text: bool = False, parse_form_data: bool = False):
        # werkzeug's overloads take as_text only as a literal True or False; the bool passed on is either.
        data = super().get_data(cache=cache, as_text=as_text, parse_form_data=parse_form_data)  # type: ignore[call-overload]
        stream = self.stream
        if self.content_length is None and isinstance(stream, LimitedStream) and stream.is_exhausted:
            stream.read(1)  # RequestEntityTooLarge when more is waiting
        return data


#: The status that answers each kind of the application's refusals.
STATUS_OF_KIND = {
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "precondition_failed": 412,
    "invalid": 422,
    "rate_limited": 429,
    "unavailable": 503,
}


def application_problem(error: ApplicationError) -> Problem:
    headers: dict[str, str] = {}
    if error.retry_after is not None:
        headers["Retry-After"] = str(error.retry_after)
    if error.version is not None:
        headers["ETag"] = f'"{error.version}"'
    if isinstance(error, Unauthorized):
        challenge = 'Bearer realm="gin-rummy", error="invalid_token"'
        if error.reason is not None:
            challenge += f', error_description="{error.reason}"'
        headers["WWW-Authenticate"] = challenge
    return Problem(
        STATUS_OF_KIND[error.kind], error.code, error.detail, rule=error.rule, errors=error.errors, headers=headers,
        extra=error.extra,
    )


#: How long a refusal for going over a limit (429, and 503 ``busy``) waits before it is
#: sent (at most its Retry-After; served under gevent only, where a waiting request costs
#: a greenlet): a client that ignores Retry-After and sends again at once -- a megabyte
#: record each time -- then takes one answer a second per connection of the service's
#: time, not hundreds.
REFUSAL_PAUSE_SECONDS = 1.0


def problem_response(problem: Problem) -> Response:
    if has_request_context():
        g.problem_code = problem.code  # for the metrics of conflicts
    if problem.status == 429 or problem.code == "busy":
        retry_after = problem.headers.get("Retry-After", "")
        pause(min(REFUSAL_PAUSE_SECONDS, float(retry_after)) if retry_after.isdigit() else 0.0)
    response = Response(json.dumps(problem.body()), status=problem.status, mimetype=PROBLEM_JSON)
    for key, value in problem.headers.items():
        response.headers[key] = value
    return response


def validation_problem(err: ValidationError, what: str = "request body") -> Problem:
    messages = err.messages if isinstance(err.messages, dict) else {"_schema": err.messages}
    fields = ", ".join(sorted(map(str, messages)))
    return Problem(422, "invalid_request", f"the {what} is not valid: see errors ({fields})", errors=messages)


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(Problem)
    def _problem(problem: Problem):
        return problem_response(problem)

    @app.errorhandler(ValidationError)
    def _validation(err: ValidationError):
        return problem_response(validation_problem(err))

    @app.errorhandler(ApplicationError)
    def _refused(error: ApplicationError):
        return problem_response(application_problem(error))

    @app.errorhandler(MatchNotFound)
    def _no_match(error: MatchNotFound):
        return problem_response(Problem(404, "match_not_found", f"no match {error.match_id}"))

    @app.errorhandler(ConcurrencyError)
    def _conflict(error: ConcurrencyError):
        return problem_response(Problem(409, "conflict", "another request changed the match first; reload it and retry"))

    @app.errorhandler(IllegalMoveError)
    def _illegal(err: IllegalMoveError):
        return problem_response(Problem(409, "illegal_move", str(err), rule=err.rule))

    @app.errorhandler(CommandError)
    def _command(err: CommandError):
        return problem_response(Problem(422, err.code, str(err)))

    @app.errorhandler(HTTPException)
    def _http(err: HTTPException):
        status = err.code or 500
        code = HTTP_CODES.get(status, "http_error")
        detail = err.description or TITLES.get(status, "error")
        if status == 413 and request.max_content_length:
            detail = f"the request body is larger than this endpoint's limit of {request.max_content_length} bytes"
        problem = Problem(status, code, detail)
        allowed = getattr(err, "valid_methods", None)
        if status == 405 and allowed:
            problem.headers["Allow"] = ", ".join(allowed)
        return problem_response(problem)

    @app.errorhandler(psycopg.OperationalError)
    @app.errorhandler(PoolTimeout)
    def _database_down(err: Exception):
        # Nothing was committed (a transaction that cannot reach the server cannot
        # commit); the client may retry after a moment, with the same Idempotency-Key.
        log.warning("database unavailable: %s", type(err).__name__)
        application = current_app.extensions.get("gin_rummy")
        if application is not None:
            application.database_lost()
        return problem_response(
            Problem(503, "database_unavailable", "the database cannot be reached; retry shortly", headers={"Retry-After": "2"})
        )

    @app.errorhandler(Exception)
    def _unexpected(err: Exception):
        # Neither the client nor the log gets internals (a trace may hold cards or
        # tokens): the log names the error's type and the request id to look it up.
        log.error("unhandled %s (request %s)", type(err).__name__, g.get("request_id"))
        return problem_response(Problem(500, "internal_error", "an unexpected error occurred; it has been logged"))

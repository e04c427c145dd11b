"""The two requests of every turn, answered without Flask's request machinery.

A turn is a GET of the seat's view (``GET /matches/{id}``) and a POST of its action
(``POST /matches/{id}/actions``): nearly every request a game sends.  ``Turns`` sits in
front of the Flask app (its ``wsgi_app``) and answers the plain form of those two
itself -- a bearer token, no query string, for the action a JSON body of known length
holding one of the common actions (``service.api.http.quick_action``) -- calling the
same use case the route calls, with the same answer: status, body and headers (the
request id, CORS, the rate limits' fields), log line and metrics.  What Flask's path
costs each request and this one does not: a request context and an app context pushed
and popped, a URL adapter bound and matched, a session opened, the hooks' lookups, a
werkzeug Request and Response (measured: a quarter to a third of a worker's CPU per
request, two people at 16 clients, ``docs/serving.md``).

Anything else goes to Flask untouched (a body already read is handed on as it was), so
every other form of these requests -- a query string (``?seat=``), no token, another
body -- is answered by the routes of ``service.api.matches``.  A request the use case
refuses, or that fails, is answered by Flask too: its error handlers and hooks run
inside a request context made then, so a problem document is the same either way.
``tests/api/test_turns.py`` holds both paths to the same answers.
"""

from __future__ import annotations

import io
import re
import time
import uuid
from collections.abc import Callable, Iterable
from http import HTTPStatus

import orjson
from flask import Flask, g

from service.application import Application
from service.application.views import etag

from .cors import cors_fields
from .http import VIEW_CACHE, bearer_of, checked_idempotency_key, encoded, may_hold_unstorable, parse_if_match, quick_action
from .logs import answered, request_id_of
from .ratelimit import RateLimiter

VIEW = re.compile(r"/matches/([^/]+)")
ACTION = re.compile(r"/matches/([^/]+)/actions")
#: The routes' rules, as the log and the metrics name them.
VIEW_ROUTE, ACTION_ROUTE = "/matches/<match_id>", "/matches/<match_id>/actions"

STATUS_LINES = {status.value: f"{status.value} {status.phrase}" for status in HTTPStatus}
JSON = ("Content-Type", "application/json")

WSGIApp = Callable[[dict, Callable], Iterable[bytes]]


class Turns:
    """The WSGI app in front of ``flask_app``'s own (``inner``)."""

    def __init__(self, flask_app: Flask, inner: WSGIApp, cors_origins: frozenset[str]):
        self.flask = flask_app
        self.inner = inner
        self.cors_origins = cors_origins
        self.application: Application = flask_app.extensions["gin_rummy"]

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        method = environ["REQUEST_METHOD"]
        if method == "GET":
            found = VIEW.fullmatch(environ.get("PATH_INFO", ""))
        elif method == "POST":
            found = ACTION.fullmatch(environ.get("PATH_INFO", ""))
        else:
            found = None
        if found is None or environ.get("QUERY_STRING"):
            return self.inner(environ, start_response)
        token = bearer_of(environ.get("HTTP_AUTHORIZATION", ""))
        if token is None:
            return self.inner(environ, start_response)
        try:
            match_id = uuid.UUID(found[1])
        except ValueError:
            return self.inner(environ, start_response)
        if method == "GET":
            return self._turn(environ, start_response, token, match_id, None)
        command = self._command(environ)
        if command is None:
            return self.inner(environ, start_response)
        return self._turn(environ, start_response, token, match_id, command)

    def _command(self, environ: dict) -> dict | None:
        """An action's body when this path takes it, else None (and the body, if read,
        handed on to Flask as it was)."""
        length = environ.get("CONTENT_LENGTH") or ""
        limit = self.flask.config.get("MAX_CONTENT_LENGTH")
        if (
            environ.get("CONTENT_TYPE", "").partition(";")[0].strip().lower() != "application/json"
            or not length.isascii() or not length.isdigit() or len(length) > 9
            or (limit is not None and int(length) > limit)
        ):
            return None
        size = int(length)
        body = environ["wsgi.input"].read(size)
        command = None
        if len(body) == size and not may_hold_unstorable(body):
            try:
                command = quick_action(orjson.loads(body))
            except orjson.JSONDecodeError:
                pass
        if command is None:
            environ["wsgi.input"] = io.BytesIO(body)
        return command

    def _turn(self, environ: dict, start_response: Callable, token: str, match_id: uuid.UUID, command: dict | None) -> Iterable[bytes]:
        """The view (``command`` None) or the action."""
        started = time.perf_counter()
        request_id = request_id_of(environ.get("HTTP_X_REQUEST_ID"))
        limited: dict[str, str] | None = None
        try:
            limited = self._limit(token, environ.get("REMOTE_ADDR"))
            if command is None:
                status, fields, data = self._view(environ, token, match_id)
            else:
                status, fields, data = self._act(environ, token, match_id, command)
        except Exception as exc:  # answered by Flask's error handlers and hooks
            return self._refused(environ, start_response, exc, started, request_id, limited)

        fields.append(("X-Request-Id", request_id))
        fields += cors_fields(self.cors_origins, environ.get("HTTP_ORIGIN"), environ["REQUEST_METHOD"])
        if limited:
            fields += limited.items()
        route = VIEW_ROUTE if command is None else ACTION_ROUTE
        seconds = time.perf_counter() - started
        answered(request_id, environ["REQUEST_METHOD"], environ["PATH_INFO"], route, status, seconds, None, environ.get("REMOTE_ADDR"))
        start_response(STATUS_LINES[status], fields)
        return [data]

    def _limit(self, token: str, address: str | None) -> dict[str, str] | None:
        """The rate limits' fields (None: the limits are off); raises their 429."""
        limiter: RateLimiter = self.flask.extensions["gin_rummy_rate_limiter"]
        return None if limiter.off else limiter.admit(token, address)

    def _view(self, environ: dict, token: str, match_id: uuid.UUID) -> tuple[int, list[tuple[str, str]], bytes]:
        answer = self.application.actions.view(token, match_id, None)
        fields = [("ETag", answer.etag), ("Cache-Control", VIEW_CACHE)]
        if environ.get("HTTP_IF_NONE_MATCH") == answer.etag:
            return 304, fields, b""
        data = encoded(answer.body())
        return 200, [JSON, ("Content-Length", str(len(data))), *fields], data

    def _act(self, environ: dict, token: str, match_id: uuid.UUID, command: dict) -> tuple[int, list[tuple[str, str]], bytes]:
        expected = parse_if_match(environ.get("HTTP_IF_MATCH"))
        key = checked_idempotency_key(environ.get("HTTP_IDEMPOTENCY_KEY"))
        result = self.application.actions.act(token, match_id, None, command, expected_version=expected, key=key)
        data = encoded(result.body)
        fields = [JSON, ("Content-Length", str(len(data))), ("ETag", etag(result.version))]
        if result.replayed:
            fields.append(("Idempotent-Replayed", "true"))
        return result.status, fields, data

    def _refused(
        self, environ: dict, start_response: Callable, exc: Exception, started: float, request_id: str,
        limited: dict[str, str] | None,
    ) -> Iterable[bytes]:
        """The answer Flask's error handlers give ``exc``, through its after-request hooks."""
        flask_app = self.flask
        with flask_app.request_context(environ):
            g.request_started = started
            g.request_id = request_id
            if limited:
                g.rate_limit_fields = limited
            answer = flask_app.make_response(flask_app.handle_user_exception(exc))
            answer = flask_app.process_response(answer)
        return answer(environ, start_response)


"""The server's side of the serving model (service.gunicorn_conf): its worker class.

``Worker`` is gunicorn's gevent worker, told to end the live streams when it is asked
to stop, so that a stopping worker drains in a moment instead of waiting for every
stream's ``wait`` to run out (clients reconnect, to another worker or instance, and
resume with Last-Event-ID).  It also stops on SIGINT / SIGQUIT the same quiet way.

``Worker`` also answers the requests gunicorn refuses before the app sees them (a
request line over ``limit_request_line``, a bad header: 414, 400, 431) with problem
documents (``application/problem+json``), as the app answers every other error.

gunicorn's master imports this module (``worker_class``) before any worker has patched
the standard library with gevent, so it imports nothing of the service: psycopg must
not be loaded in the master (see service.gunicorn_conf).  A worker reaches its app's
streams through the app it serves.

How long computations leave the event loop: ``service.cooperative``.
"""

from __future__ import annotations

import json

try:
    from gunicorn.workers.ggevent import GeventWorker
except ImportError:  # gevent is not installed: no server here, only the library
    GeventWorker = None

if GeventWorker is not None:

    class Worker(GeventWorker):
        def handle_exit(self, sig, frame):
            super().handle_exit(sig, frame)
            self._end_streams()

        def handle_quit(self, sig, frame):
            # gunicorn's own quits with sys.exit in a greenlet, which gevent reports as
            # an error; this stops as SIGTERM does, streams ended, requests finished.
            self.alive = False
            self.cfg.worker_int(self)
            self._end_streams()

        def _end_streams(self):
            import gevent

            services = getattr(getattr(self, "wsgi", None), "extensions", {}).get("gin_rummy")
            if services is not None:
                gevent.spawn(services.end_streams)  # not in the signal handler: it takes locks

        def handle_error(self, req, client, addr, exc):
            # A request gunicorn cannot parse (400 a malformed request line or a header
            # with a character not allowed, 414 a request line beyond limit_request_line,
            # 431 too many or too large headers) never reaches the app: gunicorn answers
            # it itself, with an HTML page from gunicorn.util.write_error, which no
            # setting or hook changes (benoitc/gunicorn#993).  gunicorn still picks the
            # status and logs the request; the page it writes becomes a problem document.
            super().handle_error(req, _ProblemSocket(client, self.cfg), addr, exc)


class _ProblemSocket:
    """The client's socket as gunicorn's error writer sees it: the one response it sends
    there (``HTTP/1.1 <status> <reason>``, then an HTML page) goes out as an
    ``application/problem+json`` document of the same status.  The detail is said from
    the status and the limits, never from the request: gunicorn's message would repeat
    the request line or a header, which may hold a token."""

    def __init__(self, sock, cfg):
        self._sock = sock
        self._cfg = cfg

    def __getattr__(self, name):
        return getattr(self._sock, name)

    def sendall(self, data: bytes) -> None:
        status_line = bytes(data).split(b"\r\n", 1)[0].decode("latin-1")
        try:
            _, status, reason = status_line.split(" ", 2)
            status_code = int(status)
        except ValueError:  # not the error page expected: pass it on as it is
            self._sock.sendall(data)
            return
        self._sock.sendall(problem_answer(status_code, reason, self._cfg))


#: What gunicorn refuses before the app sees a request: status -> (code, detail).
SERVER_PROBLEMS = {
    400: ("bad_request", "the request is not valid HTTP/1.1: a malformed request line, or a header name or value "
                         "with a character not allowed"),
    403: ("forbidden", "the request was refused before it reached the service"),
    414: ("uri_too_long", "the request line (method, path and query) is longer than {limit_request_line} bytes"),
    417: ("expectation_failed", "the Expect header asks for something other than 100-continue"),
    431: ("headers_too_large", "more than {limit_request_fields} headers, or a header longer than "
                              "{limit_request_field_size} bytes"),
    500: ("internal_error", "an unexpected error occurred; it has been logged"),
    501: ("not_implemented", "the request's Transfer-Encoding is not supported (only chunked is)"),
}


def problem_answer(status: int, reason: str, cfg=None) -> bytes:
    """A whole HTTP response (status line, headers, body) with a problem document, for
    errors answered by the server rather than the app; the connection is closed after it."""
    code, detail = SERVER_PROBLEMS.get(status, ("http_error", reason.lower()))  # the app's code for any other status
    limits = {
        name: getattr(cfg, name, "the limit")
        for name in ("limit_request_line", "limit_request_fields", "limit_request_field_size")
    }
    body = json.dumps(
        {
            "type": "/problems/" + code,  # service.api.errors.PROBLEM_BASE: the catalogue's entry, on this service
            "title": reason,
            "status": status,
            "code": code,
            "detail": detail.format(**limits),
        }
    ).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/problem+json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "\r\n"
    )
    return head.encode("latin-1") + body

"""Following a match: its events since a version, a page at a time, and its live stream
(Server-Sent Events; how a stream works: ``service.live``)."""

from __future__ import annotations

import socket
import uuid

from flask import Blueprint, Response, request

from service.application.views import dumps, event_json
from service.cooperative import on_hangup
from service.live import Lagged

from . import metrics
from . import schemas as s
from .docs import operation
from .errors import Problem
from .http import PROBLEMS, app, asked_seat, bearer_token, is_number, with_etag

bp = Blueprint("streams", __name__)

LAST_EVENT_ID = {
    "name": "Last-Event-ID",
    "in": "header",
    "schema": {"type": "string", "pattern": "^[0-9]+$"},
    "description": "The id (seq) of the last event received: the stream resumes after it (instead of `after`).",
}


@bp.get("/matches/<match_id>/events")
@operation(
    summary="Events since a version, redacted for the caller, a page at a time",
    tags=["matches"],
    query=s.EventsQuerySchema,
    responses={200: s.EventsPageSchema, 422: s.ProblemSchema, **PROBLEMS},
    description=(
        "The events with seq above `after`, at most `limit` of them (default 500, at most 1000). When more "
        "follow, `next_after` says where the next page starts: pass it as `after`."
    ),
)
def get_events(match_id: uuid.UUID, query: dict):
    page = app().actions.events(bearer_token(), match_id, asked_seat(), query["after"], query["limit"])
    return with_etag(page.body, page.version)


@bp.get("/matches/<match_id>/stream")
@operation(
    summary="Live events as Server-Sent Events",
    tags=["matches"],
    query=s.StreamQuerySchema,
    headers=[LAST_EVENT_ID],
    responses={
        200: s.ServerSentEvents(s.EventSchema, "text/event-stream: one `event:` per match event (id = seq, data = the event JSON)"),
        429: s.ProblemSchema,
        **PROBLEMS,
    },
    content_type="text/event-stream",
    description=(
        "Sends the events after `after` (or the Last-Event-ID header), a long backlog in pieces of 500, then "
        "each new one as it is stored, with a `: keep-alive` comment after 15 seconds without one. The stream "
        "closes after `wait` seconds (default 30), when the match ends, or when the client falls more than 256 "
        "events behind; reconnect with Last-Event-ID, on any instance, to continue without a gap. A process "
        "holds at most 4 streams per seat token and 100 per client address at once (by default): beyond "
        "them, 429 `too_many_streams` with Retry-After. A browser's EventSource cannot send the Authorization "
        "header: read the stream with fetch, as the reference client does."
    ),
)
def stream(match_id: uuid.UUID, query: dict):
    live = app().streams.open(
        bearer_token(), match_id, asked_seat(), after=resume_after(query), seconds=query["wait"], address=request.remote_addr,
        render=sse_frame,
    )
    return serve(live)


FEED_LAST_EVENT_ID = {
    **LAST_EVENT_ID,
    "description": "The id of the last notification received: the stream resumes after it (instead of `after`).",
}


@bp.get("/players/me/stream")
@operation(
    summary="The calling player's notifications, live, as Server-Sent Events",
    tags=["players"],
    query=s.FeedStreamQuerySchema,
    headers=[FEED_LAST_EVENT_ID],
    responses={
        200: s.ServerSentEvents(
            s.NotificationSchema, "text/event-stream: one `event:` per notification (id = its id, event = its kind, data = its JSON)"
        ),
        401: s.ProblemSchema,
        403: s.ProblemSchema,
        422: s.ProblemSchema,
        429: s.ProblemSchema,
        503: s.ProblemSchema,
    },
    content_type="text/event-stream",
    description=(
        "One connection for every match of the player: sends the notifications after `after` (or the "
        "Last-Event-ID header) in pieces of 500, then each new one as it is stored, with a `: keep-alive` "
        "comment after 15 seconds without one. The stream closes after `wait` seconds (default 30) or when "
        "the client falls more than 256 notifications behind; reconnect with Last-Event-ID, on any instance, to "
        "continue without a gap (`GET /players/me/notifications` gives the same notifications in pages). The "
        "limits of `GET /matches/{id}/stream` apply, counted per player token: at most 4 streams per player "
        "and 100 per client address at once in a process (by default), beyond them 429 `too_many_streams`."
    ),
)
def feed_stream(query: dict):
    live = app().streams.open_feed(bearer_token(), after=resume_after(query), seconds=query["wait"], address=request.remote_addr, render=feed_frame)
    return serve(live)


def resume_after(query: dict) -> int:
    """Where a stream starts: after the Last-Event-ID header's id, else the query's ``after``."""
    last = request.headers.get("Last-Event-ID") or None
    if last is not None and not is_number(last):
        raise Problem(422, "invalid_request", "Last-Event-ID must be an event id (seq)", errors={"Last-Event-ID": ["not an event id"]})
    return int(last) if last is not None else query["after"]


def serve(live) -> Response:
    """A live stream as the response: its socket bounded, freed at once when the client hangs up."""
    sock = request.environ.get("gunicorn.socket")
    _bound_socket(sock)
    # A client that hangs up frees its place at once, not at the next heartbeat.
    response = Response(StreamBody(live.chunks, live.subscription, on_hangup(sock, live.subscription.hung_up)), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"  # nginx: pass events through at once
    return response


def feed_frame(notification, seat: int | None) -> bytes:
    """A notification as a Server-Sent Event: its id, its kind as the name."""
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (notification.seq, notification.type.encode(), dumps(notification.to_json()))


def sse_frame(stored, seat: int | None) -> bytes:
    """One event as a Server-Sent Event: its seq as the id, its type as the name."""
    return b"id: %d\nevent: %s\ndata: %s\n\n" % (stored.seq, stored.type.encode(), dumps(event_json(stored, seat)))


class StreamBody:
    """A stream's chunks; closing it (the server does, however the stream ends, even
    one never started) releases its place in the hub.  A follower too far behind
    gets a last comment saying so."""

    def __init__(self, chunks, sub, unwatch):
        self.chunks, self.sub, self.unwatch = chunks, sub, unwatch
        metrics.LIVE_STREAMS.inc()

    def __iter__(self):
        try:
            yield from self.chunks
        except Lagged:
            metrics.STREAMS_LAGGED.inc()
            yield b": too far behind: reconnect with Last-Event-ID\n\n"

    def close(self):
        if not self.sub.closed:
            metrics.LIVE_STREAMS.dec()
        self.unwatch()
        self.chunks.close()
        self.sub.close()


def _bound_socket(sock) -> None:
    """A stream's socket: a small send buffer, and a send timeout, so that a client
    that reads nothing costs bounded memory and is dropped after a while."""
    if sock is None:  # not under gunicorn (tests)
        return
    settings = app().settings
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, settings.stream_send_buffer_bytes)
        sock.settimeout(settings.stream_send_timeout_seconds)
    except OSError:
        pass

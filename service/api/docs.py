"""One decorator per route, which documents it for the OpenAPI document and parses it.

    @bp.post("/matches/<match_id>/join")
    @operation(summary=..., tags=["matches"], body=s.JoinSchema, responses={201: s.JoinedSchema})
    def join(match_id: uuid.UUID, body: dict): ...

The route gets what it declared, read in this order (so the first thing wrong with a
request is the one answered): a ``match_id`` in the path as a UUID (404
``match_not_found`` otherwise), the body loaded by its schema (``body=``; 415, 400 or
422), the query loaded by its schema (``query=``; 422).  ``seat_query=`` documents the
``?seat=`` a match's routes read when they find the caller's seat
(``service.api.http.asked_seat``), which no route refuses.  ``before`` runs first of
all (a cheap check, such as a rate, before the body is read); ``body_limit`` is the
largest body, in bytes, for a route taking more than the service's usual limit.

``auth`` says whether the route needs a token; which kinds of token it takes (a seat's,
a player's or a sign-in JWT, the operator's) is ``TOKENS``, by the view's name, held true
by ``tests/api/test_security.py``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from flask import request

from .http import json_body, parse_match_id, query_args

#: The kinds of token (the OpenAPI document's security schemes: service.api.openapi).
SEAT, PLAYER, JWT, OPERATOR, METRICS = "seat", "player", "jwt", "operator", "metrics"
#: A match's reads: the operator, a seat token of the match, a player holding one of its seats.
READS = (SEAT, PLAYER, JWT, OPERATOR)
#: A seat's own play (``Callers.seat_for_match``): the operator acts for no seat.
PLAYS = (SEAT, PLAYER, JWT)
#: A player's own things (``Callers.player``): a player token or a sign-in JWT.
PLAYER_ONLY = (PLAYER, JWT)
#: The token kinds each route takes, by its view's name (``auth=True``: one is needed; a
#: route without a token named here needs none).  A route whose token is optional (its
#: ``auth`` False) is listed under ``OPTIONAL_TOKENS``.
TOKENS: dict[str, tuple[str, ...]] = {
    "list_matches": READS, "get_match": READS, "get_events": READS, "stream": READS,
    "match_analysis": READS, "hand_analysis": READS, "audit_match": READS, "export_one": READS,
    "hands": READS, "hand": READS, "state_at": READS,
    "act": PLAYS, "rematch": PLAYS, "get_hint": PLAYS,
    "post_ticket": PLAYER_ONLY, "get_ticket": PLAYER_ONLY, "cancel_ticket": PLAYER_ONLY,
    "me": PLAYER_ONLY, "rename_me": PLAYER_ONLY, "delete_me": PLAYER_ONLY, "my_data": PLAYER_ONLY,
    "my_matches": PLAYER_ONLY, "my_notifications": PLAYER_ONLY, "feed_stream": PLAYER_ONLY,
    "export_many": (OPERATOR,), "delete_subject": (OPERATOR,),
    "list_webhooks": (OPERATOR,), "add_webhook": (OPERATOR,), "get_webhook": (OPERATOR,),
    "delete_webhook": (OPERATOR,), "webhook_deliveries": (OPERATOR,), "retry_delivery": (OPERATOR,),
}
#: Routes that take a token and need none: without one the caller is anonymous.  A player's
#: token (or a sign-in JWT) makes the match or the seat the player's; another valid token is
#: read as none; a token that is no valid one is 401.  The metrics need theirs only when the
#: operator set one (``GIN_RUMMY_METRICS_TOKEN``).
OPTIONAL_TOKENS: dict[str, tuple[str, ...]] = {
    "create_match": PLAYER_ONLY, "join": PLAYER_ONLY, "metrics": (METRICS,),
}


def operation(
    *,
    summary: str,
    tags: list[str],
    responses: dict[int, object],
    body: object | None = None,
    query: object | None = None,
    seat_query: object | None = None,
    headers: list[dict] | None = None,
    auth: bool = True,
    description: str | None = None,
    content_type: str = "application/json",
    before: Callable[[], None] | None = None,
    body_limit: int | None = None,
    body_name: str = "the body",
) -> Callable:
    """Describe and parse a view: its success and error responses (status -> schema or
    text), its request body and query schemas, extra headers, and whether it needs a token.

    Its examples (of the body, and of each success response at least) are captured from
    a real session, by operation id (the view's name): add a call of the view to
    ``session`` in ``tests/api/examples.py``, then ``python -m tests.api.examples --only
    NAME`` writes them to ``service/api/examples.json``."""

    def attach(view: Callable) -> Callable:
        @functools.wraps(view)
        def parsed(**kwargs: Any) -> Any:
            if before is not None:
                before()
            if "match_id" in kwargs:
                kwargs["match_id"] = parse_match_id(kwargs["match_id"])
            if body is not None:
                if body_limit is not None:
                    request.max_content_length = body_limit
                kwargs["body"] = json_body(body, body_name)
            if query is not None:
                kwargs["query"] = query_args(query)
            return view(**kwargs)

        parsed.__openapi__ = {  # type: ignore[attr-defined]
            "summary": summary,
            "tags": tags,
            "responses": responses,
            "body": body,
            "query": query if query is not None else seat_query,
            "headers": headers or [],
            "auth": auth,
            "tokens": TOKENS.get(view.__name__, ()) if auth else OPTIONAL_TOKENS.get(view.__name__, ()),
            "optional_token": not auth and view.__name__ in OPTIONAL_TOKENS,
            "description": description or (view.__doc__ or "").strip(),
            "content_type": content_type,
        }
        return parsed

    return attach

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
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from flask import request

from .http import json_body, parse_match_id, query_args


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
            "description": description or (view.__doc__ or "").strip(),
            "content_type": content_type,
        }
        return parsed

    return attach

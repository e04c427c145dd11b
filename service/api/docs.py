"""Operation metadata for the OpenAPI document, attached to each view function."""

from __future__ import annotations

from collections.abc import Callable


def operation(
    *,
    summary: str,
    tags: list[str],
    responses: dict[int, object],
    body: object | None = None,
    query: object | None = None,
    headers: list[dict] | None = None,
    auth: bool = True,
    description: str | None = None,
    content_type: str = "application/json",
) -> Callable:
    """Describe a view: its success and error responses (status -> schema or text),
    its request body and query schemas, extra headers, and whether it needs a token.

    Its examples (of the body, and of each success response at least) are captured from
    a real session, by operation id (the view's name): add a call of the view to
    ``session`` in ``tests/api/examples.py``, then ``python -m tests.api.examples --only
    NAME`` writes them to ``service/api/examples.json``."""

    def attach(view: Callable) -> Callable:
        view.__openapi__ = {
            "summary": summary,
            "tags": tags,
            "responses": responses,
            "body": body,
            "query": query,
            "headers": headers or [],
            "auth": auth,
            "description": description or (view.__doc__ or "").strip(),
            "content_type": content_type,
        }
        return view

    return attach

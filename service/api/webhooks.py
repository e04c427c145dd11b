"""Webhooks: the operator's endpoints and their delivery log (the operator token only)."""

from __future__ import annotations

import uuid

from flask import Blueprint

from service.application.webhooks import delivery_not_found, endpoint_not_found

from . import schemas as s
from .docs import operation
from .http import NO_STORE, app, bearer_token

bp = Blueprint("webhooks", __name__)

PROBLEMS = {401: s.ProblemSchema, 403: s.ProblemSchema}
OPERATOR = " The operator token only (403 `forbidden` for any other)."


def _endpoint_id(raw: str) -> uuid.UUID:
    try:
        return uuid.UUID(raw)
    except ValueError:
        raise endpoint_not_found(repr(raw)) from None


def _notification_id(raw: str) -> int:
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise delivery_not_found(f"of notification {raw!r}")
    return int(raw)


@bp.get("/webhooks")
@operation(
    summary="The webhook endpoints",
    tags=["webhooks"],
    responses={200: s.WebhookListSchema, **PROBLEMS},
    description="Every endpoint, from the settings and from this API, with its deliveries by state (never its secret)." + OPERATOR,
)
def list_webhooks():
    return s.shared(s.WebhookListSchema).dump({"items": app().webhooks.list(bearer_token())}), 200, NO_STORE


@bp.post("/webhooks")
@operation(
    summary="Add a webhook endpoint",
    tags=["webhooks"],
    body=s.WebhookSpecSchema,
    responses={201: s.WebhookCreatedSchema, 422: s.ProblemSchema, **PROBLEMS},
    description=(
        "From now on, every notification of the kinds named is sent to `url` as a Standard Webhooks POST: a JSON "
        "body `{type, timestamp, data}` (`data`: the notification as `GET /players/me/notifications` lists it, "
        "and its `player`), with the headers `webhook-id` (the same at every attempt: drop one you have seen), "
        "`webhook-timestamp` and `webhook-signature` (verify them with the `standardwebhooks` library and the "
        "secret). A 2xx answer delivers it; anything else is retried, first after 5 seconds, then twice as long "
        "each time (at most an hour apart), for 3 days (the service's settings may say otherwise). The answer "
        "shows the secret, this once." + OPERATOR
    ),
)
def add_webhook(body: dict):
    return s.shared(s.WebhookCreatedSchema).dump(app().webhooks.add(bearer_token(), body)), 201, NO_STORE


@bp.get("/webhooks/<endpoint_id>")
@operation(
    summary="A webhook endpoint",
    tags=["webhooks"],
    responses={200: s.WebhookSchema, 404: s.ProblemSchema, **PROBLEMS},
    description="The endpoint and its deliveries by state; 404 `webhook_not_found`." + OPERATOR,
)
def get_webhook(endpoint_id: str):
    return s.shared(s.WebhookSchema).dump(app().webhooks.get(bearer_token(), _endpoint_id(endpoint_id))), 200, NO_STORE


@bp.delete("/webhooks/<endpoint_id>")
@operation(
    summary="Remove a webhook endpoint",
    tags=["webhooks"],
    responses={200: s.WebhookSchema, 404: s.ProblemSchema, 409: s.ProblemSchema, **PROBLEMS},
    description=(
        "Nothing more is sent to it, and its delivery log goes; the answer is the endpoint as it was. An endpoint of the settings is 409 "
        "`webhook_from_settings`: change GIN_RUMMY_WEBHOOKS instead." + OPERATOR
    ),
)
def delete_webhook(endpoint_id: str):
    return s.shared(s.WebhookSchema).dump(app().webhooks.remove(bearer_token(), _endpoint_id(endpoint_id))), 200, NO_STORE


@bp.get("/webhooks/<endpoint_id>/deliveries")
@operation(
    summary="An endpoint's delivery log",
    tags=["webhooks"],
    query=s.DeliveriesQuerySchema,
    responses={200: s.DeliveryPageSchema, 404: s.ProblemSchema, 422: s.ProblemSchema, **PROBLEMS},
    description=(
        "Its deliveries, newest notification first: the state (`pending`, `delivered`, `failed`), the attempts, "
        "the last answer's status or error, when it is tried next, and the body. Delivered and failed ones are "
        "kept for 7 days (by default)." + OPERATOR
    ),
)
def webhook_deliveries(endpoint_id: str, query: dict):
    page = app().webhooks.deliveries(bearer_token(), _endpoint_id(endpoint_id), query.get("state"), query.get("before"), query["limit"])
    return s.shared(s.DeliveryPageSchema).dump({"items": page.items, "next_cursor": page.next_cursor}), 200, NO_STORE


@bp.post("/webhooks/<endpoint_id>/deliveries/<notification_id>/retry")
@operation(
    summary="Send a delivery again",
    tags=["webhooks"],
    responses={200: s.DeliverySchema, 404: s.ProblemSchema, **PROBLEMS},
    description=(
        "The delivery is pending again and sent at once (a failed one after the receiver was fixed, or one it "
        "lost), with the same `webhook-id`; 404 `delivery_not_found`." + OPERATOR
    ),
)
def retry_delivery(endpoint_id: str, notification_id: str):
    found = app().webhooks.redeliver(bearer_token(), _endpoint_id(endpoint_id), _notification_id(notification_id))
    return s.shared(s.DeliverySchema).dump(found), 200, NO_STORE

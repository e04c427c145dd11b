"""Webhooks: the operator's endpoints, and their delivery log."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from .common import Base
from .players import NOTIFICATION_KINDS, NotificationSchema

DELIVERY_STATES = ("pending", "delivered", "failed")
#: Deliveries per page of the log: by default, and at most.
DELIVERIES_PAGE = 50
DELIVERIES_PAGE_MAX = 500


class WebhookSpecSchema(Base):
    url = fields.String(
        required=True, validate=validate.Length(1, 2000),
        metadata={"description": "The receiver: http:// or https:// and a host. Redirects are not followed.", "example": "https://push.example.com/gin-rummy"},
    )
    kinds = fields.List(
        fields.String(validate=validate.OneOf(NOTIFICATION_KINDS)),
        metadata={"description": "The kinds of notification it is sent (default: every kind)."},
    )
    secret = fields.String(
        metadata={"description": "Its signing secret, `whsec_` and the base64 of 24 to 64 random bytes (default: one is made, and shown in this answer only)."},
    )
    description = fields.String(load_default="", validate=validate.Length(0, 200), metadata={"description": "A note for the operator."})


class WebhookCountsSchema(Schema):
    pending = fields.Integer(required=True, metadata={"description": "Deliveries still to make (due, or waiting to be retried)."})
    delivered = fields.Integer(required=True, metadata={"description": "Deliveries the receiver answered 2xx, in the log."})
    failed = fields.Integer(required=True, metadata={"description": "Deliveries given up after the retries' period, in the log."})
    oldest_pending = fields.String(allow_none=True, required=True, metadata={"description": "When the oldest pending delivery's notification was made (null: none pending)."})


class WebhookSchema(Schema):
    id = fields.String(required=True)
    url = fields.String(required=True)
    kinds = fields.List(fields.String(validate=validate.OneOf(NOTIFICATION_KINDS)), required=True)
    origin = fields.String(
        required=True, validate=validate.OneOf(["settings", "operator"]),
        metadata={"description": "settings: named by GIN_RUMMY_WEBHOOKS (changed there only); operator: added through this API."},
    )
    description = fields.String(required=True)
    created_at = fields.String(required=True, metadata={"description": "When it was added: it is sent the notifications made from then on."})
    deliveries = fields.Nested(WebhookCountsSchema, required=True)


class WebhookCreatedSchema(WebhookSchema):
    secret = fields.String(required=True, metadata={"description": "The signing secret: shown in this answer only."})


class WebhookListSchema(Schema):
    items = fields.List(fields.Nested(WebhookSchema), required=True)


class WebhookPayloadDataSchema(NotificationSchema):
    player = fields.String(required=True, metadata={"description": "The player the notification is for."})


class WebhookPayloadSchema(Schema):
    type = fields.String(required=True, validate=validate.OneOf(NOTIFICATION_KINDS), metadata={"description": "The notification's kind."})
    timestamp = fields.String(required=True, metadata={"description": "When the notification was made."})
    data = fields.Nested(WebhookPayloadDataSchema, required=True)


class DeliverySchema(Schema):
    webhook_id = fields.String(required=True, metadata={"description": "The `webhook-id` header sent, the same at every attempt.", "example": "notification_2097152"})
    notification = fields.String(required=True, metadata={"description": "The notification's id."})
    kind = fields.String(required=True, validate=validate.OneOf(NOTIFICATION_KINDS))
    state = fields.String(required=True, validate=validate.OneOf(DELIVERY_STATES))
    attempts = fields.Integer(required=True)
    created_at = fields.String(required=True, metadata={"description": "When the notification was made."})
    last_attempt_at = fields.String(allow_none=True, required=True)
    last_status = fields.Integer(allow_none=True, required=True, metadata={"description": "The last attempt's HTTP status (null: no answer)."})
    last_error = fields.String(allow_none=True, required=True, metadata={"description": "Why the last attempt did not deliver (null: it did, or none yet)."})
    next_attempt_at = fields.String(allow_none=True, required=True, metadata={"description": "Pending: when it is tried next."})
    finished_at = fields.String(allow_none=True, required=True, metadata={"description": "When it was delivered or failed."})
    payload = fields.Nested(WebhookPayloadSchema, required=True, metadata={"description": "The body sent."})


class DeliveriesQuerySchema(Base):
    state = fields.String(validate=validate.OneOf(DELIVERY_STATES), metadata={"description": "Only deliveries in this state."})
    before = fields.Integer(validate=validate.Range(0), metadata={"description": "Only those of notifications older than this (a page's `next_cursor`)."})
    limit = fields.Integer(
        load_default=DELIVERIES_PAGE, validate=validate.Range(1, DELIVERIES_PAGE_MAX),
        metadata={"description": f"Page size, 1 to {DELIVERIES_PAGE_MAX} (default {DELIVERIES_PAGE})."},
    )


class DeliveryPageSchema(Schema):
    items = fields.List(fields.Nested(DeliverySchema), required=True)
    next_cursor = fields.String(allow_none=True, required=True, metadata={"description": "Pass it as `before` for older ones (null: no more)."})

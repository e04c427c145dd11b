"""Webhooks: the operator's endpoints, and an outbox of deliveries to them.

- ``webhook_endpoints``: where notifications are sent (``url``), signed with
  ``secret`` (Standard Webhooks, ``whsec_`` and base64), which ``kinds`` of
  notification, whether the settings or the operator API made it (``origin``), and
  since when (``created_at``: an endpoint is sent the notifications of the events
  stored after it was added, never the history).
- ``webhook_deliveries``: the outbox, one row per endpoint and notification, written in
  the transaction that stores the notification (service/feed.py), so that a
  notification made is a delivery owed, once, whatever restarts: the key is
  (``endpoint_id``, ``notification_id``).  It holds the body to send (``payload``) and
  its state: ``pending`` (tried at ``next_attempt_at``), ``delivered`` or ``failed``
  (the retries' period ran out), with the attempts made and the last one's answer.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-02
"""

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE webhook_endpoints (
            id          uuid        PRIMARY KEY,
            url         text        NOT NULL,
            secret      text        NOT NULL,
            kinds       text[]      NOT NULL,
            origin      text        NOT NULL CHECK (origin IN ('settings', 'operator')),
            description text        NOT NULL DEFAULT '',
            created_at  timestamptz NOT NULL DEFAULT now()
        );

        CREATE TABLE webhook_deliveries (
            endpoint_id     uuid        NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
            notification_id bigint      NOT NULL,
            kind            text        NOT NULL,
            payload         jsonb       NOT NULL,
            created_at      timestamptz NOT NULL,
            state           text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
            attempts        integer     NOT NULL DEFAULT 0,
            next_attempt_at timestamptz NOT NULL DEFAULT now(),
            last_attempt_at timestamptz,
            last_status     integer,
            last_error      text,
            finished_at     timestamptz,
            PRIMARY KEY (endpoint_id, notification_id)
        );
        CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
        CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE state <> 'pending';
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE webhook_deliveries; DROP TABLE webhook_endpoints;")

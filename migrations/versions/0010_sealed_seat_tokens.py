"""A join or a rematch sent with an Idempotency-Key can be answered again with its token.

- ``idempotency_keys.sealed_token``: the seat token a join or a rematch gave, sealed
  (XORed with an HMAC of the service's retry secret and the record's match, scope and
  key: ``service.application.retries``).  It goes with its record, purged after a day.
- ``service_secrets``: secrets the service makes itself when none is configured, kept
  once for every process: ``retry`` seals those tokens unless GIN_RUMMY_RETRY_SECRET is set.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01
"""

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        ALTER TABLE idempotency_keys ADD COLUMN sealed_token bytea;
        CREATE TABLE service_secrets (
            name       text        PRIMARY KEY,
            secret     bytea       NOT NULL,
            created_at timestamptz NOT NULL DEFAULT statement_timestamp()
        );
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DROP TABLE service_secrets;
        ALTER TABLE idempotency_keys DROP COLUMN sealed_token;
        """
    )

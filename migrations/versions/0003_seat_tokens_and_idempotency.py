"""What security and idempotency need: seat token hashes and idempotency records.

Kept out of events on purpose: event data is exported, secrets never are.

Revision ID: 0003
Revises: 0002
Create Date: 2025-01-01
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        -- Only a hash of each seat's token is kept; the token is shown once, at creation.
        CREATE TABLE seat_tokens (
            match_id   uuid        NOT NULL,
            seat       smallint    NOT NULL CHECK (seat IN (0, 1)),
            token_hash text        NOT NULL,
            created_at timestamptz NOT NULL DEFAULT statement_timestamp(),
            PRIMARY KEY (match_id, seat),
            UNIQUE (match_id, token_hash)
        );

        -- The answer to a request sent with an Idempotency-Key, so that a retry gets
        -- the same answer instead of acting twice.  'scope' says who sent it (a seat);
        -- 'fingerprint' tells a retry from a different request reusing the key.
        CREATE TABLE idempotency_keys (
            match_id    uuid        NOT NULL,
            scope       text        NOT NULL,
            key         text        NOT NULL,
            fingerprint text        NOT NULL,
            status      integer     NOT NULL,
            body        jsonb,
            created_at  timestamptz NOT NULL DEFAULT statement_timestamp(),
            PRIMARY KEY (match_id, scope, key)
        );
        CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DROP TABLE idempotency_keys;
        DROP TABLE seat_tokens;
        """
    )

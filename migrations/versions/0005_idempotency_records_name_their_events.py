"""An Idempotency-Key's record names the events its request caused.

``idempotency_keys.first_seq`` / ``last_seq``: the events a request caused.  The answer
to a retry is rebuilt from them (the view at ``last_seq`` and those events are exactly
what the first answer held), so the answer itself is no longer stored with every
action; records written before keep their ``body``.  Downgrading deletes the records
without a body (a retry of those requests within the day then acts anew or is refused
as stale).

``idempotency_keys_age`` becomes a BRIN index: the records are written in time order,
so a few summary pages serve the hourly purge, where a B-tree cost every action an
index entry (and its share of the write-ahead log).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01
"""

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        ALTER TABLE idempotency_keys ADD COLUMN first_seq integer, ADD COLUMN last_seq integer;
        ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_answer
            CHECK (body IS NOT NULL OR (first_seq > 0 AND last_seq >= first_seq));
        DROP INDEX idempotency_keys_age;
        CREATE INDEX idempotency_keys_age ON idempotency_keys USING brin (created_at);
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DROP INDEX idempotency_keys_age;
        CREATE INDEX idempotency_keys_age ON idempotency_keys (created_at);
        DELETE FROM idempotency_keys WHERE body IS NULL;
        ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_answer;
        ALTER TABLE idempotency_keys DROP COLUMN first_seq, DROP COLUMN last_seq;
        """
    )

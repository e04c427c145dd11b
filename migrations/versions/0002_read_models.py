"""Read models and caches: match summaries and state snapshots.

Both are derived from events: ``gin-rummy projections rebuild`` recreates the summaries,
and deleting snapshots changes no loaded state.

Revision ID: 0002
Revises: 0001
Create Date: 2025-01-01
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE match_summaries (
            match_id    uuid        PRIMARY KEY,
            status      text        NOT NULL CHECK (status IN ('active', 'finished')),
            preset      text        NOT NULL,
            seats       jsonb       NOT NULL,
            scores      integer[]   NOT NULL,
            hand_number integer     NOT NULL,
            winner      integer,
            version     integer     NOT NULL,
            created_at  timestamptz NOT NULL,
            updated_at  timestamptz NOT NULL
        );
        CREATE INDEX match_summaries_listing ON match_summaries (status, created_at DESC, match_id);
        CREATE INDEX match_summaries_recent ON match_summaries (created_at DESC, match_id);

        -- A folded state at a version (taken when a hand is dealt), so that a load
        -- folds only the current hand.  'format' names the engine's state layout;
        -- snapshots of another layout are ignored.
        CREATE TABLE snapshots (
            match_id   uuid        NOT NULL,
            version    integer     NOT NULL,
            format     text        NOT NULL,
            state      jsonb       NOT NULL,
            created_at timestamptz NOT NULL DEFAULT statement_timestamp(),
            PRIMARY KEY (match_id, version)
        );
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DROP TABLE snapshots;
        DROP TABLE match_summaries;
        """
    )

"""Match summaries read their version and last change time from the events.

Writing them into the row made every append update the row, just to count; the last
event of the match says both (one index probe when reading a summary).  Downgrading
fills the columns back from the events.

Revision ID: 0004
Revises: 0003
Create Date: 2025-01-02
"""

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        ALTER TABLE match_summaries DROP COLUMN version, DROP COLUMN updated_at;
        """
    )


def downgrade() -> None:
    op.execute(
        """
        ALTER TABLE match_summaries ADD COLUMN version integer, ADD COLUMN updated_at timestamptz;
        UPDATE match_summaries s SET version = last.seq, updated_at = last.recorded_at
        FROM (
            SELECT DISTINCT ON (match_id) match_id, seq, recorded_at FROM events ORDER BY match_id, seq DESC
        ) last
        WHERE last.match_id = s.match_id;
        ALTER TABLE match_summaries ALTER COLUMN version SET NOT NULL, ALTER COLUMN updated_at SET NOT NULL;
        """
    )

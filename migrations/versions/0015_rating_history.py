"""Rating history: each rated match's change of each player's rating.

``rating_history`` is folded with the ratings (service/ratings.py), a row per player
and rated match end (``position``: the ``match_ended`` event's), with the rating before
and after it, the opponent and the result.  The ratings are folded again from the
events on the next read (``player_ratings`` and ``rated_opponents`` emptied, their
cursor forgotten), which gives the same ratings and fills the history of every match
played so far.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02
"""

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE rating_history (
            player_id     uuid             NOT NULL,
            position      bigint           NOT NULL,
            match_id      uuid             NOT NULL,
            opponent_id   uuid             NOT NULL,
            result        text             NOT NULL CHECK (result IN ('won', 'lost', 'draw')),
            rating_before double precision NOT NULL,
            rating        double precision NOT NULL,
            deviation     double precision NOT NULL,
            volatility    double precision NOT NULL,
            rated_at      timestamptz      NOT NULL,
            PRIMARY KEY (player_id, position)
        );
        DELETE FROM player_ratings;
        DELETE FROM rated_opponents;
        DELETE FROM projection_cursors WHERE name = 'ratings';
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE rating_history")

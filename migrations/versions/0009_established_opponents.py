"""The ratings' established opponents, and the ratings folded again under the rules of
what is rated (service/ratings.py).

- ``rated_opponents``: for each player, each opponent of a rated match who was
  established then (deviation at most 110 before the match): the leaderboard lists a
  player with enough distinct ones.  Part of the ratings projection.
- A match is rated only when both seats made a move of their own; the ratings folded
  before this revision counted matches resigned before any card was played, so the
  projection starts again from nothing (its next catch-up folds every match end).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01
"""

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE rated_opponents (
            player_id   uuid NOT NULL,
            opponent_id uuid NOT NULL,
            PRIMARY KEY (player_id, opponent_id)
        );
        DELETE FROM player_ratings;
        DELETE FROM projection_cursors WHERE name = 'ratings';
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DROP TABLE rated_opponents;
        DELETE FROM player_ratings;
        DELETE FROM projection_cursors WHERE name = 'ratings';
        """
    )

"""What limits by cost keep, and the analyses every worker shares.

- ``rate_buckets``: one token bucket per limited scope and key (a keyed hash of a client
  address, a player, a seat): ``tokens`` left at ``at``, refilled at the scope's rate
  when next taken from. Every worker process and instance counts in the same bucket.
  No secret is kept: an address is hashed, a player or a seat is named by its id.
- ``hand_analyses``: the coach's analysis of a hand that is over, one row per seat: the
  decisions of that seat, each weighed from what that seat knew (its view), by the
  analyser of ``analyser`` (the computer's version). Only hands that are over are kept,
  whose cards every seat may see; a hand being played is analysed anew and never kept.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE rate_buckets (
            scope  text             NOT NULL,
            key    text             NOT NULL,
            tokens double precision NOT NULL,
            at     timestamptz      NOT NULL DEFAULT statement_timestamp(),
            PRIMARY KEY (scope, key)
        );
        CREATE INDEX rate_buckets_at ON rate_buckets (at);

        CREATE TABLE hand_analyses (
            match_id  uuid     NOT NULL,
            hand      integer  NOT NULL CHECK (hand >= 1),
            analyser  text     NOT NULL,
            seat      smallint NOT NULL CHECK (seat IN (0, 1)),
            decisions jsonb    NOT NULL,
            PRIMARY KEY (match_id, hand, analyser, seat)
        );
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DROP TABLE hand_analyses;
        DROP TABLE rate_buckets;
        """
    )

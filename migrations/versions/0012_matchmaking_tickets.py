"""Matchmaking tickets: a player's wish to be paired, one row each.

- ``matchmaking_tickets``: who asks (``player_id``), for which kind of match (``kind``:
  live or correspondence), what it accepts (``fit``: a hash of the kind, the rules as
  played and whether it is rated, the same for every ticket that fits it), the
  player's rating when it asked, when it asked and when it was last polled, and how it ended (``status``:
  waiting, paired, cancelled or lapsed).  A paired ticket names its match and seat and
  keeps its seat token sealed (``sealed_token``, see service/application/matchmaking.py)
  so that its owner can read it.  A ticket is a row with a clear owner, not an event:
  the match it leads to is the events.
- At most one waiting ticket per player and kind (a partial unique index): a second one
  is refused, and two requests racing cannot both make one.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02
"""

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE matchmaking_tickets (
            id           uuid             PRIMARY KEY,
            player_id    uuid             NOT NULL REFERENCES players (id),
            kind         text             NOT NULL CHECK (kind IN ('live', 'correspondence')),
            fit          text             NOT NULL,
            spec         jsonb            NOT NULL,
            rating       double precision NOT NULL,
            status       text             NOT NULL DEFAULT 'waiting'
                                          CHECK (status IN ('waiting', 'paired', 'cancelled', 'lapsed')),
            created_at   timestamptz      NOT NULL,
            polled_at    timestamptz      NOT NULL,
            ended_at     timestamptz,
            match_id     uuid,
            seat         smallint         CHECK (seat IN (0, 1)),
            sealed_token bytea,
            CHECK ((status = 'paired') = (match_id IS NOT NULL))
        );
        CREATE UNIQUE INDEX matchmaking_one_waiting_ticket
            ON matchmaking_tickets (player_id, kind) WHERE status = 'waiting';
        -- The pairing's search: from a rating outwards, among the tickets of the same
        -- choices (service/store/matchmaking.py, FITTING).
        CREATE INDEX matchmaking_waiting_by_rating
            ON matchmaking_tickets (fit, rating) WHERE status = 'waiting';
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE matchmaking_tickets;")

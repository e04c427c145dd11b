"""Players: identities that outlive a match, the seats they hold, and their ratings.

- ``players``: a guest (who holds a player token: only its hash is kept) or a person
  signed in by the front end's own identity provider (``subject``: the token's issuer
  and subject), and the name shown.
- ``match_players``: the seats bound to a player, as the events say (``match_started``
  and ``seat_joined`` name the player); a read model, rebuilt from the events.
- ``player_ratings``: each player's Glicko-2 rating, deviation and volatility, rated
  matches and wins: a read model folded from the ``match_ended`` events in the global
  order, ``projection_cursors`` holding how far it has read.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE players (
            id         uuid        PRIMARY KEY,
            name       text        NOT NULL,
            token_hash text        UNIQUE,
            subject    text        UNIQUE,
            created_at timestamptz NOT NULL DEFAULT statement_timestamp(),
            CHECK ((token_hash IS NULL) <> (subject IS NULL))
        );

        CREATE TABLE match_players (
            match_id  uuid     NOT NULL,
            seat      smallint NOT NULL CHECK (seat IN (0, 1)),
            player_id uuid     NOT NULL,
            PRIMARY KEY (match_id, seat)
        );
        CREATE INDEX match_players_player ON match_players (player_id, match_id);

        CREATE TABLE player_ratings (
            player_id  uuid    PRIMARY KEY,
            rating     float8  NOT NULL,
            deviation  float8  NOT NULL,
            volatility float8  NOT NULL,
            matches    integer NOT NULL,
            wins       integer NOT NULL
        );
        CREATE INDEX player_ratings_board ON player_ratings (rating DESC, player_id);

        CREATE TABLE projection_cursors (
            name     text   PRIMARY KEY,
            position bigint NOT NULL
        );
        -- The ratings projection reads match ends in the global order.
        CREATE INDEX events_match_ends ON events (tx, position) WHERE type = 'match_ended';
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DROP INDEX events_match_ends;
        DROP TABLE projection_cursors;
        DROP TABLE player_ratings;
        DROP TABLE match_players;
        DROP TABLE players;
        """
    )

"""Online play: invites and the lobby, rematches, who is connected, matches that wait.

- ``match_invites``: the hash of a match's invite code (never the code) and whether the
  match is public (listed in the lobby, joined without a code).  Kept out of events:
  the code is a secret, like a seat token.
- ``rematches``: the match a finished one is played again as.  Its key makes two seats
  asking at once get the same new match.
- ``live_followers``: which seats of which matches have a live stream open, and on which
  process; a process refreshes its rows while they last, so the rows of a process that
  died age out.
- ``match_summaries``: a match waiting for a player has the status ``waiting``, and a
  finished one says how it ended (``end_reason``).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE match_invites (
            match_id   uuid        PRIMARY KEY,
            code_hash  text        NOT NULL,
            public     boolean     NOT NULL,
            created_at timestamptz NOT NULL DEFAULT statement_timestamp()
        );
        CREATE INDEX match_invites_lobby ON match_invites (created_at DESC, match_id) WHERE public;

        CREATE TABLE rematches (
            match_id    uuid        PRIMARY KEY,
            rematch_id  uuid        NOT NULL UNIQUE,
            created_at  timestamptz NOT NULL DEFAULT statement_timestamp()
        );

        CREATE TABLE live_followers (
            match_id   uuid        NOT NULL,
            seat       smallint    NOT NULL CHECK (seat IN (0, 1)),
            process    text        NOT NULL,
            seen_at    timestamptz NOT NULL DEFAULT statement_timestamp(),
            PRIMARY KEY (match_id, seat, process)
        );
        CREATE INDEX live_followers_process ON live_followers (process);

        ALTER TABLE match_summaries DROP CONSTRAINT match_summaries_status_check;
        ALTER TABLE match_summaries ADD CONSTRAINT match_summaries_status_check
            CHECK (status IN ('waiting', 'active', 'finished'));
        ALTER TABLE match_summaries ADD COLUMN end_reason text;
        """
    )


def downgrade() -> None:
    op.execute(
        """
        ALTER TABLE match_summaries DROP COLUMN end_reason;
        UPDATE match_summaries SET status = 'active' WHERE status = 'waiting';
        ALTER TABLE match_summaries DROP CONSTRAINT match_summaries_status_check;
        ALTER TABLE match_summaries ADD CONSTRAINT match_summaries_status_check
            CHECK (status IN ('active', 'finished'));
        DROP TABLE live_followers;
        DROP TABLE rematches;
        DROP TABLE match_invites;
        """
    )

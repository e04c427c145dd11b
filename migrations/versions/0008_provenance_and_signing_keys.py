"""Where a match came from, and the keys its records are signed with.

- ``match_provenance``: one row per match made from now on: played here, or imported
  (with what its import could check: the signature of the record, and whether the
  computer's moves were made again by the same version of the computer and found as
  recorded).  Matches made before this revision have none: played here, computer
  version unknown.
- ``signing_keys``: the Ed25519 keys this service signs exports with, when it makes
  its own (none is configured); the newest one not retired signs, and every one is
  published so that older exports stay verifiable.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE match_provenance (
            match_id       uuid        PRIMARY KEY,
            origin         text        NOT NULL CHECK (origin IN ('played', 'imported')),
            bots_version   text,
            computer_moves text        CHECK (computer_moves IN ('verified', 'unverified')),
            signature      jsonb,
            recorded_at    timestamptz NOT NULL DEFAULT statement_timestamp()
        );

        CREATE TABLE signing_keys (
            key_id      text        PRIMARY KEY,
            private_key bytea       NOT NULL,
            created_at  timestamptz NOT NULL DEFAULT statement_timestamp(),
            retired_at  timestamptz
        );
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DROP TABLE signing_keys;
        DROP TABLE match_provenance;
        """
    )

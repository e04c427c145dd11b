"""Erasure: the seats of players who deleted themselves.

``erased_seats`` names, for each seat a deleted player held, the pseudonym every
surface shows instead of the name (``pseudonym``, stable per seat) and the id that
stands for the player from then on (``pseudonym_id``, one per deleted player, linked to
nothing), and whether the player was signed in by the identity provider (under
``GIN_RUMMY_RATED_PLAYERS=signed-in`` their stand-in's matches stay rated).  The events
are never changed: ``match_started`` and ``seat_joined`` are read
through it (service/store/erasure.py).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02
"""

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE erased_seats (
            match_id     uuid        NOT NULL,
            seat         smallint    NOT NULL CHECK (seat IN (0, 1)),
            pseudonym    text        NOT NULL,
            pseudonym_id uuid        NOT NULL,
            signed_in    boolean     NOT NULL DEFAULT false,
            erased_at    timestamptz NOT NULL DEFAULT statement_timestamp(),
            PRIMARY KEY (match_id, seat)
        );
        CREATE INDEX erased_seats_pseudonym ON erased_seats (pseudonym_id);
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE erased_seats")

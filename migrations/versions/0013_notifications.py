"""Notifications: one feed per player, and whose move each match waits for.

- ``notifications``: a read model folded from the events in the global order (cursor
  ``notifications`` in ``projection_cursors``; service/feed.py): ``your_move``,
  ``match_found``, ``invite_accepted``, ``rematch_offered``, ``match_ended``, each
  keyed by the event that caused it (``source``, its position) and its player; and
  ``reminder``, written by a periodic sweep (``source`` NULL, ``key`` unique: one per
  turn).  ``id`` orders a player's feed (the client's cursor).  The rebuild deletes and
  folds again every row but the reminders, with the same ids.
- ``match_turns``: the seat each match waits for, its player (NULL: nobody, or a seat
  no player holds), its deadline and clock, and the event that gave it the turn
  (``source``), folded with the notifications: "My games" lists the caller's turns
  first, and the sweep finds the deadlines near.
- ``rematches.offered_seat``: the seat, in the rematch, of the player who asked for it
  (NULL for rematches made before this revision).
- The feeds start at this revision: ``projection_cursors`` ``notifications`` (and
  ``notifications-start``, where a rebuild starts again) at the last event stored, so
  the events before it notify nobody.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02
"""

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE notifications (
            id         bigint      PRIMARY KEY,
            player_id  uuid        NOT NULL,
            kind       text        NOT NULL CHECK (kind IN (
                'your_move', 'match_found', 'invite_accepted', 'rematch_offered', 'match_ended', 'reminder')),
            match_id   uuid        NOT NULL,
            data       jsonb       NOT NULL,
            source     bigint,
            key        text        UNIQUE,
            created_at timestamptz NOT NULL,
            CHECK ((source IS NULL) = (kind = 'reminder'))
        );
        CREATE INDEX notifications_feed ON notifications (player_id, id);
        CREATE INDEX notifications_match ON notifications (match_id, id);

        CREATE TABLE match_turns (
            match_id     uuid        PRIMARY KEY,
            seat         smallint    CHECK (seat IN (0, 1)),
            player_id    uuid,
            deadline     timestamptz,
            turn_seconds integer,
            source       bigint      NOT NULL
        );
        CREATE INDEX match_turns_player ON match_turns (player_id) WHERE player_id IS NOT NULL;
        CREATE INDEX match_turns_deadline ON match_turns (deadline) WHERE deadline IS NOT NULL;

        ALTER TABLE rematches ADD COLUMN offered_seat smallint CHECK (offered_seat IN (0, 1));

        -- The feeds start now: the events stored before this revision notify nobody (a
        -- player is not sent the whole history), and a rebuild starts here again.
        INSERT INTO projection_cursors (name, position)
        SELECT name, last.position FROM (SELECT position FROM events ORDER BY tx DESC, position DESC LIMIT 1) last,
            (VALUES ('notifications'), ('notifications-start')) AS cursors (name);
        """
    )


def downgrade() -> None:
    op.execute(
        """
        ALTER TABLE rematches DROP COLUMN offered_seat;
        DROP TABLE match_turns;
        DROP TABLE notifications;
        DELETE FROM projection_cursors WHERE name IN ('notifications', 'notifications-start', 'notification-bucket');
        """
    )

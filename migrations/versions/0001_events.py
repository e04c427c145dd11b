"""The events table: append-only, one stream per match, a global order for readers.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE events (
            match_id       uuid        NOT NULL,
            seq            integer     NOT NULL CHECK (seq > 0),
            type           text        NOT NULL,
            schema_version integer     NOT NULL CHECK (schema_version > 0),
            data           jsonb       NOT NULL,
            actor          text,
            recorded_at    timestamptz NOT NULL DEFAULT statement_timestamp(),
            -- The global position: unique and increasing in the order positions are
            -- drawn, which is not the order of commits.
            position       bigint      GENERATED ALWAYS AS IDENTITY,
            -- The writing transaction: catch-up readers order by (tx, position) and stop
            -- below the oldest transaction still running (see service/store/events.py).
            tx             xid8        NOT NULL DEFAULT pg_current_xact_id(),
            PRIMARY KEY (match_id, seq)
        );
        CREATE UNIQUE INDEX events_position ON events (position);
        CREATE INDEX events_feed ON events (tx, position);

        CREATE FUNCTION refuse_event_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'events are append-only: % refused', TG_OP
                USING ERRCODE = 'restrict_violation';
        END
        $$;
        CREATE TRIGGER events_append_only
            BEFORE UPDATE OR DELETE OR TRUNCATE ON events
            FOR EACH STATEMENT EXECUTE FUNCTION refuse_event_change();
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DROP TABLE events;
        DROP FUNCTION refuse_event_change();
        """
    )

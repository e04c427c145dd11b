"""A player who deletes themselves: their name and their link to their matches erased,
in an append-only store.

The events are never updated (the append-only trigger stays), so a deleted player's
name stays in the rows of ``match_started`` and ``seat_joined`` that named it.  What
changes is how those two events are read: every read of an event's data goes through
``overlay`` (service/store/events.py), which replaces, for each seat in
``erased_seats``, the ``name`` by the seat's pseudonym ("Deleted player" and four hex
digits, drawn once for that seat) and the ``player`` by the pseudonym id (one per
deleted player, drawn at the deletion, linked to nothing).  So every surface built on
the events (views, event feeds and streams, exports and their signatures, audits,
hands, the summaries and bindings rebuilt from them) shows the pseudonym; a record
exported afterwards holds the pseudonym, and its digest and signature are made over
what it holds, so it verifies.

The deletion (``erase``), in one transaction:

- ``erased_seats``: a row per seat the player holds (``match_players``);
- the read models keyed by the player are moved to the pseudonym id (the bindings, the
  rating, its opponents and history), so that the opponents' ratings stand, and a
  rebuild from the events gives the same rows again; the feeds tell an erased seat
  nothing (service/feed.py skips it), so whose move a match waits for names nobody;
- the player's own rows go: the player (its name, its token's hash, its sign-in
  subject), its notifications and webhook deliveries, its matchmaking tickets, the seat
  tokens of its seats; the opponents' notifications and pending deliveries name the
  pseudonym instead;
- what was derived from the events with the name in it is scrubbed: the matches'
  snapshots and summaries (their seat erased as the overlay erases it), the stored
  answers of Idempotency-Keys (answered again from the events, or forgotten).

What it cannot reach: a record exported before the deletion (it is out of the
service's hands) and the database's backups until they expire.
"""

from __future__ import annotations

import logging
import secrets
import threading
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

log = logging.getLogger(__name__)

#: Every process forgets what it keeps of the matches named on this channel.
CHANNEL = "gin_rummy_erasures"
#: Match ids per notification (a payload holds at most 8000 bytes).
PER_NOTE = 200

#: The events that name a seat's player.
NAMING = frozenset({"match_started", "seat_joined"})
PSEUDONYM = "Deleted player"


def pseudonym() -> str:
    return f"{PSEUDONYM} {secrets.token_hex(2)}"


def erased_of(conn, match_id: uuid.UUID) -> dict[int, tuple[str, str]]:
    """The match's erased seats: seat -> (pseudonym, pseudonym id)."""
    rows = conn.execute("SELECT seat, pseudonym, pseudonym_id FROM erased_seats WHERE match_id = %s", (match_id,)).fetchall()
    return {seat: (name, str(pid)) for seat, name, pid in rows}


def overlay(conn, match_id: uuid.UUID, event_type: str, data: Mapping[str, Any]) -> Any:
    """``data`` of an event as every surface reads it: the erased seats' names and
    players replaced (only ``match_started`` and ``seat_joined`` name them)."""
    if event_type not in NAMING:
        return data
    erased = erased_of(conn, match_id)
    if not erased:
        return data
    if event_type == "seat_joined":
        if data["seat"] not in erased:
            return data
        name, pid = erased[data["seat"]]
        return {**data, "name": name, **({"player": pid} if "player" in data else {})}
    seats = [dict(seat) for seat in data["seats"]]
    for seat, (name, pid) in erased.items():
        if seat < len(seats) and seats[seat].get("kind") == "human":
            seats[seat]["name"] = name
            if "player" in seats[seat]:
                seats[seat]["player"] = pid
    return {**data, "seats": seats}


def erase(conn, player_id: uuid.UUID) -> list[uuid.UUID]:
    """In ``conn``'s transaction: erase the player (see the module's doc); the matches
    whose seats it held."""
    stand_in = uuid.uuid4()
    seats = conn.execute(
        "SELECT match_id, seat FROM match_players WHERE player_id = %s ORDER BY match_id, seat", (player_id,)
    ).fetchall()
    matches = list(dict.fromkeys(match_id for match_id, _ in seats))
    row = conn.execute("SELECT subject IS NOT NULL FROM players WHERE id = %s", (player_id,)).fetchone()
    signed_in = bool(row and row[0])
    for match_id, seat in seats:
        conn.execute(
            "INSERT INTO erased_seats (match_id, seat, pseudonym, pseudonym_id, signed_in) VALUES (%s, %s, %s, %s, %s)"
            " ON CONFLICT DO NOTHING",
            (match_id, seat, pseudonym(), stand_in, signed_in),
        )
    moved = {"match_players": ["player_id"], "player_ratings": ["player_id"], "rated_opponents": ["player_id", "opponent_id"],
             "rating_history": ["player_id", "opponent_id"]}
    for table, columns in moved.items():
        for column in columns:
            conn.execute(f"UPDATE {table} SET {column} = %s WHERE {column} = %s", (stand_in, player_id))
    for match_id, seat in seats:
        name, _ = erased_of(conn, match_id)[seat]
        # The opponent's notifications and pending deliveries that named the player.
        conn.execute(
            "UPDATE notifications SET data = jsonb_set(data, '{opponent}', %s) WHERE match_id = %s AND data ? 'opponent'"
            " AND (data->>'seat')::int <> %s",
            (Jsonb(name), match_id, seat),
        )
        conn.execute(
            "UPDATE webhook_deliveries SET payload = jsonb_set(payload, '{data,opponent}', %s)"
            " WHERE payload->'data'->>'match' = %s AND payload->'data' ? 'opponent' AND (payload->'data'->>'seat')::int <> %s",
            (Jsonb(name), str(match_id), seat),
        )
        conn.execute(
            "UPDATE match_summaries SET seats = jsonb_set(jsonb_set(seats, %s, %s), %s, %s)"
            " WHERE match_id = %s AND seats->%s ? 'name'",
            ([str(seat), "name"], Jsonb(name), [str(seat), "player"], Jsonb(str(stand_in)), match_id, seat),
        )
        # Snapshots are states folded from the events: their seat is erased the same way.
        conn.execute(
            "UPDATE snapshots SET state = jsonb_set(state, %s, %s) WHERE match_id = %s AND state->'seats'->%s ? 'name'",
            (["seats", str(seat), "name"], Jsonb(name), match_id, seat),
        )
        conn.execute(
            "UPDATE snapshots SET state = jsonb_set(state, %s, %s) WHERE match_id = %s AND state->'seats'->%s ? 'player'",
            (["seats", str(seat), "player"], Jsonb(str(stand_in)), match_id, seat),
        )
        conn.execute("DELETE FROM seat_tokens WHERE match_id = %s AND seat = %s", (match_id, seat))
    conn.execute("UPDATE match_turns SET player_id = NULL WHERE player_id = %s", (player_id,))  # as the feeds fold it now
    conn.execute("DELETE FROM notifications WHERE player_id = %s", (player_id,))
    conn.execute("DELETE FROM webhook_deliveries WHERE payload->'data'->>'player' = %s", (str(player_id),))
    conn.execute("DELETE FROM matchmaking_tickets WHERE player_id = %s", (player_id,))
    conn.execute("UPDATE idempotency_keys SET body = NULL WHERE match_id = ANY(%s) AND first_seq IS NOT NULL", (matches,))
    conn.execute("DELETE FROM idempotency_keys WHERE match_id = ANY(%s) AND body IS NOT NULL", (matches,))
    conn.execute("DELETE FROM players WHERE id = %s", (player_id,))
    # Sent at the commit: every process forgets its tokens and what it keeps of these matches.
    for start in range(0, max(len(matches), 1), PER_NOTE):
        conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, ",".join(str(m) for m in matches[start:start + PER_NOTE])))
    return matches


def listen(conninfo: str, forget: Callable[[set[uuid.UUID] | None], None], retry_seconds: float = 1.0) -> threading.Event:
    """Call ``forget`` with the matches of each erasure announced, in a daemon thread;
    with None (everything) after a reconnection, since announcements may have been
    missed meanwhile.  Set the returned event to stop."""
    stop = threading.Event()

    def run() -> None:
        while not stop.is_set():
            try:
                with psycopg.connect(conninfo, autocommit=True, connect_timeout=5) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    forget(None)
                    while not stop.is_set():
                        for note in conn.notifies(timeout=5.0):
                            forget({uuid.UUID(part) for part in note.payload.split(",") if part})
                        conn.execute("SELECT 1")
            except psycopg.Error as exc:
                log.warning("erasures: lost the LISTEN connection (%s); reconnecting", type(exc).__name__)
            except Exception:
                log.exception("erasures: forgetting failed")
            stop.wait(retry_seconds)

    threading.Thread(target=run, name="erasure-listener", daemon=True).start()
    return stop

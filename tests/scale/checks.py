"""What must hold of the database after load and faults, whatever happened.

- every match's events are seq 1..N without a gap;
- every match's summary row equals what a fold of its events says, and every
  snapshot equals the fold of the events up to its version;
- (with a ledger) the seqs the clients were answered cover each stream exactly once:
  the creation's, then one applied Idempotency-Key per action, whose stored answer is
  the one the client got; a refused race left no key behind.
"""

from __future__ import annotations

from collections import defaultdict
from uuid import UUID

import psycopg

from service.application.views import status_of
from service.engine import State, fold
from service.store import SNAPSHOT_FORMAT
from service.store.events import COLUMNS, stored_events
from service.store.summaries import SELECT_SUMMARIES, MatchSummary

from .client import Ledger


def streams(conn) -> dict[UUID, list]:
    """Every match's stored events (upcast), in seq order."""
    by_match: dict[UUID, list] = defaultdict(list)
    rows = conn.execute(f"SELECT {COLUMNS} FROM events ORDER BY match_id, seq")
    for event in stored_events(conn, rows):
        by_match[event.match_id].append(event)
    return by_match


def check_gapless(conn) -> tuple[int, int]:
    """Returns (matches, events)."""
    bad = conn.execute(
        "SELECT match_id, min(seq), max(seq), count(*) FROM events GROUP BY match_id"
        " HAVING min(seq) <> 1 OR max(seq) <> count(*)"
    ).fetchall()
    assert not bad, f"streams with gaps: {bad[:5]}"
    return conn.execute("SELECT count(DISTINCT match_id), count(*) FROM events").fetchone()


def check_summaries_and_snapshots(conn, events_by_match: dict[UUID, list]) -> int:
    """Every summary row equals the fold of its match's events; returns the snapshots checked."""
    summaries = {}
    for row in conn.execute(SELECT_SUMMARIES).fetchall():
        summaries[row[0]] = MatchSummary(*row)
    assert set(summaries) == set(events_by_match), (
        f"summaries without events: {set(summaries) - set(events_by_match)}; "
        f"events without summary: {set(events_by_match) - set(summaries)}"
    )
    folded: dict[UUID, State] = {}
    for match_id, stream in events_by_match.items():
        state = fold([e.event for e in stream])
        folded[match_id] = state
        row = summaries[match_id]
        expected = {
            "status": status_of(state),
            "preset": state.rules.preset,
            "seats": list(stream[0].data["seats"]),
            "scores": list(state.scores),
            "hand_number": state.hand_number,
            "winner": state.winner,
            "version": state.version,
            "created_at": stream[0].recorded_at,
            "updated_at": stream[-1].recorded_at,
        }
        actual = {name: getattr(row, name) for name in expected}
        assert actual == expected, f"summary of {match_id} differs from the fold of its events:\n{actual}\n{expected}"

    snapshots = 0
    rows = conn.execute("SELECT match_id, version, format, state FROM snapshots ORDER BY match_id, version").fetchall()
    for match_id, version, fmt, data in rows:
        if fmt != SNAPSHOT_FORMAT:
            continue
        stream = events_by_match[match_id]
        assert version <= len(stream), f"snapshot of {match_id} at {version} is past its events ({len(stream)})"
        expected = fold([e.event for e in stream[:version]])
        assert State.from_json(data).to_json() == expected.to_json(), f"snapshot {match_id}@{version} is not the fold"
        snapshots += 1
    return snapshots


def check_ledger(conn, ledger: Ledger, events_by_match: dict[UUID, list]) -> None:
    """The clients' answers against the streams and the idempotency records."""
    keys_by_match: dict[UUID, dict[str, tuple]] = defaultdict(dict)
    for match_id, scope, key, status, first, last in conn.execute(
        "SELECT match_id, scope, key, status, first_seq, last_seq FROM idempotency_keys"
    ).fetchall():
        keys_by_match[match_id][key] = (scope, status, tuple(range(first, last + 1)))

    for record in ledger.matches.values():
        mid = UUID(record.id)
        stream = events_by_match.get(mid, [])
        n = len(stream)
        assert n >= record.final_version, f"{record.id}: the clients saw version {record.final_version}, stored {n}"
        owner = [None] * (n + 1)
        for seq in range(1, record.created_version + 1):
            owner[seq] = "creation"
            assert stream[seq - 1].actor == "system"
        for key, applied in record.applied.items():
            for seq in applied.seqs:
                assert 1 <= seq <= n, f"{record.id}: answer of {key} holds seq {seq}, the stream has {n}"
                assert owner[seq] is None, f"{record.id}: seq {seq} answered to both {owner[seq]} and {key}"
                owner[seq] = key
            assert stream[applied.seqs[0] - 1].actor == f"seat:{applied.seat}"
            # The events a seat is answered are its redacted view of the stored ones.
            assert [e["type"] for e in applied.body["events"]] == [stream[s - 1].type for s in applied.seqs]
        missing = [seq for seq in range(1, n + 1) if owner[seq] is None]
        assert not missing, f"{record.id}: seqs {missing[:10]} were never answered to a client"

        stored_keys = keys_by_match.get(mid, {})
        assert set(stored_keys) == set(record.applied), (
            f"{record.id}: stored keys {set(stored_keys) ^ set(record.applied)} differ from the applied ones"
        )
        assert not (record.refused_keys & set(stored_keys)), f"{record.id}: a refused race left its key"
        for key, applied in record.applied.items():
            scope, status, seqs = stored_keys[key]
            assert (scope, status) == (f"seat:{applied.seat}", 200)
            # The record names the events of the answer the client got (a retry's
            # answer is rebuilt from them, and the clients compare it with the first).
            assert seqs == applied.seqs, f"{record.id}: the record of {key} names seqs {seqs}, not {applied.seqs}"


def check_all(url: str, ledger: Ledger | None = None) -> dict[str, int]:
    """All the checks; returns what was checked."""
    with psycopg.connect(url, autocommit=True) as conn:
        with conn.transaction():  # one snapshot of the database for all the checks
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            matches, events = check_gapless(conn)
            by_match = streams(conn)
            snapshots = check_summaries_and_snapshots(conn, by_match)
            if ledger is not None:
                check_ledger(conn, ledger, by_match)
    return {"matches": matches, "events": events, "snapshots": snapshots}

"""The match record: a versioned JSON document holding a whole match.

    {
      "format": "gin-rummy-match-record", "format_version": 1,
      "match_id": "...",
      "rules": {...}, "seats": [{"seat": 0, "name": ..., "kind": ..., "level": ...}, ...],
      "events": [{"seq": 1, "type": ..., "schema_version": ..., "recorded_at": ..., "data": {...}}, ...],
      "result": {"status": ..., "hands": ..., "scores": [..], "winner": ...},
      "digest": {"algorithm": "sha256", "value": "..."}
    }

The digest is SHA-256 over the canonical event list: a JSON array of
``{"data", "schema_version", "seq", "type"}`` objects, keys sorted, no spaces
(``separators=(",", ":")``), UTF-8.  ``recorded_at`` is server metadata and is not
covered.  The full JSON Schema is ``openapi/match-record.schema.json``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from service.engine import State
from service.engine.game import WAITING

FORMAT = "gin-rummy-match-record"
FORMAT_VERSION = 1


def canonical_events(events: Sequence[Mapping[str, Any]]) -> bytes:
    body = [
        {"seq": e["seq"], "type": e["type"], "schema_version": e["schema_version"], "data": e["data"]} for e in events
    ]
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest_of(events: Sequence[Mapping[str, Any]]) -> str:
    return hashlib.sha256(canonical_events(events)).hexdigest()


def record_seats(state: State) -> list[dict]:
    """Seats as a record shows them: names, kinds, levels, the player holding a seat (by
    id) — never tokens."""
    return [
        {"seat": i, "name": s.get("name"), "kind": s.get("kind"), "level": s.get("level"),
         **({"player": s["player"]} if "player" in s else {})}
        for i, s in enumerate(state.seats)
    ]


def result_of(state: State) -> dict:
    return {
        "status": "finished" if state.finished else "waiting" if state.phase == WAITING else "active",
        "hands": state.hand_number,
        "scores": list(state.scores),
        "winner": state.winner,
    }


def event_json(seq: int, etype: str, schema_version: int, data: dict, recorded_at: datetime | str) -> dict:
    if isinstance(recorded_at, datetime):
        recorded_at = recorded_at.isoformat()
    return {"seq": seq, "type": etype, "schema_version": schema_version, "recorded_at": recorded_at, "data": data}


def build_record(match_id: str, state: State, events: Sequence[Mapping[str, Any]]) -> dict:
    """The record of a match from its folded state and its stored events (as JSON).

    A pure function of the match: exporting twice gives the same document."""
    assert state.rules is not None, "a stored match begins with match_started, which sets the rules"
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "match_id": str(match_id),
        "rules": state.rules.to_json(),
        "seats": record_seats(state),
        "events": list(events),
        "result": result_of(state),
        "digest": {"algorithm": "sha256", "value": digest_of(events)},
    }

"""Where a match came from (``match_provenance``).

A match made here is ``played``, with the version of the computer that played its
computer seats; an imported one is ``imported``, with what the import could check:
the record's signature (``{"status": "verified" | "unknown_key" | "unsigned", "key_id",
"signer"}``) and the computer's moves (``verified``: made again by the same version and
found as recorded; ``unverified``: the record names another version, or none).
A match made before provenance was kept has no row: played here, computer version
unknown.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple
from uuid import UUID

from psycopg.types.json import Jsonb


class Provenance(NamedTuple):
    origin: str
    bots_version: str | None
    computer_moves: str | None
    signature: dict | None
    recorded_at: datetime | None

    def to_json(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "bots_version": self.bots_version,
            "computer_moves": self.computer_moves,
            "signature": self.signature,
            "at": self.recorded_at.isoformat() if self.recorded_at is not None else None,
        }


#: A match made before provenance was kept.
UNKNOWN = Provenance("played", None, None, None, None)


def save(conn, match_id: UUID, provenance: Provenance) -> None:
    conn.execute(
        "INSERT INTO match_provenance (match_id, origin, bots_version, computer_moves, signature)"
        " VALUES (%s, %s, %s, %s, %s)",
        (
            match_id, provenance.origin, provenance.bots_version, provenance.computer_moves,
            Jsonb(provenance.signature) if provenance.signature is not None else None,
        ),
    )


def provenance_of(conn, match_id: UUID) -> Provenance:
    row = conn.execute(
        "SELECT origin, bots_version, computer_moves, signature, recorded_at FROM match_provenance WHERE match_id = %s",
        (match_id,),
    ).fetchone()
    return Provenance(*row) if row else UNKNOWN

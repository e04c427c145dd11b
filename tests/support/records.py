"""Records between services: a service that trusts another's signatures."""

from __future__ import annotations

import json
from pathlib import Path

from service.application import Application
from service.settings import Settings
from service.store import EventStore


def jwks_file(store: EventStore, folder: Path) -> str:
    """A file holding the public keys of the service on ``store`` (its JWKS), for another
    service's TRUSTED_JWKS: records that service signed then verify, and keep their id."""
    path = folder / f"jwks-{id(store)}.json"
    path.write_text(json.dumps(Application.build(Settings(), store=store).signer.jwks()))
    return str(path)

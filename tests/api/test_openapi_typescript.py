"""A typed TypeScript client made from the OpenAPI document alone: openapi-typescript
generates the types, and tsc type-checks a program using them with openapi-fetch
(``tests/typescript/client.ts``: it creates a match, posts an action, and reads a match
record's events by their type).  The npm project is ``tests/typescript`` (``npm ci``
there; ``.ci/run`` does it); without node and npm, or with the project not installed,
the test is skipped with the reason."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from service.api import create_app
from service.api.openapi import spec_dict
from service.store import EventStore

PROJECT = Path(__file__).resolve().parents[1] / "typescript"
TOOLS = PROJECT / "node_modules" / ".bin"


def run(*command) -> subprocess.CompletedProcess:
    done = subprocess.run([str(part) for part in command], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"{Path(str(command[0])).name} failed:\n{done.stdout}\n{done.stderr}"
    return done


def test_a_typescript_client_generated_from_the_document_type_checks(tmp_path):
    if not (shutil.which("node") and shutil.which("npm")):
        pytest.skip("node and npm are not installed: the generated TypeScript client is not checked")
    if not ((TOOLS / "openapi-typescript").exists() and (TOOLS / "tsc").exists()):
        pytest.skip(f"the npm project is not installed: run `npm ci` in {PROJECT} (.ci/run does)")
    document = tmp_path / "openapi.json"
    document.write_text(json.dumps(spec_dict(create_app({"STORE": EventStore(pool=None)}))))
    work = tmp_path / "client"
    (work / "generated").mkdir(parents=True)
    for name in ("client.ts", "tsconfig.json"):
        shutil.copy(PROJECT / name, work / name)
    (work / "node_modules").symlink_to(PROJECT / "node_modules")
    # --default-non-nullable false: a request field with a default (CreateMatch's public)
    # may be left out; by default openapi-typescript makes every such field required.
    generated = run(
        TOOLS / "openapi-typescript", document, "--default-non-nullable", "false", "--output", work / "generated" / "schema.d.ts"
    )
    assert "⚠" not in generated.stdout + generated.stderr, generated.stdout + generated.stderr
    types = (work / "generated" / "schema.d.ts").read_text()
    assert "MatchRecordEvent" in types and "data: components[\"schemas\"][\"MatchRecordCardDrawn\"]" in types
    run(TOOLS / "tsc", "--noEmit", "-p", work)

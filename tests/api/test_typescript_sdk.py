"""The TypeScript SDK (``openapi/clients/typescript``, the npm package ``@gin-rummy/client``)
in step with the OpenAPI document, and working against the service as served.

- Its version is the document's ``info.version`` (package.json and package-lock.json).
- Its committed ``src/schema.d.ts`` is what openapi-typescript makes of the document now
  (``npm run check``; ``npm run generate`` regenerates it).
- Its tests (``npm test``: a build, a type-check of a program using it, then
  ``node --test``; run in a copy of its sources) pass against ``gin-rummy serve`` on the
  session's database: a hand
  played to its end by both seats, followed live (every event once, in order, resumed
  with Last-Event-ID after an abort and after a dropped connection), a 409, a 412, a
  retry under the same Idempotency-Key.

The npm project is installed by ``npm ci`` there (``.ci/run`` does); without node and npm,
or with the project not installed, the tests that need them are skipped with the reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.scale.cluster import Instance, tail

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "openapi" / "clients" / "typescript"
DOCUMENT = ROOT / "openapi" / "openapi.yaml"
TOOLS = SDK / "node_modules" / ".bin"
#: The instance plays whole matches at machine speed: no rate limits.
UNLIMITED = {
    "GIN_RUMMY_RATE_LIMIT_PER_TOKEN": "off",
    "GIN_RUMMY_RATE_LIMIT_PER_ADDRESS": "off",
    "GIN_RUMMY_STREAMS_PER_ADDRESS": "off",
}


def missing_tools() -> str | None:
    """Why the SDK's npm project cannot run here, or None."""
    if not (shutil.which("node") and shutil.which("npm")):
        return "node and npm are not installed: the TypeScript SDK is not built nor tested"
    if not ((TOOLS / "tsc").exists() and (TOOLS / "openapi-typescript").exists() and (SDK / "node_modules" / "openapi-fetch").exists()):
        return f"the SDK's npm project is not installed: run `npm ci` in {SDK.relative_to(ROOT)} (.ci/run does)"
    return None


needs_npm = pytest.mark.skipif(missing_tools() is not None, reason=missing_tools() or "")


def npm(*args: str, cwd: Path = SDK, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["npm", *args], cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout, check=False,
    )


def copy_of_the_sdk(where: Path) -> Path:
    """The SDK's sources in ``where``, its installed node_modules linked: ``npm test`` builds
    there, never in the working tree (where another run may be building at the same time)."""
    copy = where / "typescript"
    shutil.copytree(SDK, copy, ignore=shutil.ignore_patterns("node_modules", "dist", "*.tgz"))
    (copy / "node_modules").symlink_to(SDK / "node_modules")
    return copy


def test_the_sdks_version_is_the_documents():
    version = yaml.safe_load(DOCUMENT.read_text())["info"]["version"]
    package = json.loads((SDK / "package.json").read_text())
    lock = json.loads((SDK / "package-lock.json").read_text())
    assert package["name"] == "@gin-rummy/client"
    assert (package["version"], lock["version"], lock["packages"][""]["version"]) == (version, version, version), (
        f"set the SDK's version to the document's {version}: `npm version {version} --no-git-tag-version` in {SDK.relative_to(ROOT)}"
    )


def test_the_sdk_has_one_runtime_dependency_and_builds_from_its_lockfile():
    package = json.loads((SDK / "package.json").read_text())
    assert list(package["dependencies"]) == ["openapi-fetch"]
    lock = json.loads((SDK / "package-lock.json").read_text())
    assert lock["packages"][""]["dependencies"] == package["dependencies"]
    assert lock["packages"][""]["devDependencies"] == package["devDependencies"]


@needs_npm
def test_the_committed_schema_is_what_the_document_generates():
    done = npm("run", "--silent", "check", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


@needs_npm
def test_the_sdks_tests_pass_against_the_served_service(database_url, tmp_path):
    sdk = copy_of_the_sdk(tmp_path)
    instance = Instance("sdk", tmp_path, database_url, workers=2, env=UNLIMITED)
    instance.start()
    try:
        instance.wait_ready()
        done = npm("test", cwd=sdk, env={"GIN_RUMMY_TEST_URL": f"http://127.0.0.1:{instance.port}"})
    finally:
        instance.stop()
    report = done.stdout + done.stderr
    failed = "\n".join(re.findall(r"^\s*not ok .*?^\s*\.\.\.$", report, re.M | re.S))
    assert done.returncode == 0, f"{failed or report[-6000:]}\n--- the service's log ---\n{tail(instance.log)}"
    # node --test's summary (its TAP reporter's, or its spec reporter's on a terminal).
    counts = {name: int(n) for name, n in re.findall(r"^(?:#|ℹ) (tests|pass|fail|skipped|cancelled) (\d+)$", report, re.M)}
    assert counts["fail"] == counts["cancelled"] == counts["skipped"] == 0, report[-3000:]
    assert counts["pass"] == counts["tests"] >= 15, report[-3000:]

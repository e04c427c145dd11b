"""The house rules of the code: the layers hold, modules stay small, every setting is told.

- The layers contract in ``pyproject.toml`` passes ``lint-imports``, and a copy of the
  service with one import running back up fails it (so the contract can fail).
- No Python module of the service is over ``MAX_MODULE_LINES`` lines, no function of
  the web client over ``MAX_JS_FUNCTION_LINES``.
- The README's configuration table names exactly the environment variables of
  ``service.settings.Settings``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from service.settings import Settings, SettingsError

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
MAX_MODULE_LINES = 500
MAX_JS_FUNCTION_LINES = 150


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=120, check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(cwd)},
    )


needs_linter = pytest.mark.skipif(not LINT_IMPORTS.exists(), reason="import-linter is not installed (the test extra has it)")


@needs_linter
def test_the_layers_contract_holds():
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


@needs_linter
@pytest.mark.parametrize(
    ("module", "line"),
    [
        ("service/store/online.py", "from service.application import views"),  # the store reaching up
        ("service/records/format.py", "def late():\n    from service.application import tokens"),  # hidden in a function
        ("service/coach/analysis.py", "from service.records import replay"),  # a sibling of its layer
    ],
)
def test_an_import_running_back_up_breaks_the_contract(tmp_path, module, line):
    shutil.copytree(ROOT / "service", tmp_path / "service", ignore=shutil.ignore_patterns("web", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / module
    target.write_text(target.read_text() + "\n\n" + line + "\n")
    done = lint_imports(tmp_path)
    assert done.returncode != 0 and "BROKEN" in done.stdout, done.stdout[-2000:]


def test_no_module_below_the_api_imports_the_api_or_the_application():
    below = {
        "service.api": ["application", "coach", "records", "live.py", "ratings.py", "bots", "store", "engine"],
        "service.application": ["coach", "records", "live.py", "ratings.py", "bots", "store", "engine"],
    }
    found = []
    for upper, places in below.items():
        pattern = re.compile(rf"^\s*(from|import) {re.escape(upper)}\b", re.M)
        for place in places:
            for path in sorted((ROOT / "service" / place).rglob("*.py")) if not place.endswith(".py") else [ROOT / "service" / place]:
                if pattern.search(path.read_text()):
                    found.append(f"{path.relative_to(ROOT)} imports {upper}")
    assert not found


def test_no_python_module_of_the_service_is_longer_than_the_bound():
    long = {
        str(path.relative_to(ROOT)): count
        for path in sorted((ROOT / "service").rglob("*.py"))
        if (count := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long


def js_functions(text: str) -> list[tuple[str, int]]:
    """(name, lines) of each function of a JavaScript module: from the line that opens
    it to the line of its closing brace (strings, templates and comments are skipped
    when the braces are matched)."""
    opening = re.compile(r"(?:function\s+(\w+)\s*\([^)]*\)\s*\{|(?:const|let)\s+(\w+)\s*=\s*(?:async\s*)?\([^)]*\)\s*=>\s*\{)")
    found = []
    for match in opening.finditer(text):
        depth, i, quote = 0, match.end() - 1, None
        while i < len(text):
            c = text[i]
            if quote:
                if c == "\\":
                    i += 1
                elif c == quote:
                    quote = None
            elif c in "\"'`":
                quote = c
            elif text.startswith("//", i):
                i = text.find("\n", i)
                if i < 0:
                    break
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        lines = text.count("\n", match.start(), i) + 1
        found.append((match.group(1) or match.group(2), lines))
    return found


def test_js_functions_are_counted_from_their_opening_to_their_closing_brace():
    text = "function a(x) {\n  const s = '}';\n  if (x) {\n    return `{`;\n  }\n}\nconst b = () => {\n  // }\n};\n"
    assert js_functions(text) == [("a", 6), ("b", 3)]


def test_no_function_of_the_web_client_is_longer_than_the_bound():
    long = {
        f"{path.name}:{name}": lines
        for path in sorted((ROOT / "service" / "web").glob("*.js"))
        for name, lines in js_functions(path.read_text())
        if lines > MAX_JS_FUNCTION_LINES
    }
    assert not long


def readme_variables() -> set[str]:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Configuration") :]
    table = section[section.index("| variable |") : section.index("\n\n", section.index("| variable |"))]
    first_cells = [row.split("|")[1] for row in table.splitlines()[2:]]
    return set(re.findall(r"`([A-Z][A-Z0-9_]+)`", "\n".join(first_cells)))


def test_the_readme_configuration_table_names_every_setting_and_nothing_else():
    assert readme_variables() == set(Settings.variables())


def test_a_setting_is_read_from_its_variable_with_its_type_and_refused_by_name():
    settings = Settings.from_env({"GIN_RUMMY_TRUSTED_PROXIES": "2", "GIN_RUMMY_STREAMS_PER_TOKEN": "off",
                                  "GIN_RUMMY_CORS_ORIGINS": "https://a.example, https://b.example"})
    assert settings.trusted_proxies == 2 and settings.streams_per_token is None
    assert settings.cors_origins == ("https://a.example", "https://b.example")
    assert Settings.from_env({}).streams_per_token == 4 and Settings.from_env({}).operator_token is None
    assert Settings.from_env({}, operator_token="secret").operator_token == "secret"
    with pytest.raises(SettingsError, match="GIN_RUMMY_TRUSTED_PROXIES"):
        Settings.from_env({"GIN_RUMMY_TRUSTED_PROXIES": "two"})
    with pytest.raises(SettingsError, match="GIN_RUMMY_RATE_LIMIT_PER_TOKEN"):
        Settings.from_env({"GIN_RUMMY_RATE_LIMIT_PER_TOKEN": "fast"})

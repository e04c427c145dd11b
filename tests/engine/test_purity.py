"""The engine imports nothing outside the standard library and itself."""

import ast
import sys
from pathlib import Path

import service.engine

ENGINE = Path(service.engine.__file__).parent


def test_engine_imports_only_the_standard_library_and_itself():
    outside = set()
    for path in ENGINE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level > 0:
                    continue  # relative: the engine itself
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top != "__future__":
                    outside.add(f"{path.name}: {name}")
    assert not outside, outside
    assert len(list(ENGINE.glob("*.py"))) >= 8  # the check really read the package

"""Plugins and examples import runiq through its faces only, and only the names a face exports.

The faces: ``runiq.rag`` (applications), ``runiq.rag.providers`` (provider authors), ``runiq.rag.testing``
(contract kits), and ``runiq.hosting``, ``runiq.errors``, ``runiq.logging``, ``runiq.secrets``,
``runiq.settings``, ``runiq.plugins``, ``runiq.cli.toolkit``. Every other ``runiq`` module is an
implementation detail a core refactor may change; an installed plugin must not depend on it.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import runiq.rag

ROOT = Path(__file__).resolve().parents[1]
FACES = (
    "runiq.rag",
    "runiq.rag.providers",
    "runiq.rag.testing",
    "runiq.hosting",
    "runiq.errors",
    "runiq.logging",
    "runiq.secrets",
    "runiq.settings",
    "runiq.plugins",
    "runiq.cli.toolkit",
)


def _sources() -> list[Path]:
    """Every non-test module of the plugin packages and the examples."""
    files = [*ROOT.glob("plugins/*/runiq_*/**/*.py"), *ROOT.glob("examples/**/*.py")]
    return sorted(path for path in files if "tests" not in path.relative_to(ROOT).parts)


def _runiq_imports(tree: ast.AST) -> Iterator[tuple[int, str, str | None]]:
    """(line, module, name) for each ``runiq`` import; name is None for ``import runiq.x``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            if node.module == "runiq" or node.module.startswith("runiq."):
                yield from ((node.lineno, node.module, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "runiq" or alias.name.startswith("runiq."):
                    yield node.lineno, alias.name, None


def boundary_violations(path: Path, source: str) -> list[str]:
    """What ``source`` imports from runiq outside the faces or their ``__all__``."""
    found = []
    for line, module, name in _runiq_imports(ast.parse(source)):
        where = f"{path}:{line}"
        if module not in FACES:
            found.append(f"{where}: {module} is not a public face")
        elif name is not None and name not in importlib.import_module(module).__all__:
            found.append(f"{where}: {module} does not export {name}")
    return found


def test_the_scan_sees_every_plugin_and_the_examples() -> None:
    """The glob finds each plugin package and the example applications (a moved tree fails here)."""
    scanned = {path.relative_to(ROOT).parts[1] for path in _sources()}
    plugins = {path.name for path in (ROOT / "plugins").iterdir() if path.is_dir()}
    assert plugins <= scanned
    assert {"corporate-documents", "example-plugin"} <= scanned


def test_plugins_and_examples_import_only_the_faces() -> None:
    """No plugin or example module reaches past a face into runiq's implementation modules."""
    violations = [
        problem for path in _sources() for problem in boundary_violations(path.relative_to(ROOT), path.read_text())
    ]
    assert violations == []


@pytest.mark.parametrize(
    ("source", "problem"),
    [
        ("from runiq.rag._stores.base import validate_top_k", "runiq.rag._stores.base is not a public face"),
        ("import runiq.rag._lexical", "runiq.rag._lexical is not a public face"),
        ("def f():\n    from runiq.plugins.host import PluginHost", "runiq.plugins.host is not a public face"),
        ("from runiq.rag import RagChunk", "runiq.rag does not export RagChunk"),
        ("from runiq.rag.providers import add_runiq_rag", "runiq.rag.providers does not export add_runiq_rag"),
    ],
)
def test_a_deep_import_or_an_unexported_name_is_reported(source: str, problem: str) -> None:
    """The checker itself: a deep module, even inside a function, and a name the face does not export."""
    assert boundary_violations(Path("p.py"), source) == [f"p.py:{source.count(chr(10)) + 1}: {problem}"]


def test_face_names_pass() -> None:
    """Names each face exports, and a plain ``import`` of a face, are accepted."""
    source = "import runiq.errors\nfrom runiq.rag import RagQuery\nfrom runiq.rag.providers import scoring, hookimpl"
    assert boundary_violations(Path("p.py"), source) == []


def test_runiq_rag_has_no_public_implementation_module() -> None:
    """Under runiq.rag only the faces have public names; implementation modules are ``_``-prefixed (as in
    httpx), so a new module is private unless it is made a face here and in the docs on purpose."""
    public = {info.name for info in pkgutil.iter_modules(runiq.rag.__path__) if not info.name.startswith("_")}
    assert public == {"providers", "testing"}

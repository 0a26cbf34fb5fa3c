"""Every distribution declares exactly what its code imports: no unused dependency, no undeclared import.

Imports are read with ``ast`` from the shipped packages (tests excluded); a requirement's import names come
from the installed distributions' top-level modules, so no hand-kept name mapping can go stale.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# Requirements that do their job without being imported, and why.
IMPORTED_BY_NAME_ONLY = {
    "pytest-asyncio": "the pytest plugin that runs the contract suites' async tests (runiq[testing])",
}
# Imports a distribution makes only when another distribution is installed, and where.
OPTIONAL_IMPORTS: dict[tuple[str, str], str] = {}


def imported_modules(packages: list[Path]) -> set[str]:
    """Top-level names of every absolute import in the packages' sources, the standard library left out."""
    names: set[str] = set()
    for package in packages:
        for source in package.rglob("*.py"):
            for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names.update(alias.name.partition(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module.partition(".")[0])
    return names - set(sys.stdlib_module_names)


@cache
def _modules_of() -> dict[str, frozenset[str]]:
    """Installed distribution (canonical name) -> its top-level modules; one scan of the environment."""
    modules: dict[str, set[str]] = defaultdict(set)
    for module, distributions in packages_distributions().items():
        for distribution in distributions:
            modules[canonicalize_name(distribution)].add(module)
    return {distribution: frozenset(names) for distribution, names in modules.items()}


def _requirements(meta: dict[str, object]) -> list[Requirement]:
    extras: dict[str, list[str]] = meta.get("optional-dependencies", {})  # type: ignore[assignment]
    lines: list[str] = [*meta.get("dependencies", []), *(line for group in extras.values() for line in group)]  # type: ignore[misc]
    return [Requirement(line) for line in lines]


def dependency_problems(packages: list[Path], meta: dict[str, object]) -> list[str]:
    """Declared requirements nothing imports, and imports of distributions nothing declares."""
    name = canonicalize_name(str(meta["name"]))
    modules_of = _modules_of()
    imported = imported_modules(packages) - {package.name for package in packages}
    declared = {canonicalize_name(r.name) for r in _requirements(meta)}
    problems = []
    for requirement in sorted(declared - set(IMPORTED_BY_NAME_ONLY)):
        modules = modules_of.get(requirement, frozenset())
        if not modules:
            problems.append(f"{requirement} is declared but not installed, so its modules are unknown")
        elif not modules & imported:
            problems.append(f"{requirement} is declared but never imported")
    providers = {module: {d for d, mods in modules_of.items() if module in mods} for module in imported}
    for module, distributions in sorted(providers.items()):
        optional = {d for d in distributions if (name, d) in OPTIONAL_IMPORTS}
        if not distributions & declared and not optional:
            problems.append(f"imports {module} ({', '.join(sorted(distributions)) or 'not installed'}) undeclared")
    return problems


def test_every_distribution_declares_exactly_what_it_imports(check_wheels: ModuleType) -> None:
    problems = {}
    for project in check_wheels.projects():
        meta = check_wheels.pyproject(project)["project"]
        problems[meta["name"]] = dependency_problems(check_wheels.package_dirs(project), meta)
    assert problems == {name: [] for name in problems}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    package = tmp_path / "runiq_fake"
    package.mkdir()
    (package / "__init__.py").write_text("import json\nimport numpy\nfrom runiq_fake import sub\nfrom . import sub\n")
    (package / "store.py").write_text("def load():\n    import asyncpg  # lazily\n    return asyncpg\n")
    return package


def test_an_unused_dependency_is_reported(project: Path) -> None:
    """The 0.1 runiq-postgresql declared pgvector and never imported it."""
    meta = {"name": "runiq-fake", "dependencies": ["numpy>=1.26", "asyncpg>=0.29", "pgvector>=0.3"]}
    assert dependency_problems([project], meta) == ["pgvector is declared but never imported"]


def test_an_undeclared_import_is_reported(project: Path) -> None:
    """The 0.1 runiq-sentence-transformers imported structlog without declaring it."""
    meta = {"name": "runiq-fake", "dependencies": ["numpy>=1.26"], "optional-dependencies": {"x": ["pytest-asyncio"]}}
    assert dependency_problems([project], meta) == ["imports asyncpg (asyncpg) undeclared"]


def test_a_requirement_that_is_not_installed_is_reported(project: Path) -> None:
    meta = {"name": "runiq-fake", "dependencies": ["numpy", "asyncpg", "no-such-distribution-for-runiq"]}
    assert dependency_problems([project], meta) == [
        "no-such-distribution-for-runiq is declared but not installed, so its modules are unknown"
    ]

"""scripts/test.sh type-checks every plugin with mypy --strict and lints everything a contributor writes.

A new directory under plugins/ (or a new example plugin) is checked without anyone editing the script:
scripts/typecheck.py finds the distributions, and these tests fail if one of them were left out.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINTED = ("runiq", "plugins", "tests", "benchmarks", "examples", "scripts")


def plugin_dirs(root: Path) -> list[Path]:
    """Every plugin the repository holds: each directory under plugins/, and each example plugin."""
    found = [*root.glob("plugins/*/"), *root.glob("examples/*-plugin/")]
    return sorted(path for path in found if path.is_dir() and not path.name.startswith((".", "_")))


def typecheck_command() -> tuple[list[str], list[str]]:
    """The MYPYPATH entries and the ``-p`` packages of the mypy command scripts/typecheck.py runs."""
    printed = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "typecheck.py"), "--print"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assignment, *command = shlex.split(printed)
    assert assignment.startswith("MYPYPATH=")
    assert command[1:4] == ["-m", "mypy", "--strict"]
    packages = [command[i + 1] for i, argument in enumerate(command) if argument == "-p"]
    return assignment.removeprefix("MYPYPATH=").split(os.pathsep), packages


def forgotten(plugins: list[Path], mypy_path: list[str], packages: list[str]) -> list[str]:
    """Plugins whose sources are not on MYPYPATH, or none of whose packages mypy is asked to check."""
    problems = []
    for plugin in plugins:
        if str(plugin) not in mypy_path:
            problems.append(f"{plugin.name} is not on MYPYPATH")
        if not any((plugin / package / "__init__.py").is_file() for package in packages):
            problems.append(f"no package of {plugin.name} is type-checked")
    return problems


def test_every_plugin_and_the_core_are_type_checked_strictly_from_their_sources() -> None:
    mypy_path, packages = typecheck_command()
    assert plugin_dirs(ROOT), "no plugins found: the glob is wrong"
    assert forgotten(plugin_dirs(ROOT), mypy_path, packages) == []
    assert str(ROOT) in mypy_path
    assert "runiq" in packages


def test_a_plugin_left_out_of_the_type_check_is_reported(tmp_path: Path) -> None:
    for name in ("runiq-checked", "runiq-forgotten"):
        package = tmp_path / "plugins" / name / name.replace("-", "_")
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
    checked = tmp_path / "plugins" / "runiq-checked"
    assert forgotten(plugin_dirs(tmp_path), [str(checked)], ["runiq_checked"]) == [
        "runiq-forgotten is not on MYPYPATH",
        "no package of runiq-forgotten is type-checked",
    ]


def test_the_suite_runs_the_type_check_and_lints_tests_benchmarks_and_examples() -> None:
    lines = [line.strip() for line in (ROOT / "scripts" / "test.sh").read_text().splitlines()]
    commands = [shlex.split(line) for line in lines if line and not line.startswith("#")]
    assert ["python", "scripts/typecheck.py"] in commands
    assert ["ruff", "check", *LINTED] in commands
    assert ["ruff", "format", "--check", *LINTED] in commands
    python_tests = commands.index(["python", "-m", "pytest", "$@"])
    assert commands.index(["python", "scripts/typecheck.py"]) < python_tests


def test_the_stubs_mypy_needs_are_development_groups_never_runtime_dependencies() -> None:
    for plugin, stubs in (("runiq-postgresql", "asyncpg-stubs"), ("runiq-documents", "types-openpyxl")):
        with (ROOT / "plugins" / plugin / "pyproject.toml").open("rb") as handle:
            meta = tomllib.load(handle)
        assert any(line.startswith(stubs) for line in meta["dependency-groups"]["typing"])
        assert not any(line.startswith(stubs) for line in meta["project"]["dependencies"])

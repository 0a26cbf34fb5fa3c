"""Builds every distribution's wheel and checks what a user would install.

Offline checks (tests/packaging/test_wheels.py runs them too, from the same functions): each wheel
carries the MIT LICENSE (``License-File``), an author and classifiers, publishes no development extra
(those are PEP 735 dependency groups), shares the core's version, and each plugin requires runiq within
the core's minor release (``runiq>=0.2,<0.3``).

This script adds what needs the package index: a fresh virtualenv gets the core wheel and its
dependencies, imports ``runiq.rag.testing`` there without pytest, and only then receives twine and
trove-classifiers to run ``twine check --strict`` on every wheel and validate every classifier.

    python scripts/check_wheels.py            # everything (needs the package index)
    python scripts/check_wheels.py --offline  # build and inspect only
"""

from __future__ import annotations

import argparse
import email.message
import email.parser
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import venv
import zipfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
CORE = "runiq"
# Extra names that would publish development tooling to users; these live in [dependency-groups].
DEVELOPMENT_NAMES = frozenset({"test", "tests", "lint", "bench", "dev", "docs"})

# Run in a separate interpreter whose sys.path holds the core wheel: the test kit must import without pytest,
# its fakes must work, and a contract must fail with an ImportError that names the extra to install.
IMPORT_PROBE = """
import importlib
try:
    import pytest
except ModuleNotFoundError:
    pass
else:
    raise SystemExit("pytest is importable here, so this probe proves nothing")
import runiq
import runiq.rag.testing as kit
assert kit.make_chunks("a.md", ["one", "two"])[1].start == 3
for module, name in (("runiq.rag.testing", "VectorStoreContract"), ("runiq.rag.testing.fixtures", None)):
    try:
        loaded = importlib.import_module(module)
        getattr(loaded, name) if name else None
    except ImportError as error:
        assert "pip install 'runiq[testing]'" in str(error), str(error)
    else:
        raise SystemExit(f"{module} {name} imported without pytest")
print(runiq.__file__)
"""


def projects() -> list[Path]:
    """Every distribution in the repository: the core, each plugin and the example plugin (as bootstrap installs)."""
    found = [ROOT, *sorted(ROOT.glob("plugins/*/")), *sorted(ROOT.glob("examples/*-plugin/"))]
    return [path for path in found if (path / "pyproject.toml").is_file()]


def pyproject(project: Path) -> dict[str, object]:
    with (project / "pyproject.toml").open("rb") as handle:
        return tomllib.load(handle)


def package_dirs(project: Path) -> list[Path]:
    """The import packages a distribution ships (its ``[tool.setuptools.packages.find] include``)."""
    find: dict[str, list[str]] = pyproject(project)["tool"]["setuptools"]["packages"]["find"]  # type: ignore[index]
    return [project / pattern.rstrip("*.") for pattern in find["include"]]


def _sources(project: Path) -> list[Path]:
    """What a wheel is built from: pyproject.toml, the readme, the license files and the packages."""
    meta: dict[str, object] = pyproject(project)["project"]  # type: ignore[assignment]
    names = ["pyproject.toml", str(meta["readme"]), *meta.get("license-files", [])]  # type: ignore[misc]
    files = [project / name for name in names if (project / name).is_file()]
    return list(dict.fromkeys([*files, *package_dirs(project)]))


# setuptools' PEP 517 build hook (what pip wheel --no-build-isolation calls) for each source copy, in
# one process: a process per project, as pip runs them, costs four times the CPU for the same wheels.
_BUILD_WHEELS = """
import os, sys
from setuptools import build_meta
out, *projects = sys.argv[1:]
for project in projects:
    os.chdir(project)
    build_meta.build_wheel(out)
"""


def _copy_sources(project: Path, copy: Path) -> None:
    for source in _sources(project):
        if source.is_dir():
            shutil.copytree(source, copy / source.name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            copy.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / source.name)


def build_wheels(dest: Path) -> dict[str, Path]:
    """Builds every wheel into ``dest``, each from a copy of its sources (the work tree gets no build/ or
    egg-info). Offline: no build isolation (setuptools comes from this environment) and pyproject
    validation fetches no classifier list."""
    copies = [dest / "src" / project.name for project in projects()]
    for project, copy in zip(projects(), copies, strict=True):
        _copy_sources(project, copy)
    out = dest / "wheels"
    env = {**os.environ, "VALIDATE_PYPROJECT_NO_NETWORK": "1"}
    command = [sys.executable, "-c", _BUILD_WHEELS, str(out), *map(str, copies)]
    build = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if build.returncode:
        raise RuntimeError(f"the wheels did not build:\n{build.stderr.decode(errors='replace')}")
    return {canonicalize_name(wheel.name.split("-")[0]): wheel for wheel in sorted(out.glob("*.whl"))}


def read_metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.parser.Parser().parsestr(archive.read(name).decode("utf-8"))


def minor_release(version: str) -> SpecifierSet:
    """The bounds a plugin puts on the core: this minor release and its patches (0.2.0 -> >=0.2,<0.3)."""
    major, minor = Version(version).release[:2]
    return SpecifierSet(f">={major}.{minor},<{major}.{minor + 1}")


def _license_problems(wheel: Path, metadata: email.message.Message) -> list[str]:
    problems = []
    if metadata.get("License-Expression") != "MIT":
        problems.append("License-Expression is not MIT")
    if metadata.get_all("License-File") != ["LICENSE"]:
        problems.append("License-File is not exactly LICENSE")
    with zipfile.ZipFile(wheel) as archive:
        shipped = [n for n in archive.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
        if not shipped or archive.read(shipped[0]) != (ROOT / "LICENSE").read_bytes():
            problems.append("the wheel does not ship the repository's LICENSE")
    return problems


def wheel_problems(wheel: Path, core_version: str) -> list[str]:
    """What is wrong with one built wheel, as fixed sentences (empty when it is fine)."""
    metadata = read_metadata(wheel)
    name = canonicalize_name(metadata["Name"])
    problems = _license_problems(wheel, metadata)
    if not metadata.get_all("Classifier"):
        problems.append("no classifiers")
    if not metadata.get("Author"):
        problems.append("no author")
    if metadata["Version"] != core_version:
        problems.append(f"version {metadata['Version']} is not the core's {core_version}")
    for extra in metadata.get_all("Provides-Extra") or []:
        if extra in DEVELOPMENT_NAMES:
            problems.append(f"publishes the development extra '{extra}'")
    requirements = [Requirement(line) for line in metadata.get_all("Requires-Dist") or []]
    on_core = [r for r in requirements if canonicalize_name(r.name) == CORE and r.marker is None]
    if name != CORE and [r.specifier for r in on_core] != [minor_release(core_version)]:
        problems.append(f"does not require {CORE}{minor_release(core_version)}")
    return problems


def _fresh_venv_checks(wheels: dict[str, Path], work: Path) -> None:
    env_dir = work / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", str(wheels[CORE])], check=True)
    probe = subprocess.run([python, "-I", "-c", IMPORT_PROBE], check=True, capture_output=True, text=True)
    print(f"runiq.rag.testing imports without pytest from {probe.stdout.strip()}")
    subprocess.run([python, "-m", "pip", "install", "--quiet", "twine", "trove-classifiers"], check=True)
    subprocess.run([python, "-m", "twine", "check", "--strict", *map(str, wheels.values())], check=True)
    classifiers = sorted({c for wheel in wheels.values() for c in read_metadata(wheel).get_all("Classifier") or []})
    check = "import sys, trove_classifiers as t; sys.exit([c for c in sys.argv[1:] if c not in t.classifiers] or 0)"
    subprocess.run([python, "-c", check, *classifiers], check=True)
    print(f"{len(classifiers)} distinct classifiers are all valid trove classifiers")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offline", action="store_true", help="build and inspect only; no fresh virtualenv")
    args = parser.parse_args()
    core_version = str(pyproject(ROOT)["project"]["version"])  # type: ignore[index]
    with tempfile.TemporaryDirectory(prefix="runiq-wheels-") as tmp:
        wheels = build_wheels(Path(tmp))
        failures = [f"{wheel.name}: {p}" for wheel in wheels.values() for p in wheel_problems(wheel, core_version)]
        print("\n".join(failures) or f"{len(wheels)} wheels built and inspected: {', '.join(wheels)}")
        if failures:
            return 1
        if not args.offline:
            _fresh_venv_checks(wheels, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Every distribution's built wheel, inspected: license, classifiers, core bounds, no dev extras, and the
test kit importable from the core wheel without pytest. Offline: wheels are built without build isolation
from copies of the sources (about 10 s for all of them), and nothing is installed."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from packaging.utils import canonicalize_name

# Prepended to the probe: the wheel's contents first on sys.path, the environment's site-packages after it
# (for numpy, pydantic...; -S skips .pth files, so no editable runiq), and pytest made unimportable.
BLOCK_PYTEST = """
import sys
wheel_dir, *site_dirs = sys.argv[1:]
sys.path[:0] = [wheel_dir]
sys.path += site_dirs


class _NoPytest:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.partition(".")[0] in {"pytest", "_pytest", "pytest_asyncio"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NoPytest)
"""


@pytest.fixture(scope="module")
def wheels(check_wheels: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    built: dict[str, Path] = check_wheels.build_wheels(tmp_path_factory.mktemp("build"))
    return built


@pytest.fixture(scope="module")
def core_version(check_wheels: ModuleType) -> str:
    return str(check_wheels.pyproject(check_wheels.ROOT)["project"]["version"])


def test_every_distribution_builds_one_wheel(check_wheels: ModuleType, wheels: dict[str, Path]) -> None:
    names = [canonicalize_name(check_wheels.pyproject(p)["project"]["name"]) for p in check_wheels.projects()]
    assert sorted(wheels) == sorted(names)
    assert len(names) == 9 and "runiq" in names


def test_every_wheel_ships_license_classifiers_author_and_core_bounds(
    check_wheels: ModuleType, wheels: dict[str, Path], core_version: str
) -> None:
    problems = {name: check_wheels.wheel_problems(wheel, core_version) for name, wheel in wheels.items()}
    assert problems == {name: [] for name in wheels}


def test_plugin_wheels_require_the_core_minor_release(
    check_wheels: ModuleType, wheels: dict[str, Path], core_version: str
) -> None:
    bounds = str(check_wheels.minor_release(core_version))
    assert bounds == "<0.3,>=0.2"  # the release these faces belong to; bump both together
    for name, wheel in wheels.items():
        requires = check_wheels.read_metadata(wheel).get_all("Requires-Dist") or []
        if name != "runiq":
            assert f"runiq{bounds}" in requires, name


def _write_wheel(path: Path, metadata: str) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("bad-0.1.0.dist-info/METADATA", metadata)
    return path


def test_the_checker_names_each_problem_of_a_bad_wheel(check_wheels: ModuleType, tmp_path: Path) -> None:
    """The wheel checks can fail: a 0.1-era plugin wheel trips every one of them."""
    metadata = (
        "Metadata-Version: 2.4\nName: runiq-bad\nVersion: 0.1.0\nLicense: MIT\n"
        "Provides-Extra: test\nRequires-Dist: pytest; extra == 'test'\nRequires-Dist: runiq\n\n"
    )
    problems = check_wheels.wheel_problems(_write_wheel(tmp_path / "bad.whl", metadata), "0.2.0")
    assert problems == [
        "License-Expression is not MIT",
        "License-File is not exactly LICENSE",
        "the wheel does not ship the repository's LICENSE",
        "no classifiers",
        "no author",
        "version 0.1.0 is not the core's 0.2.0",
        "publishes the development extra 'test'",
        "does not require runiq<0.3,>=0.2",
    ]


def _probe(wheel: Path, tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    wheel_dir = tmp_path / "wheel"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(wheel_dir)
    site_dirs = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    command = [sys.executable, "-I", "-S", "-c", code, str(wheel_dir), *site_dirs]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_the_test_kit_imports_from_the_core_wheel_without_pytest(
    check_wheels: ModuleType, wheels: dict[str, Path], tmp_path: Path
) -> None:
    """``import runiq.rag.testing`` works in a clean install; a contract asks for ``runiq[testing]``."""
    result = _probe(wheels["runiq"], tmp_path, BLOCK_PYTEST + check_wheels.IMPORT_PROBE)
    assert result.returncode == 0, result.stderr
    assert Path(result.stdout.strip()).is_relative_to(tmp_path / "wheel")  # the wheel's runiq, not the work tree


def test_the_import_probe_fails_when_pytest_is_importable(
    check_wheels: ModuleType, wheels: dict[str, Path], tmp_path: Path
) -> None:
    """Without the blocker the environment's pytest is found, and the probe refuses to pass."""
    blocker = BLOCK_PYTEST.replace("sys.meta_path.insert(0, _NoPytest)", "")
    result = _probe(wheels["runiq"], tmp_path, blocker + check_wheels.IMPORT_PROBE)
    assert result.returncode == 1
    assert "pytest is importable here" in result.stderr

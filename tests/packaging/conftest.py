"""The packaging tests share scripts/check_wheels.py, the one definition of what a good wheel is."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def check_wheels() -> ModuleType:
    spec = importlib.util.spec_from_file_location("runiq_check_wheels", ROOT / "scripts" / "check_wheels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

"""Keep the tests independent of the machine's RUNIQ_* environment."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _clean_runiq_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """RUNIQ_* variables (for example RUNIQ_DISABLED_PLUGINS) must not change what these tests see."""
    for name in list(os.environ):
        if name.upper().startswith("RUNIQ_"):
            monkeypatch.delenv(name)

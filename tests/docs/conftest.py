"""Docs tests run against the code alone, never the machine's RUNIQ_* configuration."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _clean_runiq_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """RUNIQ_* variables (an extra index, a blocked plugin) must not change what the docs show."""
    for name in list(os.environ):
        if name.upper().startswith("RUNIQ_"):
            monkeypatch.delenv(name)

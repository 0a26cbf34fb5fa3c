"""Opt-in pytest fixtures: ``pytest_plugins = ["runiq.rag.testing.fixtures"]``."""

from __future__ import annotations

import pytest

from runiq.rag.testing.fakes import CANARY

__all__ = ["canary"]


@pytest.fixture
def canary() -> str:
    """A unique string to plant in content and queries and look for in logs, errors and payloads."""
    return CANARY

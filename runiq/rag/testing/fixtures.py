"""Opt-in pytest fixtures: ``pytest_plugins = ["runiq.rag.testing.fixtures"]`` (needs ``runiq[testing]``)."""

from __future__ import annotations

from runiq.rag.testing import _needs_pytest
from runiq.rag.testing.fakes import CANARY

with _needs_pytest():
    import pytest

__all__ = ["canary"]


@pytest.fixture
def canary() -> str:
    """A unique string to plant in content and queries and look for in logs, errors and payloads."""
    return CANARY

"""Fixtures for registration tests: a host builder with only the built-in providers, and its RagBuilder."""

from __future__ import annotations

import os

import pytest

from runiq.hosting import HostBuilder
from runiq.rag import RagBuilder, add_runiq_rag


@pytest.fixture(autouse=True)
def _clean_runiq_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """RUNIQ_* variables of the machine running the tests must not add indexes or block plugins."""
    for name in list(os.environ):
        if name.upper().startswith("RUNIQ_"):
            monkeypatch.delenv(name)


@pytest.fixture
def builder() -> HostBuilder:
    """No entry-point plugins: only the built-in providers (``hashing``, ``in-memory``)."""
    return HostBuilder(load_entry_points=False)


@pytest.fixture
def rag(builder: HostBuilder) -> RagBuilder:
    return add_runiq_rag(builder)

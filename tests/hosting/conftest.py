"""Fixtures for the hosting tests: participants that record what happened to them."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from runiq.hosting import HostBuilder, ServiceProvider


@pytest.fixture(autouse=True)
def _clean_runiq_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """RUNIQ_* variables of the machine running the tests must not add indexes or block plugins."""
    for name in list(os.environ):
        if name.upper().startswith("RUNIQ_"):
            monkeypatch.delenv(name)


class RecordingParticipant:
    """Appends ``start:<name>`` / ``stop:<name>`` to a shared journal; can be told to fail."""

    def __init__(self, name: str, journal: list[str], *, fail_start: bool = False, fail_stop: bool = False) -> None:
        self.name = name
        self.journal = journal
        self.fail_start = fail_start
        self.fail_stop = fail_stop

    async def start(self) -> None:
        self.journal.append(f"start:{self.name}")
        if self.fail_start:
            raise RuntimeError(f"{self.name} could not start")

    async def stop(self) -> None:
        self.journal.append(f"stop:{self.name}")
        if self.fail_stop:
            raise RuntimeError(f"{self.name} could not stop")


@pytest.fixture
def make_participant(journal: list[str]) -> Callable[..., RecordingParticipant]:
    """``make_participant("a", fail_stop=True)`` returns a recording participant writing to ``journal``."""

    def make(name: str, **flags: bool) -> RecordingParticipant:
        return RecordingParticipant(name, journal, **flags)

    return make


@pytest.fixture
def journal() -> list[str]:
    return []


@pytest.fixture
def builder() -> HostBuilder:
    """A host builder with no entry-point plugins: only the built-ins."""
    return HostBuilder(load_entry_points=False)


@pytest.fixture
def add_participant(builder: HostBuilder, journal: list[str]) -> Callable[..., None]:
    """``add_participant("a", fail_start=True)`` attaches a recording participant to ``builder``."""

    def add(name: str, **flags: bool) -> None:
        def factory(_: ServiceProvider) -> RecordingParticipant:
            return RecordingParticipant(name, journal, **flags)

        builder.add_lifecycle_participant(factory)

    return add

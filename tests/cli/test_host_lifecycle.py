"""A command uses the host's services without starting it (no ingestion strategy fires) and stops the
host when it ends, which cancels the runs it started and closes the providers it opened."""

from __future__ import annotations

from pathlib import Path

import pytest

from runiq.cli.hosting import cli_host
from runiq.hosting import Host, HostState
from runiq.rag import IndexRuntime, RagIngestionManager, RagIngestionState


@pytest.fixture
def on_startup_config(config: Path) -> Path:
    text = config.read_text(encoding="utf-8")
    config.write_text(text + '\n[rag.indexes.notes.ingestion]\nstrategy = "on_startup"\n', encoding="utf-8")
    return config


async def test_a_command_stops_the_host_and_its_providers_close(on_startup_config: Path) -> None:
    async with cli_host(on_startup_config) as host:
        assert host.state is HostState.CREATED
        manager = host.services.get(RagIngestionManager)
        assert manager.status("notes").last_operation is None  # on_startup did not fire
        assert (await manager.run("notes")).state is not RagIngestionState.RUNNING
        runtime = host.services.get(IndexRuntime)
    assert host.state is HostState.STOPPED
    with pytest.raises(RuntimeError, match="closed"):
        await runtime.get("notes")


async def test_a_command_that_fails_still_stops_the_host(config: Path) -> None:
    hosts: list[Host] = []

    async def failing_command() -> None:
        async with cli_host(config) as host:
            hosts.append(host)
            raise KeyError("the command failed")

    with pytest.raises(KeyError):
        await failing_command()
    assert hosts[0].state is HostState.STOPPED

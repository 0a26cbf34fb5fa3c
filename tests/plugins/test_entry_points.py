"""Discovery through entry points, end to end, with the installed ``runiq-example-plugin`` distribution.

Other runiq plugins may be installed in the same environment; each test blocks every entry point except
the example's, so these tests are about discovery and not about the health of unrelated plugins.
"""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from runiq.hosting import HostBuilder
from runiq.plugins import ProviderKind
from runiq.rag import RagIngestionManager, RagIngestionState, RagQuery, RagRetrievalMode, RagRetriever, add_runiq_rag
from runiq.settings import RuniqSettings

EXAMPLE = "example"
PROVIDER = "example-char-ngrams"


def _only(*allowed: str) -> RuniqSettings:
    others = {ep.name for ep in entry_points(group="runiq")} - set(allowed)
    return RuniqSettings(disabled_plugins=tuple(sorted(others)))


def test_example_plugin_is_installed_under_the_runiq_group() -> None:
    """The example distribution declares ``example = runiq_example_plugin.plugin`` in group ``runiq``."""
    (ep,) = [ep for ep in entry_points(group="runiq") if ep.name == EXAMPLE]
    assert ep.value == "runiq_example_plugin.plugin"
    assert ep.dist is not None
    assert ep.dist.name == "runiq-example-plugin"


def test_entry_point_discovery_registers_the_example_provider() -> None:
    """HostBuilder(load_entry_points=True) loads the example plugin and sees its provider, attributed to it."""
    builder = HostBuilder(settings=_only(EXAMPLE), load_entry_points=True)
    assert EXAMPLE in builder.plugins.plugin_names
    spec = builder.providers.get(ProviderKind.EMBEDDING, PROVIDER)
    assert spec.plugin == EXAMPLE


def test_without_entry_points_the_example_provider_is_absent() -> None:
    """load_entry_points=False loads no installed plugin, so the example provider is unknown."""
    builder = HostBuilder(load_entry_points=False)
    assert EXAMPLE not in builder.plugins.plugin_names
    assert PROVIDER not in builder.providers.names(ProviderKind.EMBEDDING)


def test_blocked_entry_point_is_not_loaded() -> None:
    """RuniqSettings(disabled_plugins=["example"]) keeps the installed example plugin out."""
    builder = HostBuilder(settings=_only(), load_entry_points=True)
    assert EXAMPLE not in builder.plugins.plugin_names
    assert PROVIDER not in builder.providers.names(ProviderKind.EMBEDDING)


def test_blocked_via_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """RUNIQ_DISABLED_PLUGINS (a JSON list) blocks entry points like the explicit setting does."""
    blocked = sorted({ep.name for ep in entry_points(group="runiq")})
    monkeypatch.setenv("RUNIQ_DISABLED_PLUGINS", json.dumps(blocked))
    builder = HostBuilder(load_entry_points=True)
    assert EXAMPLE not in builder.plugins.plugin_names


async def test_discovered_provider_serves_an_index_end_to_end(tmp_path: Path) -> None:
    """An index registered by the discovered provider's name ingests and answers a semantic query."""
    (tmp_path / "remote.md").write_text("# Remote work\n\nEmployees may work remotely three days a week.\n")
    (tmp_path / "travel.md").write_text("# Travel\n\nKeep every receipt for travel expenses.\n")
    builder = HostBuilder(settings=_only(EXAMPLE), load_entry_points=True)
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: (
                index.use_directory(tmp_path, "*.md")
                .use_embedding(PROVIDER, dimensions=128)
                .use_in_memory_vector_store()
            ),
        ),
    )
    async with builder.build() as host:
        operation = await host.services.get(RagIngestionManager).run("docs")
        assert operation.state is RagIngestionState.COMPLETED
        result = await host.services.get(RagRetriever).retrieve(
            RagQuery(index_name="docs", text="remote work", mode=RagRetrievalMode.SEMANTIC)
        )
    assert result.hits
    assert result.hits[0].document_id == "remote.md"

"""The module named by the ``runiq`` entry point: it holds the hook implementations."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from runiq.rag.providers import ProviderRegistry, hookimpl

from runiq_example_plugin.embedder import PROVIDER_NAME, CharNgramEmbedder, CharNgramOptions

__all__ = ["runiq_register_providers"]


@asynccontextmanager
async def _open(options: CharNgramOptions) -> AsyncIterator[CharNgramEmbedder]:
    # Nothing to open or close; a client with a connection pool would open it here and close it
    # after the yield, when the host stops.
    yield CharNgramEmbedder(options)


@hookimpl
def runiq_register_providers(registry: ProviderRegistry) -> None:
    registry.add_embedding(PROVIDER_NAME, _open, options=CharNgramOptions)

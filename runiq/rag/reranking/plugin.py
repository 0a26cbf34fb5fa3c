"""Registers the reference ``lexical-overlap`` reranker, the way a built-in provider is registered.

Add this module to the built-in plugins (``PluginHost.create``) or pass it as a plugin object::

    HostBuilder(plugins=[runiq.rag.reranking.plugin])
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from runiq.plugins.hookspecs import hookimpl
from runiq.plugins.registry import ProviderRegistry
from runiq.rag.reranking.lexical import PROVIDER_NAME, LexicalOverlapOptions, LexicalOverlapReranker

__all__ = ["runiq_register_providers"]


@asynccontextmanager
async def _lexical_overlap(options: LexicalOverlapOptions) -> AsyncIterator[LexicalOverlapReranker]:
    yield LexicalOverlapReranker.from_options(options)


@hookimpl
def runiq_register_providers(registry: ProviderRegistry) -> None:
    # Local and in-process: nothing leaves the host, so no egress approval is needed.
    registry.add_reranker(PROVIDER_NAME, _lexical_overlap, options=LexicalOverlapOptions, remote=False)

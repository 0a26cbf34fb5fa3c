"""Registers the reference ``lexical-overlap`` reranker.

The built-in plugin (:mod:`runiq.rag._builtins`, named ``runiq.builtins``) calls
:func:`register_providers`, so every host has ``lexical-overlap`` unless the built-ins are blocked.
This module is not a plugin of its own: registering the name a second time would be a conflict.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from runiq.plugins.registry import ProviderRegistry
from runiq.rag._reranking.lexical import PROVIDER_NAME, LexicalOverlapOptions, LexicalOverlapReranker

__all__ = ["register_providers"]


@asynccontextmanager
async def _lexical_overlap(options: LexicalOverlapOptions) -> AsyncIterator[LexicalOverlapReranker]:
    yield LexicalOverlapReranker.from_options(options)


def register_providers(registry: ProviderRegistry) -> None:
    # Local and in-process: nothing leaves the host, so no egress approval is needed.
    registry.add_reranker(PROVIDER_NAME, _lexical_overlap, options=LexicalOverlapOptions, remote=False)

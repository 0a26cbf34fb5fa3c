"""Built-in providers and document loaders, registered through the same hooks as any third-party plugin."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from runiq.plugins.hookspecs import hookimpl
from runiq.plugins.registry import ProviderRegistry
from runiq.rag._embeddings.hashing import DEFAULT_DIMENSIONS, HashingEmbedder
from runiq.rag._lexical.options import LexicalOptions
from runiq.rag._loaders.builtin import register_builtin_loaders
from runiq.rag._loaders.registry import LoaderRegistry
from runiq.rag._reranking import plugin as _reranking

if TYPE_CHECKING:
    from runiq.rag._stores.memory import InMemoryVectorStore

__all__ = ["HashingOptions", "runiq_register_loaders", "runiq_register_providers"]


class HashingOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    dimensions: int = Field(default=DEFAULT_DIMENSIONS, ge=8, le=65536)


# numpy (and the in-memory store's BM25 engine) are imported when a host opens a provider that needs
# them, off the event loop: building a host (``runiq status``) does not need them.


@asynccontextmanager
async def _hashing(options: HashingOptions) -> AsyncIterator[HashingEmbedder]:
    await asyncio.to_thread(importlib.import_module, "numpy")
    yield HashingEmbedder(options.dimensions)


@asynccontextmanager
async def _in_memory(options: LexicalOptions) -> AsyncIterator[InMemoryVectorStore]:
    await asyncio.to_thread(importlib.import_module, "runiq.rag._stores.memory")
    from runiq.rag._stores.memory import InMemoryVectorStore

    yield InMemoryVectorStore(analyzer=options.analyzer())


@hookimpl
def runiq_register_providers(registry: ProviderRegistry) -> None:
    registry.add_embedding("hashing", _hashing, options=HashingOptions)
    registry.add_vector_store("in-memory", _in_memory, options=LexicalOptions)
    _reranking.register_providers(registry)


@hookimpl
def runiq_register_loaders(registry: LoaderRegistry) -> None:
    register_builtin_loaders(registry)

"""Providers the tests register in Ray workers through ``plugin_modules`` (imported in worker processes)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import numpy as np
from runiq.rag.providers import EmbeddingInputKind, ProviderRegistry, hookimpl
from runiq.rag.testing import CANARY


class LeakyEmbedder:
    """Fails with the input in its message, as a careless SDK would."""

    model_name = "leaky"
    dimensions = 8

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> np.ndarray:
        raise RuntimeError(f"cannot embed {texts[0]!r} ({CANARY})")


@asynccontextmanager
async def _leaky(options: object) -> AsyncIterator[LeakyEmbedder]:
    yield LeakyEmbedder()


@hookimpl
def runiq_register_providers(registry: ProviderRegistry) -> None:
    registry.add_embedding("leaky", _leaky)

"""Providers the tests register in Ray workers through ``plugin_modules`` (imported in worker processes)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import numpy as np
from pydantic import BaseModel
from runiq.errors import ProviderUnavailableError
from runiq.rag._embeddings.hashing import HashingEmbedder
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


class UnavailableEmbedder:
    """Fails with a runiq provider error, whose reason is fixed text."""

    model_name = "unavailable"
    dimensions = 8

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> np.ndarray:
        raise ProviderUnavailableError("unavailable", "the provider failed to answer")


@asynccontextmanager
async def _unavailable(options: object) -> AsyncIterator[UnavailableEmbedder]:
    yield UnavailableEmbedder()


class GatedOptions(BaseModel):
    folder: str


class GatedEmbedder:
    """Hashing vectors, once ``folder/release`` exists; each call first leaves ``started-<pid>`` there,
    so a test sees which worker process holds a batch."""

    model_name = "gated"
    dimensions = 8

    def __init__(self, folder: str) -> None:
        self._folder = Path(folder)

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> np.ndarray:
        _touch(self._folder / f"started-{os.getpid()}")
        while not _exists(self._folder / "release"):  # noqa: ASYNC110 - released by another process
            await asyncio.sleep(0.01)
        return HashingEmbedder(self.dimensions).embed_sync(list(texts))


def _touch(path: Path) -> None:
    path.touch()


def _exists(path: Path) -> bool:
    return path.exists()


@asynccontextmanager
async def _gated(options: GatedOptions) -> AsyncIterator[GatedEmbedder]:
    yield GatedEmbedder(options.folder)


@hookimpl
def runiq_register_providers(registry: ProviderRegistry) -> None:
    registry.add_embedding("leaky", _leaky)
    registry.add_embedding("unavailable", _unavailable)
    registry.add_embedding("gated", _gated, options=GatedOptions)

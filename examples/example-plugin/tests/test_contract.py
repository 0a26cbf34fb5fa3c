"""The example provider passes the contract every runiq embedding client must pass."""

from __future__ import annotations

import pytest
from runiq.rag.testing import EmbeddingClientContract

from runiq_example_plugin import CharNgramEmbedder, CharNgramOptions


class TestCharNgramEmbedder(EmbeddingClientContract):
    @pytest.fixture
    async def client(self) -> CharNgramEmbedder:
        return CharNgramEmbedder(CharNgramOptions(dimensions=128))


class TestCharNgramEmbedderCased(EmbeddingClientContract):
    @pytest.fixture
    async def client(self) -> CharNgramEmbedder:
        return CharNgramEmbedder(CharNgramOptions(dimensions=64, n=4, lowercase=False))

"""The shipped embedding contract, run against the packaged all-MiniLM-L6-v2."""

from __future__ import annotations

import pytest
from runiq.rag.providers import EmbeddingClient
from runiq.rag.testing import EmbeddingClientContract


class TestSentenceTransformerContract(EmbeddingClientContract):
    @pytest.fixture
    def client(self, embedder) -> EmbeddingClient:
        assert isinstance(embedder, EmbeddingClient)
        return embedder

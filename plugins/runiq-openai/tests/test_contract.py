"""The shipped embedding contract, run against the OpenAI client and the local server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from runiq.rag.providers import EmbeddingClient
from runiq.rag.testing import EmbeddingClientContract


class TestOpenAiEmbeddingContract(EmbeddingClientContract):
    @pytest.fixture
    async def client(self, open_client) -> AsyncIterator[EmbeddingClient]:
        async with open_client() as client:
            assert isinstance(client, EmbeddingClient)
            yield client

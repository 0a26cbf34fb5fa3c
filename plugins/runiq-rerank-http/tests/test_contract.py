"""The shipped reranker contract, run against each backend's fake server through the plugin's own factory."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from runiq.rag.providers import RagReranker
from runiq.rag.testing.reranker_contract import RerankerContract

from runiq_rerank_http import RerankBackend


class TestHttpRerankerContract(RerankerContract):
    @pytest.fixture(params=list(RerankBackend), ids=[b.value for b in RerankBackend])
    async def reranker(self, request, open_reranker) -> AsyncIterator[RagReranker]:
        async with open_reranker(request.param) as reranker:
            assert isinstance(reranker, RagReranker)
            yield reranker

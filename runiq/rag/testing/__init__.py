"""The plugin test kit: contract suites and fakes. Opt-in, never auto-loaded.

Subclass a contract and override its fixture::

    from runiq.rag.testing import VectorStoreContract

    class TestMyStore(VectorStoreContract):
        @pytest.fixture
        async def store(self):
            async with open_my_store() as store:
                yield store

Fixtures for your conftest: ``pytest_plugins = ["runiq.rag.testing.fixtures"]``.
"""

from __future__ import annotations

from runiq.rag.testing.contracts import EmbeddingClientContract, LexicalSearchContract, VectorStoreContract
from runiq.rag.testing.fakes import CANARY, FailingEmbedder, SlowEmbedder, make_chunks
from runiq.rag.testing.loader_contract import LoaderContract
from runiq.rag.testing.reranker_contract import RerankerContract

__all__ = [
    "CANARY",
    "EmbeddingClientContract",
    "FailingEmbedder",
    "LexicalSearchContract",
    "LoaderContract",
    "RerankerContract",
    "SlowEmbedder",
    "VectorStoreContract",
    "make_chunks",
]

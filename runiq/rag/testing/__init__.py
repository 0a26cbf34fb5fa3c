"""The plugin test kit: contract suites and fakes. Opt-in, never auto-loaded.

Subclass a contract and override its fixture::

    from runiq.rag.testing import VectorStoreContract

    class TestMyStore(VectorStoreContract):
        @pytest.fixture
        async def store(self):
            async with open_my_store() as store:
                yield store

Fixtures for your conftest: ``pytest_plugins = ["runiq.rag.testing.fixtures"]``.

The contracts and fixtures are pytest classes with async tests: they need ``pip install 'runiq[testing]'``
(pytest and pytest-asyncio; its hypothesis serves ``runiq.rag.testing.filter_strategies``). The fakes
(``make_chunks``, ``CANARY``, the failing and slow embedders) need nothing beyond runiq, so this
package imports in any install; a contract is imported on first use and, without pytest, raises an
ImportError that names the extra.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from runiq.rag.testing.fakes import CANARY, FailingEmbedder, SlowEmbedder, make_chunks

if TYPE_CHECKING:
    from runiq.rag.testing.contracts import EmbeddingClientContract, VectorStoreContract
    from runiq.rag.testing.filter_contract import MetadataFilterContract
    from runiq.rag.testing.lexical_contract import LexicalAnalyzerContract, LexicalSearchContract
    from runiq.rag.testing.loader_contract import LoaderContract
    from runiq.rag.testing.reranker_contract import RerankerContract

__all__ = [
    "CANARY",
    "EmbeddingClientContract",
    "FailingEmbedder",
    "LexicalAnalyzerContract",
    "LexicalSearchContract",
    "LoaderContract",
    "MetadataFilterContract",
    "RerankerContract",
    "SlowEmbedder",
    "VectorStoreContract",
    "make_chunks",
]

PYTEST_MISSING = "runiq's contract suites and test fixtures need pytest: pip install 'runiq[testing]'"

# Contract name -> the module of this package that defines it (imported on first use: it imports pytest).
_CONTRACT_MODULES = {
    "EmbeddingClientContract": "contracts",
    "LexicalAnalyzerContract": "lexical_contract",
    "LexicalSearchContract": "lexical_contract",
    "VectorStoreContract": "contracts",
    "RerankerContract": "reranker_contract",
    "LoaderContract": "loader_contract",
    "MetadataFilterContract": "filter_contract",
}


@contextmanager
def _needs_pytest() -> Iterator[None]:
    """Turns a missing pytest into an ImportError that says which extra to install."""
    try:
        yield
    except ModuleNotFoundError as error:
        if error.name != "pytest":
            raise
        raise ImportError(PYTEST_MISSING, name="pytest") from None


def __getattr__(name: str) -> Any:
    module = _CONTRACT_MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with _needs_pytest():
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value

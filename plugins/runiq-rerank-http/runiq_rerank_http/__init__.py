"""runiq-rerank-http: one client for the rerank APIs people deploy (Cohere, Jina, TEI, Infinity, vLLM).

Example::

    from runiq_rerank_http import HttpReranking

    index.use_reranker(HttpReranking("tei", base_url="http://reranker:8080"), approved=True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runiq.secrets import EnvironmentSecretProvider, SecretProvider

from runiq_rerank_http.backends import BACKENDS, BackendSpec, RerankBackend
from runiq_rerank_http.options import HttpRerankerOptions
from runiq_rerank_http.scores import ScoreMapping, sigmoid
from runiq_rerank_http.selection import HttpReranking

if TYPE_CHECKING:
    from runiq_rerank_http.reranker import HttpReranker

__all__ = [
    "BACKENDS",
    "BackendSpec",
    "EnvironmentSecretProvider",
    "HttpReranker",
    "HttpRerankerOptions",
    "HttpReranking",
    "RerankBackend",
    "ScoreMapping",
    "SecretProvider",
    "sigmoid",
]


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any attribute

    def __getattr__(name: str) -> object:
        """``HttpReranker`` loads on first use (PEP 562): its module imports httpx."""
        if name == "HttpReranker":
            from runiq_rerank_http.reranker import HttpReranker

            return HttpReranker
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

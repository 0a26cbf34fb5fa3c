"""runiq-sentence-transformers: local embeddings from local model directories, never from a hub.

Example::

    from runiq_sentence_transformers import SentenceTransformerEmbedding

    index.use_embedding(SentenceTransformerEmbedding())  # the packaged all-MiniLM-L6-v2
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runiq_sentence_transformers.loading import load_model, packaged_model_path, resolve_model_path
from runiq_sentence_transformers.options import SentenceTransformerOptions
from runiq_sentence_transformers.selection import SentenceTransformerEmbedding

if TYPE_CHECKING:
    from runiq_sentence_transformers.embedder import SentenceTransformerEmbedder

__all__ = [
    "SentenceTransformerEmbedder",
    "SentenceTransformerEmbedding",
    "SentenceTransformerOptions",
    "load_model",
    "packaged_model_path",
    "resolve_model_path",
]


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any attribute

    def __getattr__(name: str) -> object:
        """``SentenceTransformerEmbedder`` loads on first use (PEP 562): its module imports numpy."""
        if name == "SentenceTransformerEmbedder":
            from runiq_sentence_transformers.embedder import SentenceTransformerEmbedder

            return SentenceTransformerEmbedder
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""Small builders the contract suites share: unique index names, documents, chunks and vectors."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np

from runiq.rag._documents import RagChunk, chunk_id_for
from runiq.rag._stores.base import StoredDocument

__all__ = ["index_name", "stored_document", "text_chunk", "vectors"]


def index_name(prefix: str = "contract") -> str:
    """A fresh index name, so tests sharing one store never see each other's data."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def stored_document(document_id: str, content_hash: str = "h1", **metadata: Any) -> StoredDocument:
    return StoredDocument(document_id=document_id, content_hash=content_hash, metadata=metadata)


def text_chunk(document_id: str, ordinal: int, text: str, **metadata: Any) -> RagChunk:
    return RagChunk(
        document_id=document_id,
        chunk_id=chunk_id_for(document_id, ordinal),
        ordinal=ordinal,
        content=text,
        start=0,
        end=len(text),
        metadata=metadata,
    )


def vectors(*rows: list[float]) -> np.ndarray:
    return np.asarray(rows, dtype=np.float32)

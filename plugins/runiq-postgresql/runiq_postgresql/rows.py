"""Pure preparation of writes and filters: validation, vector encoding, lexical terms, JSON.

Everything here runs before a connection is taken, so a bad request fails with a typed runiq error
and never reaches the database (whose error text could echo the values).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from runiq.rag.documents import MetadataValue, RagChunk
from runiq.rag.errors import RagValidationError, VectorDimensionMismatchError
from runiq.rag.lexical.options import DEFAULT_ANALYZER
from runiq.rag.lexical.tokenizer import Analyzer
from runiq.rag.stores.base import DistanceMetric, IndexSpec, StoredDocument
from runiq_postgresql.lexical import chunk_terms

__all__ = ["PreparedDocument", "filter_json", "metadata_json", "prepare_document", "query_vector", "validate_name"]

MAX_NAME_LENGTH = 1024


def validate_name(value: object, what: str) -> str:
    """Index, document and chunk ids are bound values, but PostgreSQL text cannot hold NUL."""
    if not isinstance(value, str) or not value or len(value) > MAX_NAME_LENGTH or "\x00" in value:
        raise RagValidationError(
            f"A {what} must be a non-empty string of at most {MAX_NAME_LENGTH} characters without NUL."
        )
    return value


def _text(value: str) -> str:
    return value.replace("\x00", "\ufffd") if "\x00" in value else value


def metadata_json(metadata: Mapping[str, object]) -> str:
    clean: dict[str, MetadataValue] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise RagValidationError("Metadata keys must be non-empty strings.")
        if isinstance(value, float) and not math.isfinite(value):
            raise RagValidationError("Metadata numbers must be finite.")
        if isinstance(value, str):
            value = _text(value)
        elif not isinstance(value, int | float | bool):
            raise RagValidationError("Metadata values must be strings, numbers or booleans.")
        clean[_text(key)] = value
    return json.dumps(clean, ensure_ascii=False, separators=(",", ":"))


def filter_json(filters: Mapping[str, MetadataValue] | None) -> str | None:
    """Equality filters as one jsonb containment document (``metadata @> $n``), served by the GIN index."""
    if not filters:
        return None
    return metadata_json(filters)


@dataclass(slots=True)
class PreparedDocument:
    document: StoredDocument
    metadata: str
    rows: list[tuple[object, ...]]
    lexemes: list[tuple[str, ...]] = field(default_factory=list)  # each chunk's distinct lexemes
    total_terms: int = 0


def _vectors(spec: IndexSpec, chunks: Sequence[RagChunk], vectors: npt.ArrayLike | None) -> list[bytes] | None:
    dims = spec.dimensions
    if dims is None:
        return None
    if vectors is None:
        raise RagValidationError("This index stores vectors; replace_document needs one vector per chunk.")
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != len(chunks):
        if matrix.ndim == 2 and matrix.shape[0] == 0 and not chunks:
            return []
        raise RagValidationError("replace_document needs exactly one vector per chunk.")
    if matrix.shape[1] != dims:
        raise VectorDimensionMismatchError(spec.name, dims, int(matrix.shape[1]))
    if not np.isfinite(matrix).all():
        raise RagValidationError("Vectors must be finite.")
    if spec.metric is DistanceMetric.COSINE:
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    header = int(dims).to_bytes(2, "big") + b"\x00\x00"
    big_endian = matrix.astype(">f4")
    return [header + row.tobytes() for row in big_endian]


def prepare_document(
    spec: IndexSpec,
    document: StoredDocument,
    chunks: Sequence[RagChunk],
    vectors: npt.ArrayLike | None,
    analyzer: Analyzer = DEFAULT_ANALYZER,
) -> PreparedDocument:
    validate_name(document.document_id, "document id")
    if not isinstance(document.content_hash, str):
        raise RagValidationError("A document's content hash must be a string.")
    encoded = _vectors(spec, chunks, vectors)
    seen: set[str] = set()
    prepared = PreparedDocument(document=document, metadata=metadata_json(document.metadata), rows=[])
    for i, chunk in enumerate(chunks):
        chunk_id = validate_name(chunk.chunk_id, "chunk id")
        if chunk_id in seen:
            raise RagValidationError("Chunk ids must be unique within a document.")
        seen.add(chunk_id)
        content = _text(chunk.content)
        terms = chunk_terms(content, analyzer)
        prepared.lexemes.append(terms.lexemes)
        prepared.total_terms += terms.term_count
        row: tuple[object, ...] = (
            document.document_id,
            chunk_id,
            int(chunk.ordinal),
            content,
            int(chunk.start),
            int(chunk.end),
            metadata_json(chunk.metadata),
            terms.term_count,
            terms.tsvector,
        )
        prepared.rows.append(row if encoded is None else (*row, encoded[i]))
    return prepared


def query_vector(spec: IndexSpec, vector: npt.ArrayLike) -> bytes:
    dims = spec.dimensions
    if dims is None:
        raise RagValidationError("This index has no embedding model; use lexical retrieval.")
    query = np.asarray(vector, dtype=np.float32).reshape(-1)
    if query.shape[0] != dims:
        raise VectorDimensionMismatchError(spec.name, dims, int(query.shape[0]))
    if not np.isfinite(query).all():
        raise RagValidationError("The query vector must be finite.")
    if spec.metric is DistanceMetric.COSINE:
        norm = float(np.linalg.norm(query))
        query = query / norm if norm > 0 else query
    return int(dims).to_bytes(2, "big") + b"\x00\x00" + query.astype(">f4").tobytes()

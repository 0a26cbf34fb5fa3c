"""Pure preparation of writes: validation, vector encoding, lexical terms, JSON.

Everything here runs before a connection is taken, so a bad request fails with a typed runiq error
and never reaches the database (whose error text could echo the values).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from runiq.errors import RagValidationError, VectorDimensionMismatchError
from runiq.rag.providers import DistanceMetric, IndexSpec, MetadataScalar, MetadataValue, RagChunk, StoredDocument

__all__ = [
    "PreparedDocument",
    "chunk_content",
    "metadata_json",
    "add_row_ids",
    "add_terms",
    "prepare_many",
    "query_vector",
    "row_columns",
    "validate_name",
]

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


def row_columns(with_vectors: bool) -> tuple[str, ...]:
    """The chunk-table columns of a prepared row, in row order: :func:`prepare_many` builds all but
    the last four, :func:`add_terms` appends ``term_count, lexemes, identifiers`` and
    :func:`add_row_ids` the ``row_id`` the store reserved (the postings table refers to it): the
    columns COPY writes."""
    return (
        "document_id",
        "chunk_id",
        "ordinal",
        "content",
        "start_offset",
        "end_offset",
        "metadata",
        *(("embedding",) if with_vectors else ()),
        "term_count",
        "lexemes",
        "identifiers",
        "row_id",
    )


def chunk_content(chunk: RagChunk) -> str:
    """The content as stored and tokenised (PostgreSQL text cannot hold NUL)."""
    return _text(chunk.content)


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def metadata_json(metadata: Mapping[str, object]) -> str:
    """Chunk metadata as a ``jsonb`` object: scalars, and lists of scalars as JSON arrays (filters
    match a list when an element does, ``filter_sql``)."""
    if not metadata:
        return "{}"
    clean: dict[str, MetadataValue] = {}
    for key, value in metadata.items():
        if not isinstance(key, str) or not key:
            raise RagValidationError("Metadata keys must be non-empty strings.")
        if isinstance(value, list | tuple):
            clean[_text(key)] = [_scalar(item) for item in value]
        else:
            clean[_text(key)] = _scalar(value)
    return _JSON.encode(clean)


def _scalar(value: object) -> MetadataScalar:
    if isinstance(value, float) and not math.isfinite(value):
        raise RagValidationError("Metadata numbers must be finite.")
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, int | float | bool):
        return value
    raise RagValidationError("Metadata values must be strings, numbers, booleans or lists of those.")


@dataclass(slots=True)
class PreparedDocument:
    document: StoredDocument
    metadata: str
    rows: list[tuple[object, ...]]
    total_terms: int = 0


def _matrix(spec: IndexSpec, chunks: Sequence[RagChunk], vectors: npt.ArrayLike | None) -> npt.NDArray[np.float32]:
    """One document's vectors, shape-checked (``spec.dimensions`` is set)."""
    dims = spec.dimensions
    if vectors is None:
        raise RagValidationError("This index stores vectors; replace_document needs one vector per chunk.")
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != len(chunks):
        if matrix.ndim == 2 and matrix.shape[0] == 0 and not chunks:
            return np.zeros((0, dims or 0), dtype=np.float32)
        raise RagValidationError("replace_document needs exactly one vector per chunk.")
    if matrix.shape[1] != dims:
        raise VectorDimensionMismatchError(spec.name, dims or 0, int(matrix.shape[1]))
    return matrix


def _encoded(spec: IndexSpec, matrix: npt.NDArray[np.float32]) -> list[bytes]:
    """pgvector's binary format per row, unit-normalised for cosine indexes. ``matrix`` is the caller's
    own copy and is overwritten (normalised and byte-swapped in place: a write of thousands of chunks
    needs no further copies of its vectors)."""
    if not np.isfinite(matrix).all():
        raise RagValidationError("Vectors must be finite.")
    if spec.metric is DistanceMetric.COSINE:
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, norms, out=matrix, where=norms > 0)  # a zero row stays zero
    header = int(matrix.shape[1]).to_bytes(2, "big") + b"\x00\x00"
    if np.little_endian:  # prepare_many concatenates into native float32
        matrix.byteswap(inplace=True)  # now big-endian bytes, as pgvector's binary format wants
    return [header + row.tobytes() for row in matrix]


def prepare_many(
    spec: IndexSpec, items: Sequence[tuple[StoredDocument, Sequence[RagChunk], npt.ArrayLike | None]]
) -> list[PreparedDocument]:
    """Validated rows (everything but the lexical terms) per document, all vectors encoded in one numpy pass.

    Bulk writes tokenise elsewhere at the same time. Each row ends with the vector (when the index
    has one); :func:`add_terms` appends ``term_count, lexemes, identifiers``: the order of :func:`row_columns`.
    """
    if spec.dimensions is None:
        return [_document_rows(doc, chunks, None) for doc, chunks, _ in items]
    matrices = [_matrix(spec, chunks, vectors) for _, chunks, vectors in items]
    encoded = _encoded(spec, np.concatenate(matrices, dtype=np.float32)) if matrices else []
    out: list[PreparedDocument] = []
    start = 0
    for (doc, chunks, _), matrix in zip(items, matrices, strict=True):
        out.append(_document_rows(doc, chunks, encoded[start : start + len(matrix)]))
        start += len(matrix)
    return out


def _document_rows(
    document: StoredDocument, chunks: Sequence[RagChunk], encoded: list[bytes] | None
) -> PreparedDocument:
    validate_name(document.document_id, "document id")
    if not isinstance(document.content_hash, str):
        raise RagValidationError("A document's content hash must be a string.")
    seen: set[str] = set()
    prepared = PreparedDocument(document=document, metadata=metadata_json(document.metadata), rows=[])
    for i, chunk in enumerate(chunks):
        chunk_id = validate_name(chunk.chunk_id, "chunk id")
        if chunk_id in seen:
            raise RagValidationError("Chunk ids must be unique within a document.")
        seen.add(chunk_id)
        row: tuple[object, ...] = (
            document.document_id,
            chunk_id,
            int(chunk.ordinal),
            chunk_content(chunk),
            int(chunk.start),
            int(chunk.end),
            metadata_json(chunk.metadata),
        )
        prepared.rows.append(row if encoded is None else (*row, encoded[i]))
    return prepared


def add_terms(
    prepared: PreparedDocument, tsvectors: Sequence[bytes], term_counts: Sequence[int], identifiers: Sequence[str]
) -> None:
    """Complete each row with its chunk's ``term_count, lexemes, identifiers`` (one of each per row, in row order)."""
    rows = prepared.rows
    if not len(tsvectors) == len(term_counts) == len(identifiers) == len(rows):
        raise ValueError("one tsvector, term count and identifier text per chunk are required")
    for i, (tsvector, term_count, words) in enumerate(zip(tsvectors, term_counts, identifiers, strict=True)):
        rows[i] = (*rows[i], term_count, tsvector, words)
    prepared.total_terms += sum(term_counts)


def add_row_ids(documents: Sequence[PreparedDocument], row_ids: Sequence[int]) -> None:
    """Complete the documents' rows, in order, with one reserved row id each."""
    if sum(len(doc.rows) for doc in documents) != len(row_ids):
        raise ValueError("one row id per chunk is required")
    start = 0
    for doc in documents:
        rows = doc.rows
        for i, row_id in enumerate(row_ids[start : start + len(rows)]):
            rows[i] = (*rows[i], row_id)
        start += len(rows)


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

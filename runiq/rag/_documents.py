"""Frozen value objects for what flows through ingestion: source documents and chunks.

Identities are ``(document_id, chunk_id)``. Chunk ids derive from the document id and the chunk's
ordinal, so re-ingesting unchanged content yields the same identities and the store can replace a
document's chunk set by deleting only the ids that disappeared.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple, TypeAlias

from runiq.rag._errors import RagValidationError

__all__ = [
    "ChunkKey",
    "Metadata",
    "MetadataScalar",
    "MetadataValue",
    "RagChunk",
    "RagDocument",
    "chunk_id_for",
    "freeze_metadata",
]

MetadataScalar: TypeAlias = str | int | float | bool
# A list of scalars is kept as a tuple (read-only); filters match it when any element matches.
MetadataValue: TypeAlias = MetadataScalar | tuple[MetadataScalar, ...] | list[MetadataScalar]
Metadata: TypeAlias = Mapping[str, MetadataValue]

_EMPTY: Metadata = MappingProxyType({})


class ChunkKey(NamedTuple):
    """The identity of one chunk; hybrid fusion merges on it."""

    document_id: str
    chunk_id: str


def freeze_metadata(values: Mapping[str, object] | None) -> Metadata:
    """Copy metadata into a read-only mapping, refusing values that no store can filter on.

    A value is a string, number or boolean, or a list (or tuple) of those, which is kept as a tuple.
    """
    if not values:
        return _EMPTY
    frozen: dict[str, MetadataValue] = {}
    for key, value in values.items():
        if not isinstance(key, str) or not key.strip():
            raise RagValidationError("Metadata keys must be non-empty strings.")
        frozen[key] = _frozen_value(value)
    return MappingProxyType(frozen)


def _frozen_value(value: object) -> MetadataValue:
    if isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple) and all(isinstance(item, str | int | float | bool) for item in value):
        return tuple(value)
    raise RagValidationError("Metadata values must be strings, numbers, booleans or lists of those.")


def chunk_id_for(document_id: str, ordinal: int) -> str:
    """Deterministic chunk id: the same document and ordinal always give the same id."""
    return f"{document_id}#{ordinal}"


@dataclass(frozen=True, slots=True, kw_only=True)
class RagDocument:
    """A document as a source delivers it, before chunking.

    ``document_id`` is stable for the same logical document (a directory source uses the path relative
    to its root). ``content_type`` picks the chunker (``text/markdown`` or ``text/plain``).
    """

    document_id: str
    content: str
    content_type: str = "text/plain"
    title: str | None = None
    metadata: Metadata = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        if not isinstance(self.document_id, str) or not self.document_id.strip():
            raise RagValidationError("Document id must be a non-empty string.")
        if not isinstance(self.content, str):
            raise RagValidationError("Document content must be a string.")
        object.__setattr__(self, "metadata", freeze_metadata(self.metadata))

    def content_hash(self, configuration_fingerprint: str = "") -> str:
        """SHA-256 over the content and the configuration that turns it into chunks and vectors.

        Text that is not valid Unicode (a lone surrogate, as ``surrogateescape`` decoding or a JSON
        ``\\ud800`` escape leaves behind) raises :class:`RagValidationError`: no embedding provider or
        durable store accepts it, so the pipeline fails such a document with ``invalid_text``.
        """
        digest = hashlib.sha256()
        try:
            digest.update(configuration_fingerprint.encode("utf-8"))
            digest.update(b"\x1f")
            digest.update(self.content_type.encode("utf-8"))
            digest.update(b"\x1f")
            digest.update(self.content.encode("utf-8"))
            for key in sorted(self.metadata):
                digest.update(f"\x1e{key}\x1f{self.metadata[key]!r}".encode())
        except UnicodeEncodeError:
            pass  # raised below, outside the handler: the error's text quotes the offending character
        else:
            return digest.hexdigest()
        raise RagValidationError("Document text must be valid Unicode; it contains a lone surrogate.")


@dataclass(frozen=True, slots=True, kw_only=True)
class RagChunk:
    """A contiguous slice of a document: ``content == document.content[start:end]``."""

    document_id: str
    chunk_id: str
    ordinal: int
    content: str
    start: int
    end: int
    metadata: Metadata = field(default_factory=lambda: _EMPTY)

    @property
    def key(self) -> ChunkKey:
        return ChunkKey(self.document_id, self.chunk_id)

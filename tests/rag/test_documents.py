"""Value objects: documents, chunks, identities and metadata."""

from __future__ import annotations

import dataclasses

import pytest

from runiq.rag import RagDocument, RagValidationError
from runiq.rag._documents import chunk_id_for, freeze_metadata
from runiq.rag.providers import ChunkKey, RagChunk


def test_chunk_id_is_document_id_and_ordinal() -> None:
    """Chunk ids are ``"{document_id}#{ordinal}"``, the same for the same inputs."""
    assert chunk_id_for("policies/hr.md", 3) == "policies/hr.md#3"
    assert chunk_id_for("policies/hr.md", 3) == chunk_id_for("policies/hr.md", 3)


def test_chunk_key_is_document_and_chunk_identity() -> None:
    """A chunk's key is ``(document_id, chunk_id)``."""
    chunk = RagChunk(document_id="d", chunk_id="d#0", ordinal=0, content="x", start=0, end=1)
    assert chunk.key == ChunkKey("d", "d#0")
    assert chunk.key.document_id == "d" and chunk.key.chunk_id == "d#0"


@pytest.mark.parametrize("document_id", ["", "   ", None, 7])
def test_document_requires_a_non_empty_string_id(document_id: object) -> None:
    """A blank or non-string document id is a RagValidationError."""
    with pytest.raises(RagValidationError):
        RagDocument(document_id=document_id, content="text")  # type: ignore[arg-type]


def test_document_content_must_be_a_string() -> None:
    """Non-string content is a RagValidationError."""
    with pytest.raises(RagValidationError):
        RagDocument(document_id="d", content=b"bytes")  # type: ignore[arg-type]


def test_document_metadata_is_a_read_only_copy() -> None:
    """Metadata is copied on construction and cannot be mutated afterwards."""
    source = {"title": "Remote work"}
    document = RagDocument(document_id="d", content="text", metadata=source)
    source["title"] = "changed"
    assert document.metadata["title"] == "Remote work"
    with pytest.raises(TypeError):
        document.metadata["title"] = "x"  # type: ignore[index]


def test_documents_are_frozen() -> None:
    """Documents are immutable values."""
    document = RagDocument(document_id="d", content="text")
    with pytest.raises(dataclasses.FrozenInstanceError):
        document.content = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    "metadata",
    [
        {"": "x"},
        {"  ": "x"},
        {"k": None},
        {"k": [None]},
        {"k": [[1]]},
        {"k": ({"a": 1},)},
        {"k": {"a": 1}},
        {"k": {1, 2}},
        {1: "x"},
    ],
)
def test_metadata_refuses_unfilterable_keys_and_values(metadata: dict[object, object]) -> None:
    """Metadata keys are non-empty strings; values are str, int, float or bool, or lists of those."""
    with pytest.raises(RagValidationError):
        freeze_metadata(metadata)  # type: ignore[arg-type]


def test_list_values_are_kept_as_read_only_tuples() -> None:
    """A list (or tuple) of scalars is copied into a tuple: the caller's list can change, the metadata cannot."""
    tags = ["hr", 3, 2.5, True]
    frozen = freeze_metadata({"tags": tags, "empty": [], "pair": ("a", "b")})
    tags.append("changed")
    assert dict(frozen) == {"tags": ("hr", 3, 2.5, True), "empty": (), "pair": ("a", "b")}


def test_list_metadata_hashes_like_the_same_tuple_and_apart_from_its_elements() -> None:
    """The content hash sees the list (as the tuple it is kept as), and order matters."""

    def digest(value: object) -> str:
        return RagDocument(document_id="d", content="text", metadata={"k": value}).content_hash("cfg")

    assert digest(["a", "b"]) == digest(("a", "b"))
    assert len({digest(["a", "b"]), digest(["b", "a"]), digest("a"), digest(["a"]), digest([])}) == 5


def test_metadata_accepts_scalars() -> None:
    """Strings, numbers and booleans are kept with their types."""
    frozen = freeze_metadata({"s": "a", "i": 1, "f": 1.5, "b": True})
    assert dict(frozen) == {"s": "a", "i": 1, "f": 1.5, "b": True}
    assert isinstance(frozen["b"], bool)


def test_content_hash_is_stable_and_covers_content_type_metadata_and_configuration() -> None:
    """The hash is deterministic and changes with content, content type, metadata or configuration."""
    base = RagDocument(document_id="d", content="text", metadata={"a": 1})
    same = RagDocument(document_id="d", content="text", metadata={"a": 1})
    assert base.content_hash("cfg") == same.content_hash("cfg")
    variants = {
        RagDocument(document_id="d", content="text!", metadata={"a": 1}).content_hash("cfg"),
        RagDocument(document_id="d", content="text", content_type="text/markdown", metadata={"a": 1}).content_hash(
            "cfg"
        ),
        RagDocument(document_id="d", content="text", metadata={"a": 2}).content_hash("cfg"),
        base.content_hash("other-cfg"),
    }
    assert base.content_hash("cfg") not in variants
    assert len(variants) == 4


def test_content_hash_ignores_metadata_insertion_order() -> None:
    """Metadata order does not change the hash."""
    first = RagDocument(document_id="d", content="t", metadata={"a": 1, "b": 2})
    second = RagDocument(document_id="d", content="t", metadata={"b": 2, "a": 1})
    assert first.content_hash() == second.content_hash()


@pytest.mark.parametrize(
    "document",
    [
        pytest.param(RagDocument(document_id="d", content="secret \udc80 text"), id="content"),
        pytest.param(RagDocument(document_id="d", content="t", content_type="text/\ud800x"), id="content type"),
        pytest.param(RagDocument(document_id="d", content="t", metadata={"k\udcff": "secret"}), id="metadata key"),
    ],
)
def test_content_hash_of_invalid_unicode_is_a_content_free_validation_error(document: RagDocument) -> None:
    """A lone surrogate cannot be hashed (nor stored or embedded): RagValidationError with a fixed message and
    no chained UnicodeEncodeError that would quote the character."""
    with pytest.raises(RagValidationError, match="lone surrogate") as raised:
        document.content_hash("cfg")
    assert raised.value.__cause__ is None and raised.value.__context__ is None
    assert "secret" not in repr(raised.value)

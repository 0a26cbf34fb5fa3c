"""InMemorySource: delivers the documents it was given."""

from __future__ import annotations

from runiq.rag import RagDocument
from runiq.rag._sources import InMemorySource
from runiq.rag.providers import DocumentSource


def _docs(*ids: str) -> list[RagDocument]:
    return [RagDocument(document_id=i, content=f"content of {i}") for i in ids]


async def test_read_returns_the_documents_without_failures() -> None:
    """The documents come back as given, with no failures."""
    documents = _docs("b", "a")
    result = await InMemorySource(documents).read()
    assert list(result.documents) == documents
    assert result.failures == ()


def test_source_is_a_snapshot_of_the_iterable() -> None:
    """Later changes to the caller's list do not change the source."""
    documents = _docs("a")
    source = InMemorySource(documents)
    documents.append(RagDocument(document_id="b", content="x"))
    assert [d.document_id for d in source.documents] == ["a"]


def test_identity_depends_on_document_ids() -> None:
    """Same ids give the same identity; different ids a different one."""
    assert InMemorySource(_docs("a", "b")).identity == InMemorySource(_docs("a", "b")).identity
    assert InMemorySource(_docs("a", "b")).identity != InMemorySource(_docs("a", "c")).identity
    source = InMemorySource(_docs("a"))
    assert isinstance(source, DocumentSource)
    assert source.source_kind == "in-memory"

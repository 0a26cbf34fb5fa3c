"""Lexical search in the in-memory store: identifier ranking, exact phrases and index maintenance."""

from __future__ import annotations

import numpy as np

from runiq.rag.providers import IndexSpec, InMemoryVectorStore, StoredDocument, parse_lexical_query
from runiq.rag.testing import make_chunks

TEXTS = {
    "whole": "Policy POL-HR-014 covers remote work.",
    "parts": "The HR team and the POL group publish 014 forms.",
    "phrase": "hybrid retrieval preserves exact phrase order",
    "reversed": "order phrase exact preserves retrieval hybrid",
    "code": "IRagRetriever in filename.cs raises CS1503",
}


async def _store(texts: dict[str, str] = TEXTS) -> InMemoryVectorStore:
    store = InMemoryVectorStore()
    await store.ensure_index(IndexSpec(name="ix", dimensions=None))
    for doc_id, text in texts.items():
        await store.replace_document(
            "ix", StoredDocument(document_id=doc_id, content_hash="h"), make_chunks(doc_id, [text]), None
        )
    return store


async def _ids(store: InMemoryVectorStore, text: str, top_k: int = 10) -> list[str]:
    return [h.document_id for h in await store.lexical_search("ix", parse_lexical_query(text), top_k=top_k)]


async def test_whole_identifier_outranks_scattered_parts() -> None:
    """A chunk containing POL-HR-014 ranks above one that only has its parts."""
    ids = await _ids(await _store(), "POL-HR-014")
    assert ids[:2] == ["whole", "parts"]


async def test_identifier_part_finds_the_identifier() -> None:
    """Searching for 'retriever' or 'cs' finds the chunk with IRagRetriever and filename.cs."""
    store = await _store()
    assert await _ids(store, "retriever") == ["code"]
    assert "code" in await _ids(store, "cs")


async def test_phrase_requires_order_and_adjacency() -> None:
    """'"exact phrase order"' finds only the in-order chunk; the reversed text does not match."""
    store = await _store()
    assert await _ids(store, '"exact phrase order"') == ["phrase"]
    assert await _ids(store, '"order phrase exact"') == ["reversed"]
    assert await _ids(store, '"hybrid preserves"') == []


async def test_phrase_is_case_insensitive_and_identifier_safe() -> None:
    """Phrases compare case-folded whole words, including identifiers."""
    store = await _store()
    assert await _ids(store, '"POLICY pol-hr-014 COVERS"') == ["whole"]
    assert await _ids(store, '"filename.cs raises cs1503"') == ["code"]


async def test_phrase_with_free_terms_restricts_to_phrase_matches() -> None:
    """Free terms score, but only chunks that contain the phrase are returned."""
    store = await _store()
    assert await _ids(store, 'CS1503 "exact phrase"') == ["phrase"]


async def test_two_phrases_must_both_match() -> None:
    """Several quoted phrases are AND-combined."""
    store = await _store()
    assert await _ids(store, '"hybrid retrieval" "phrase order"') == ["phrase"]
    assert await _ids(store, '"hybrid retrieval" "remote work"') == []


async def test_replaced_and_deleted_chunks_leave_the_lexical_index() -> None:
    """After a replace, old text is no longer found and new text is; a delete removes everything."""
    store = await _store()
    await store.replace_document(
        "ix", StoredDocument(document_id="code", content_hash="h2"), make_chunks("code", ["now about UseRag"]), None
    )
    assert "code" not in await _ids(store, "CS1503")
    assert await _ids(store, "UseRag") == ["code"]
    await store.delete_documents("ix", ["code"])
    assert await _ids(store, "UseRag") == []


async def test_lexical_ties_break_by_identity_and_top_k_truncates() -> None:
    """Equal lexical scores are ordered by (document_id, chunk_id); top_k bounds the list."""
    store = await _store({"b": "same words", "a": "same words", "c": "same words"})
    assert await _ids(store, "same") == ["a", "b", "c"]
    assert await _ids(store, "same", top_k=2) == ["a", "b"]


async def test_lexical_hits_report_bm25_semantics() -> None:
    """Lexical hits carry metric 'bm25', higher-is-better, positive finite raw scores and no relevance."""
    store = await _store()
    hits = await store.lexical_search("ix", parse_lexical_query("CS1503 remote"), top_k=5)
    assert hits
    assert all(h.metric == "bm25" and h.higher_is_better and h.relevance is None for h in hits)
    assert all(h.raw_score > 0 and np.isfinite(h.raw_score) for h in hits)
    assert [h.raw_score for h in hits] == sorted((h.raw_score for h in hits), reverse=True)

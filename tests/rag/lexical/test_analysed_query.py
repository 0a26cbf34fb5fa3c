"""A query analysed once into weighted terms, analysed phrases and a fragment, as every store reads it."""

from __future__ import annotations

from typing import Any

import pytest

from runiq.rag._lexical import AnalysedQuery, Analyzer, LexicalOptions, analyse_query
from runiq.rag._lexical.query import MAX_QUERY_TERMS
from runiq.rag.providers import IndexSpec, InMemoryVectorStore, StoredDocument, parse_lexical_query
from runiq.rag.testing import make_chunks

DEFAULT = LexicalOptions().analyzer()


def _analyse(text: str, analyzer: Analyzer = DEFAULT) -> AnalysedQuery:
    return analyse_query(parse_lexical_query(text), analyzer)


def test_terms_are_distinct_in_query_order_and_weighted_by_repetition() -> None:
    query = _analyse("remote work REMOTE policy of the remote")
    assert query.terms == ("remote", "work", "policy")
    assert query.weights == (3, 1, 1)
    assert query.phrases == ()


def test_stop_words_only_count_when_the_query_has_nothing_else() -> None:
    assert _analyse("the policy").terms == ("policy",)
    assert _analyse("the who").terms == ("the", "who")


def test_phrases_are_sequences_of_analysed_terms() -> None:
    """Stemmed with a stemming analyzer, stop words kept; the phrase words also score as terms."""
    stemming = LexicalOptions(stemmer="english").analyzer()
    query = _analyse('"Remote Working" "to be" policies', stemming)
    assert query.phrases == (("remot", "work"), ("to", "be"))
    assert query.terms == ("remot", "work", "polici")
    assert query.phrase_terms == ("remot", "work", "to", "be")
    assert _analyse('"Remote Working"').phrases == (("remote", "working"),)


def test_a_fragment_only_comes_from_a_lone_identifier_like_word() -> None:
    assert _analyse("S150").fragment == "s150"
    assert _analyse('S150 "remote"').fragment is None
    assert _analyse("S150 remote").fragment is None


def test_queries_with_nothing_to_rank_are_empty() -> None:
    assert _analyse("!!! ...").is_empty
    assert _analyse('""').is_empty
    assert not _analyse("the").is_empty


def test_the_number_of_terms_is_bounded() -> None:
    query = _analyse(" ".join(f"w{i}" for i in range(MAX_QUERY_TERMS + 50)))
    assert len(query.terms) == MAX_QUERY_TERMS


async def test_the_in_memory_store_analyses_a_query_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """One search tokenises the query text once, phrases and fragment included."""
    store = InMemoryVectorStore()
    await store.ensure_index(IndexSpec(name="ix", dimensions=None))
    chunks = make_chunks("d", ["Remote work policy POL-HR-014 and exact phrase order."])
    await store.replace_document("ix", StoredDocument(document_id="d", content_hash="h"), chunks, None)
    calls: list[str] = []
    query_terms = Analyzer.query_terms

    def counting(self: Analyzer, text: str) -> Any:
        calls.append(text)
        return query_terms(self, text)

    monkeypatch.setattr(Analyzer, "query_terms", counting)
    for text in ('remote "exact phrase" POL-HR-014', "S150", "policy"):
        calls.clear()
        await store.lexical_search("ix", parse_lexical_query(text), top_k=3)
        assert len(calls) == 1

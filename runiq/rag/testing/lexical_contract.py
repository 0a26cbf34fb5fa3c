"""Contract suites for lexical search: what a query means, the same in every store.

* :class:`LexicalSearchContract` (override ``store``): identifiers and phrases rank first, identifier
  fragments, the text a chunk is indexed under, filters, limits and hostile text, with the default
  analyzer.
* :class:`LexicalAnalyzerContract` (override ``open_store``): the same semantics under the analyzer
  options every lexical store takes (``stemmer="english"``, ``stopwords``).

The semantics are defined once, in :mod:`runiq.rag._lexical.analysed` (terms, phrases) and
:mod:`runiq.rag._lexical.fragments`; these suites pin them, including where the in-memory and
PostgreSQL stores once disagreed (a stemmed phrase, a fragment no token matches).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest

from runiq.errors import RagValidationError
from runiq.rag._lexical.options import LexicalOptions
from runiq.rag._lexical.query import parse_lexical_query
from runiq.rag._limits import MAX_CANDIDATES
from runiq.rag._stores.base import IndexSpec, LexicalSearch, StoreHit, VectorStore
from runiq.rag.testing._builders import index_name, stored_document, text_chunk, vectors

__all__ = ["IDENTIFIER_TEXTS", "LexicalAnalyzerContract", "LexicalSearchContract", "OpenStore"]

IDENTIFIER_TEXTS = {
    "hr": "Policy POL-HR-014 covers remote work for every employee.",
    "code": "The IRagRetriever interface lives in filename.cs and fails with CS1503.",
    "snake": "Call snake_case_name before the handler runs.",
    "phrase": "hybrid retrieval preserves exact phrase order in results",
    "other": "Unrelated text about travel expenses and receipts.",
}
# Every identifier's parts, repeated, in other documents: the whole identifier must still rank first.
PART_DISTRACTORS = {
    "parts-hr": "HR policy HR list: pol 014, pol 014, hr hr and the HR team.",
    "parts-code": "A retriever, a rag retriever, the i rag retriever, and cs 1503 cs 1503 filename cs files.",
    "parts-phrase": "order results, exact results, phrase results: order phrase exact order phrase exact.",
}
FRAGMENT_TEXTS = {
    "cs": "The build fails with CS1503 in filename.cs.",
    "near": "Error code S150 is unrelated to the build.",
    "part": "Order the replacement part S1503-A today.",
    "plain": "Plain words about policies and remote work.",
}

OpenStore = Callable[[LexicalOptions], AbstractAsyncContextManager[VectorStore]]


async def _index(store: VectorStore, texts: Mapping[str, str]) -> str:
    """A fresh index holding one one-chunk document per text, its chunk's ``kind`` metadata its id."""
    assert isinstance(store, LexicalSearch)
    name = index_name("lexical")
    await store.ensure_index(IndexSpec(name=name, dimensions=3, embedding_model="contract-model"))
    for doc_id, text in texts.items():
        chunk = text_chunk(doc_id, 0, text, kind=doc_id)
        await store.replace_document(name, stored_document(doc_id, kind=doc_id), [chunk], vectors([1, 0, 0]))
    return name


async def _hits(store: VectorStore, index: str, text: str, *, top_k: int = 5, **kwargs: Any) -> list[StoreHit]:
    assert isinstance(store, LexicalSearch)
    return await store.lexical_search(index, parse_lexical_query(text), top_k=top_k, **kwargs)


async def _ids(store: VectorStore, index: str, text: str, *, top_k: int = 5, **kwargs: Any) -> list[str]:
    return [hit.document_id for hit in await _hits(store, index, text, top_k=top_k, **kwargs)]


class LexicalSearchContract:
    """Override ``store`` to yield a store that also implements :class:`LexicalSearch`."""

    @pytest.fixture
    async def store(self) -> AsyncIterator[VectorStore]:
        raise NotImplementedError("override the 'store' fixture")
        yield  # pragma: no cover

    @pytest.fixture
    async def lexical_index(self, store: VectorStore) -> str:
        return await _index(store, IDENTIFIER_TEXTS)

    async def _search(self, store: VectorStore, index: str, text: str, **kwargs: Any) -> list[str]:
        return await _ids(store, index, text, top_k=kwargs.pop("top_k", 5), **kwargs)

    @pytest.mark.parametrize(
        ("query", "expected"),
        [
            ("POL-HR-014", "hr"),
            ("IRagRetriever", "code"),
            ("filename.cs", "code"),
            ("CS1503", "code"),
            ("snake_case_name", "snake"),
            ("cs1503", "code"),
        ],
    )
    async def test_identifiers_are_found_whole(
        self, store: VectorStore, lexical_index: str, query: str, expected: str
    ) -> None:
        """Punctuation-bearing identifiers rank their document first."""
        assert (await self._search(store, lexical_index, query))[0] == expected

    @pytest.mark.parametrize(
        ("query", "expected"),
        [
            ("POL-HR-014", "hr"),
            ("CS1503", "code"),
            ("IRagRetriever", "code"),
            ("filename.cs", "code"),
            ('"exact phrase order"', "phrase"),
            ('results "exact phrase"', "phrase"),
        ],
    )
    async def test_identifiers_and_phrases_outrank_their_parts(
        self, store: VectorStore, query: str, expected: str
    ) -> None:
        """Documents repeating an identifier's parts (``hr``, ``014``) or a phrase's words out of order
        never rank above the document holding the identifier or the phrase."""
        index = await _index(store, {**IDENTIFIER_TEXTS, **PART_DISTRACTORS})
        assert (await _ids(store, index, query))[0] == expected

    async def test_identifier_parts_are_searchable(self, store: VectorStore, lexical_index: str) -> None:
        """A part of an identifier (``Retriever``, ``HR``) still finds it."""
        assert "code" in await self._search(store, lexical_index, "retriever")
        assert "hr" in await self._search(store, lexical_index, "hr")

    async def test_quoted_phrase_requires_words_in_order(self, store: VectorStore, lexical_index: str) -> None:
        """``"exact phrase order"`` matches; ``"phrase exact order"`` does not."""
        assert await self._search(store, lexical_index, '"exact phrase order"') == ["phrase"]
        assert await self._search(store, lexical_index, '"phrase exact order"') == []

    async def test_phrase_mixed_with_free_terms(self, store: VectorStore, lexical_index: str) -> None:
        """A quoted part restricts results while free terms still score."""
        assert await self._search(store, lexical_index, 'results "exact phrase"') == ["phrase"]

    async def test_a_fragment_finds_the_identifiers_holding_it_after_the_ranked_results(
        self, store: VectorStore
    ) -> None:
        """``S150`` (one identifier-like word) also finds ``CS1503`` and ``S1503-A``, which no token
        matches: after the BM25 results, by document id, with a score of 0.0, within ``top_k``."""
        index = await _index(store, FRAGMENT_TEXTS)
        hits = await _hits(store, index, "S150")
        assert [hit.document_id for hit in hits] == ["near", "cs", "part"]
        assert hits[0].raw_score > 0.0
        assert [hit.raw_score for hit in hits[1:]] == [0.0, 0.0]
        assert await _ids(store, index, "S150", top_k=2) == ["near", "cs"]
        assert await _ids(store, index, "(s1503-a),") == ["part", "cs"]  # "cs" holds the part 1503
        assert await _ids(store, index, "1503") == ["cs", "part"]  # a part, then nothing more to add
        assert await _ids(store, index, "me.c") == ["cs"]

    async def test_only_a_lone_identifier_like_word_is_a_fragment(self, store: VectorStore) -> None:
        """Several words, a phrase, a plain word or fewer than three characters: no fragment matching."""
        index = await _index(store, FRAGMENT_TEXTS)
        assert await _ids(store, index, "S150 build") == ["near", "cs"]  # ranked by BM25 only
        assert await _ids(store, index, '"S150"') == ["near"]
        assert await _ids(store, index, "olicies") == []
        assert await _ids(store, index, "S1") == []

    async def test_fragment_matches_respect_filters(self, store: VectorStore) -> None:
        """The fragment's extra results pass the same metadata filter as the ranked ones."""
        index = await _index(store, FRAGMENT_TEXTS)
        assert await _ids(store, index, "S150", filters={"kind": "part"}) == ["part"]
        assert await _ids(store, index, "S150", filters={"kind": "plain"}) == []

    async def test_a_chunk_is_found_by_its_title_and_section_but_returns_its_content(self, store: VectorStore) -> None:
        """The ``title`` and ``section`` metadata are indexed with the chunk (never a file-name title),
        while the hit's content is the chunk's own text."""
        assert isinstance(store, LexicalSearch)
        name = index_name("lexical")
        await store.ensure_index(IndexSpec(name=name, dimensions=3, embedding_model="contract-model"))
        content = "Employees may apply after their probation period."
        chunk = text_chunk("guide.md", 1, content, title="Remote work guide", section="Policy > Eligibility")
        await store.replace_document(name, stored_document("guide.md"), [chunk], vectors([1, 0, 0]))
        named = text_chunk("handbook.md", 0, "Travel expenses are refunded monthly.", title="handbook")
        await store.replace_document(name, stored_document("handbook.md"), [named], vectors([1, 0, 0]))
        hits = await _hits(store, name, "remote eligibility")
        assert [(hit.chunk_id, hit.content) for hit in hits] == [(chunk.chunk_id, content)]
        assert await _ids(store, name, '"remote work guide"') == ["guide.md"]
        assert await _ids(store, name, "handbook") == []

    @pytest.mark.parametrize("text", ['"unbalanced', "!!! ??? ...", "\x00\x07 control", "word " * 5000, '""'])
    async def test_hostile_text_never_raises(self, store: VectorStore, lexical_index: str, text: str) -> None:
        """Odd user text returns results (possibly none) instead of raising."""
        await self._search(store, lexical_index, text)

    async def test_lexical_hits_have_lexical_score_semantics(self, store: VectorStore, lexical_index: str) -> None:
        """Lexical scores are higher-is-better with no invented relevance."""
        hits = await _hits(store, lexical_index, "CS1503")
        assert hits and all(h.higher_is_better and h.relevance is None and h.raw_score > 0 for h in hits)

    async def test_lexical_filters_and_top_k(self, store: VectorStore, lexical_index: str) -> None:
        """Filters restrict lexical results; top_k bounds them."""
        assert await self._search(store, lexical_index, "the", filters={"kind": "code"}) in (["code"], [])
        assert len(await self._search(store, lexical_index, "the policy receipts results", top_k=1)) <= 1

    async def test_lexical_filters_follow_the_same_equality(self, store: VectorStore) -> None:
        """Lexical search applies the vector search's filter equality and rejects the same bad filters."""
        assert isinstance(store, LexicalSearch)
        name = index_name("lexical")
        await store.ensure_index(IndexSpec(name=name, dimensions=3, embedding_model="contract-model"))
        for doc_id, value in (("int", 3), ("float", 3.0), ("bool", True), ("text", "3")):
            chunks = [text_chunk(doc_id, 0, "remote work policy", v=value)]
            await store.replace_document(name, stored_document(doc_id), chunks, vectors([1, 0, 0]))
        assert sorted(await self._search(store, name, "policy", filters={"v": 3.0})) == ["float", "int"]
        assert await self._search(store, name, "policy", filters={"v": True}) == ["bool"]
        assert await self._search(store, name, "policy", filters={"v": "3"}) == ["text"]
        assert await self._search(store, name, "policy", filters={"v": 1}) == []
        with pytest.raises(RagValidationError, match=r"^Filter"):
            await self._search(store, name, "policy", filters={"v": float("nan")})

    async def test_lexical_top_k_above_the_documented_maximum_is_a_validation_error(
        self, store: VectorStore, lexical_index: str
    ) -> None:
        """The same ``MAX_CANDIDATES`` bound as vector search, before any backend work."""
        assert len(await self._search(store, lexical_index, "policy", top_k=MAX_CANDIDATES)) >= 1
        for top_k in (0, MAX_CANDIDATES + 1, 2**63, 2**64):
            with pytest.raises(RagValidationError, match="top_k must be an integer from 1 to"):
                await self._search(store, lexical_index, "policy", top_k=top_k)

    async def test_deleted_documents_leave_the_lexical_index(self, store: VectorStore, lexical_index: str) -> None:
        """A deleted document is no longer found lexically."""
        await store.delete_documents(lexical_index, ["code"])
        assert "code" not in await self._search(store, lexical_index, "CS1503")


STEMMING_TEXTS = {
    "remote": "Remote work is allowed on Fridays.",
    "policies": "Retrieval policies for CS1503 and the IRagRetriever.",
    "hamlet": "To be or not to be, that is the question.",
    "band": "The Who played live.",
}


class LexicalAnalyzerContract:
    """Override ``open_store``: a factory that opens a store ranking with the given analyzer options
    (``stopwords``, ``stemmer``), e.g. ``lambda options: MyStore(stopwords=options.stopwords, ...)``
    wrapped in an async context manager. The stemming tests need PyStemmer (``runiq[stemming]``)."""

    @pytest.fixture
    def open_store(self) -> OpenStore:
        raise NotImplementedError("override the 'open_store' fixture")

    async def test_a_stemmed_phrase_matches_the_stemmed_words_in_order(self, open_store: OpenStore) -> None:
        """With ``stemmer="english"`` a phrase matches on analysed terms: ``"remote working"`` finds
        "Remote work is allowed", ``"working remote"`` does not, as its free words would match."""
        async with open_store(LexicalOptions(stemmer="english")) as store:
            index = await _index(store, STEMMING_TEXTS)
            assert await _ids(store, index, '"remote working"') == ["remote"]
            assert await _ids(store, index, "remote working") == ["remote"]
            assert await _ids(store, index, '"working remote"') == []
            assert await _ids(store, index, '"retrieving policy"') == ["policies"]

    async def test_stemming_leaves_identifiers_and_fragments_alone(self, open_store: OpenStore) -> None:
        """Identifiers are found whole, and a fragment matches the same chunks, whatever the stemmer."""
        for options in (LexicalOptions(stemmer="english"), LexicalOptions(stemmer="none")):
            async with open_store(options) as store:
                index = await _index(store, {**STEMMING_TEXTS, **FRAGMENT_TEXTS})
                assert (await _ids(store, index, "IRagRetriever"))[0] == "policies"
                assert (await _ids(store, index, "CS1503"))[:2] == ["cs", "policies"]  # a tie, by id
                assert await _ids(store, index, "S150") == ["near", "cs", "part", "policies"]

    async def test_stop_words_are_dropped_from_queries_but_kept_for_phrases(self, open_store: OpenStore) -> None:
        """English stop words do not score in a mixed query, yet a phrase of stop words and a query of
        nothing else still match."""
        async with open_store(LexicalOptions(stopwords="english")) as store:
            index = await _index(store, STEMMING_TEXTS)
            assert await _ids(store, index, '"to be or not to be"') == ["hamlet"]
            assert (await _ids(store, index, "the who"))[0] == "band"
            assert await _ids(store, index, "the question") == ["hamlet"]

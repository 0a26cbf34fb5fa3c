"""The vectorised engine against the straightforward BM25 it replaced: bit-identical scores, and the
same top k (ties cut by identity), across interleaved adds, replaces, removes and queries, for the
engine itself and through the in-memory store (phrases and filters included)."""

from __future__ import annotations

import asyncio
import math
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runiq.rag._documents import chunk_id_for
from runiq.rag._lexical import DEFAULT_ANALYZER, BM25Index
from runiq.rag._lexical.query import MAX_QUERY_TERMS, contains_phrase
from runiq.rag._lexical.tokenizer import Analyzer, primary_tokens
from runiq.rag.providers import IndexSpec, InMemoryVectorStore, RagChunk, StoredDocument, parse_lexical_query


class ReferenceBM25:
    """The straightforward implementation (the engine before vectorisation): ``term -> {row: tf}``
    dicts and a Python loop per posting, the formula written out inline."""

    def __init__(self, analyzer: Analyzer, k1: float = 1.5, b: float = 0.75) -> None:
        self.analyzer, self.k1, self.b = analyzer, k1, b
        self.postings: dict[str, dict[int, int]] = {}
        self.lengths: dict[int, int] = {}

    def add(self, row: int, text: str) -> None:
        self.remove(row)
        indexed = self.analyzer.indexed(text)
        self.lengths[row] = indexed.length
        for term, tf in indexed.counts.items():
            self.postings.setdefault(term, {})[row] = tf

    def remove(self, row: int) -> None:
        if self.lengths.pop(row, None) is None:
            return
        for term in [t for t, rows in self.postings.items() if rows.pop(row, None) is not None and not rows]:
            del self.postings[term]

    def scores(self, text: str) -> dict[int, float]:
        terms = self.analyzer.query_terms(text)[:MAX_QUERY_TERMS]
        n = len(self.lengths)
        total = sum(self.lengths.values())
        avgdl = total / n if total else 1.0
        acc: dict[int, float] = {}
        for term, qtf in Counter(terms).items():
            postings = self.postings.get(term, {})
            df = len(postings)
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            for row, tf in postings.items():
                norm = self.k1 * (1.0 - self.b + self.b * self.lengths[row] / avgdl)
                acc[row] = acc.get(row, 0.0) + qtf * (idf * tf / (tf + norm))
        return acc

    def top(self, text: str, k: int) -> list[tuple[int, float]]:
        return sorted(self.scores(text).items(), key=lambda item: (-item[1], item[0]))[:k]


def _scores(index: BM25Index, text: str) -> dict[int, float]:
    rows, values = index.scores(text)
    return dict(zip(rows.tolist(), values.tolist(), strict=True))


def _top(index: BM25Index, text: str, k: int) -> list[tuple[int, float]]:
    return sorted(_scores(index, text).items(), key=lambda item: (-item[1], item[0]))[:k]


WORDS = ["alpha", "beta", "gamma", "delta", "the", "POL-HR-014", "CS1503", "filename.cs", "IRagRetriever"]
texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join)
queries = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
operations = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["add", "remove", "remove_text"]), st.integers(min_value=0, max_value=9), texts),
        st.tuples(st.just("query"), st.integers(min_value=1, max_value=5), queries),
    ),
    min_size=1,
    max_size=50,
)


@settings(max_examples=150, deadline=None)
@given(operations, queries)
def test_top_k_equals_the_reference_across_adds_replaces_and_removes(
    ops: list[tuple[str, int, str]], final_query: str
) -> None:
    """Interleaved writes and queries: every score is bit-identical to the per-posting reference, so
    the top k (ties by row) is identical too; an add on a live row is a replace."""
    index = BM25Index(DEFAULT_ANALYZER)
    reference = ReferenceBM25(DEFAULT_ANALYZER)
    live: dict[int, str] = {}
    for op, number, text in ops:
        if op == "add":
            index.add(number, text)
            reference.add(number, text)
            live[number] = text
        elif op == "remove":
            index.remove(number)
            reference.remove(number)
            live.pop(number, None)
        elif op == "remove_text":
            if number in live:
                index.remove_text(number, live.pop(number))
                reference.remove(number)
        else:
            assert _top(index, text, number) == reference.top(text, number)
    assert len(index) == len(live)
    assert _scores(index, final_query) == reference.scores(final_query)


# -- through the store --------------------------------------------------------------------------

DOCS = [f"d{i}" for i in range(5)]
chunk_texts = st.lists(texts, min_size=0, max_size=3)
store_writes = st.one_of(
    st.tuples(st.just("replace"), st.sampled_from(DOCS), chunk_texts, st.sampled_from(["a", "b"])),
    st.tuples(st.just("delete"), st.sampled_from(DOCS), st.just([]), st.just("")),
)
store_queries = st.tuples(
    queries,
    st.sampled_from(["", '"alpha beta"', '"the gamma"', '"cs1503"']),
    st.integers(min_value=1, max_value=6),
    st.sampled_from([None, "a"]),
)


def _expected(
    live: dict[str, tuple[list[str], str]], text: str, top_k: int, team: str | None
) -> list[tuple[str, str, float]]:
    """The store's contract computed from the reference: BM25 over every live chunk, phrase matches
    only (a phrase match scores 0.0 without other terms), the filter, then (-score, document, chunk)."""
    query = parse_lexical_query(text)
    chunks = [
        (doc, chunk_id_for(doc, i), content, chunk_team)
        for doc, (contents, chunk_team) in live.items()
        for i, content in enumerate(contents)
    ]
    reference = ReferenceBM25(DEFAULT_ANALYZER)
    for row, (_, _, content, _) in enumerate(chunks):
        reference.add(row, content)
    scored = reference.scores(query.text)
    phrases = query.phrase_tokens
    if phrases:
        scored = {
            row: scored.get(row, 0.0)
            for row, (_, _, content, _) in enumerate(chunks)
            if all(contains_phrase(primary_tokens(content), phrase) for phrase in phrases)
        }
    if team is not None:
        scored = {row: score for row, score in scored.items() if chunks[row][3] == team}
    ranked = sorted(scored.items(), key=lambda item: (-item[1], chunks[item[0]][0], chunks[item[0]][1]))[:top_k]
    return [(chunks[row][0], chunks[row][1], score) for row, score in ranked]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(store_writes, store_queries), min_size=1, max_size=12))
def test_store_lexical_search_equals_the_reference(
    steps: list[tuple[tuple[str, str, list[str], str], tuple[str, str, int, str | None]]],
) -> None:
    """After every replace or delete (rows are reused), the store returns exactly the reference's
    ranking: same chunks, same order, bit-identical raw scores."""

    async def scenario() -> None:
        store = InMemoryVectorStore()
        await store.ensure_index(IndexSpec(name="ix", dimensions=None))
        live: dict[str, tuple[list[str], str]] = {}
        for (op, doc, chunks, team), (text, phrase, top_k, wanted) in steps:
            if op == "replace":
                await store.replace_document(
                    "ix", StoredDocument(document_id=doc, content_hash="h"), _chunks(doc, chunks, team), None
                )
                live[doc] = (chunks, team)
            else:
                await store.delete_documents("ix", [doc])
                live.pop(doc, None)
            query = f"{phrase} {text}".strip()
            filters = None if wanted is None else {"team": wanted}
            hits = await store.lexical_search("ix", parse_lexical_query(query), top_k=top_k, filters=filters)
            got = [(h.document_id, h.chunk_id, h.raw_score) for h in hits]
            assert got == _expected(live, query, top_k, wanted)

    asyncio.run(scenario())


def _chunks(doc: str, texts_: list[str], team: str) -> list[RagChunk]:
    return [
        RagChunk(
            document_id=doc,
            chunk_id=chunk_id_for(doc, i),
            ordinal=i,
            content=text,
            start=0,
            end=len(text),
            metadata={"team": team},
        )
        for i, text in enumerate(texts_)
    ]

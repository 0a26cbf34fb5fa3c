"""MaxScore pruning of BM25 candidates: the same top k as the full search, with fewer candidates."""

from __future__ import annotations

import random
from dataclasses import replace

import asyncpg
import numpy as np
import pytest

from runiq.rag import IndexSpec, InMemoryVectorStore, StoredDocument, parse_lexical_query
from runiq.rag.testing import make_chunks
from runiq_postgresql import PostgresVectorStore, pruning

COMMON = ["remote", "work", "policy", "travel", "expense", "office", "team", "report"]
RARE = [f"rare{i}" for i in range(40)]


def test_rare_terms_are_the_rarest_within_the_budget() -> None:
    frequencies = {"a": 50, "b": 5, "c": 20, "d": 0, "e": 5}
    assert pruning.rare_terms(frequencies, budget=30) == ["b", "e", "c"]
    assert pruning.rare_terms(frequencies, budget=4) == []  # even the rarest is over budget: no first pass
    assert "d" not in pruning.rare_terms(frequencies, budget=1000)  # unknown terms hold no chunk


async def test_a_query_of_common_terms_only_runs_one_full_search(
    pg_store: PostgresVectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When no term is rare enough, there is no first pass: one statement scores the candidates."""
    monkeypatch.setattr(pruning, "FIRST_PASS_CHUNKS", 1)
    monkeypatch.setattr(pruning, "_PRUNE_ABOVE_CHUNKS", 0)
    await pg_store.ensure_index(IndexSpec(name="common", dimensions=3, embedding_model="m"))
    for d in range(5):
        doc_id = f"doc-{d}"
        document = StoredDocument(document_id=doc_id, content_hash="h")
        await pg_store.replace_document("common", document, make_chunks(doc_id, ["remote work"]), np.ones((1, 3)))
    searches = []
    index = await pg_store._require("common")
    sql = index.sql.lexical(filtered=False, phrases=False)
    original = asyncpg.Connection.fetch

    async def counting(self: asyncpg.Connection, query: str, *args: object, **kwargs: object) -> object:
        if query == sql:
            searches.append(args[3])
        return await original(self, query, *args, **kwargs)

    monkeypatch.setattr(asyncpg.Connection, "fetch", counting)
    hits = await pg_store.lexical_search("common", parse_lexical_query("remote work"), top_k=3)
    assert [h.document_id for h in hits] == ["doc-0", "doc-1", "doc-2"]
    assert searches == ["'remote' | 'work'"]


def test_candidate_terms_drop_the_smallest_bounds_that_stay_below_theta() -> None:
    bounds = {"common": 0.2, "usual": 0.5, "rare": 4.0, "rarer": 6.0}
    assert pruning.candidate_terms(bounds, theta=0.8) == ["rare", "rarer"]  # 0.2 + 0.5 < 0.8
    assert pruning.candidate_terms(bounds, theta=0.7) == ["usual", "rare", "rarer"]  # 0.7 is not clearly below
    assert pruning.candidate_terms(bounds, theta=0.1) == list(bounds)


def test_pruning_is_only_tried_for_several_terms_over_many_postings() -> None:
    assert not pruning.worth_pruning({"a": 100_000})
    assert not pruning.worth_pruning({"a": 10, "b": 10})
    assert pruning.worth_pruning({"a": 9_000, "b": 10})


def _corpus(seed: int, documents: int = 240) -> dict[str, list[str]]:
    rng = random.Random(seed)
    corpus = {}
    for d in range(documents):
        words = [rng.choice(COMMON) for _ in range(rng.randint(4, 40))]
        words += rng.sample(RARE, rng.randint(0, 2))
        rng.shuffle(words)
        corpus[f"doc-{d:03d}"] = [" ".join(words)]
    return corpus


async def test_pruned_searches_return_the_full_searchs_top_k(
    pg_store: PostgresVectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With tiny thresholds every multi-term query prunes; keys, scores and tie order equal the in-memory BM25."""
    monkeypatch.setattr(pruning, "FIRST_PASS_CHUNKS", 12)
    monkeypatch.setattr(pruning, "_PRUNE_ABOVE_CHUNKS", 0)
    pruned = []
    original = pruning.candidate_terms

    def spying(bounds: dict[str, float], theta: float) -> list[str]:
        needed = original(bounds, theta)
        pruned.append(len(needed) < len(bounds))
        return needed

    monkeypatch.setattr(pruning, "candidate_terms", spying)
    memory = InMemoryVectorStore()
    corpus = _corpus(5)
    for store in (pg_store, memory):
        await store.ensure_index(IndexSpec(name="prune", dimensions=3, embedding_model="m"))
        for doc_id, texts in corpus.items():
            metadata = {"half": int(doc_id[-1]) % 2}
            await store.replace_document(
                "prune",
                StoredDocument(document_id=doc_id, content_hash="h", metadata=metadata),
                [replace(chunk, metadata=metadata) for chunk in make_chunks(doc_id, texts)],
                np.ones((len(texts), 3)),
            )
    rng = random.Random(9)
    for _ in range(40):
        text = " ".join(rng.sample(COMMON, rng.randint(1, 4)) + rng.sample(RARE, rng.randint(1, 3)))
        query = parse_lexical_query(text)
        for top_k in (1, 3, 10):
            for filters in (None, {"half": 1}):
                expected = await memory.lexical_search("prune", query, top_k=top_k, filters=filters)
                actual = await pg_store.lexical_search("prune", query, top_k=top_k, filters=filters)
                assert [h.key for h in actual] == [h.key for h in expected], (text, top_k, filters)
                for a, e in zip(actual, expected, strict=True):
                    assert a.raw_score == pytest.approx(e.raw_score, rel=1e-9, abs=1e-12)
    assert sum(pruned) > len(pruned) // 2  # the candidate search really was narrowed, most of the time

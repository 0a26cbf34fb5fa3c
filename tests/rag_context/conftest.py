"""Building blocks for the context policy tests: hits, a scripted retriever and controllable rerankers.

Test modules run under ``--import-mode=importlib``, so everything is handed out through the ``kit``
fixture rather than imported from this file.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
import structlog
import structlog.testing

from runiq.rag import RagQuery, RagRetrievalHit, RagRetrievalMode, RagRetrievalProvenance, RagRetrievalResult
from runiq.rag._reranking import (
    RagAnswerability,
    RagRerankCandidateResult,
    RagRerankRequest,
    RagRerankResponse,
)
from runiq.rag._retrieval import RagRetrievalStatistics, SourceRank
from runiq.rag.testing import CANARY


def hit(
    document_id: str,
    chunk: int = 0,
    content: str | None = None,
    *,
    relevance: float | None = 0.9,
    raw_score: float | None = None,
    metric: str | None = "cosine",
    higher_is_better: bool | None = True,
    lexical_rank: int | None = None,
    semantic: bool = True,
) -> RagRetrievalHit:
    """A retrieval hit; ``semantic=False`` makes a lexical-only hit (no semantic scores)."""
    if content is None:
        content = f"Distinct content of {document_id} chunk {chunk} about topic number {chunk} in {document_id}."
    if not semantic:
        relevance, raw_score, metric, higher_is_better = None, None, None, None
        lexical_rank = lexical_rank or 1
    elif raw_score is None and relevance is not None:
        raw_score = relevance * 2 - 1
    lexical = SourceRank(rank=lexical_rank, raw_score=4.2, metric="bm25") if lexical_rank else None
    semantic_source = (
        SourceRank(rank=1, raw_score=raw_score, metric=metric)
        if semantic and raw_score is not None and metric
        else None
    )
    mode = (
        RagRetrievalMode.HYBRID
        if lexical and semantic_source
        else RagRetrievalMode.LEXICAL
        if lexical
        else RagRetrievalMode.SEMANTIC
    )
    return RagRetrievalHit(
        document_id=document_id,
        chunk_id=f"{document_id}#{chunk}",
        content=content,
        metadata={"title": document_id},
        rank=1,
        raw_score=raw_score,
        metric=metric,
        higher_is_better=higher_is_better,
        relevance=relevance,
        provenance=RagRetrievalProvenance(mode=mode, semantic=semantic_source, lexical=lexical),
    )


class ScriptedRetriever:
    """Returns the given hits (ranked by position) for every query and records the queries."""

    def __init__(
        self, hits: Sequence[RagRetrievalHit] = (), mode: RagRetrievalMode = RagRetrievalMode.SEMANTIC
    ) -> None:
        self.hits = tuple(dataclasses.replace(h, rank=i) for i, h in enumerate(hits, start=1))
        self.mode = mode
        self.queries: list[RagQuery] = []

    async def retrieve(self, query: RagQuery) -> RagRetrievalResult:
        self.queries.append(query)
        return RagRetrievalResult(
            index_name=query.index_name,
            mode=self.mode,
            hits=self.hits,
            statistics=RagRetrievalStatistics(semantic_candidates=len(self.hits)),
            duration_seconds=0.001,
        )


class ScoringReranker:
    """Scores each candidate with ``score(candidate) -> (relevance, answerability)``; records requests."""

    provider_name = "scoring"
    remote = False

    def __init__(
        self,
        score: Callable[[Any], tuple[float, RagAnswerability]] | None = None,
        answerability: RagAnswerability = RagAnswerability.ANSWERABLE,
    ) -> None:
        self.score = score or (lambda c: (1.0 / (1 + c.original_rank), RagAnswerability.UNKNOWN))
        self.answerability = answerability
        self.requests: list[RagRerankRequest] = []

    async def rerank(self, request: RagRerankRequest) -> RagRerankResponse:
        self.requests.append(request)
        results = []
        for c in request.candidates:
            relevance, answerability = self.score(c)
            results.append(
                RagRerankCandidateResult(
                    document_id=c.document_id, chunk_id=c.chunk_id, relevance=relevance, answerability=answerability
                )
            )
        return RagRerankResponse(candidates=tuple(results), answerability=self.answerability)


class RespondingReranker:
    """Returns ``respond(request)`` verbatim, whatever it is (invalid shapes)."""

    provider_name = "responding"
    remote = False

    def __init__(self, respond: Callable[[RagRerankRequest], object]) -> None:
        self.respond = respond
        self.calls = 0

    async def rerank(self, request: RagRerankRequest) -> Any:
        self.calls += 1
        return self.respond(request)


class SlowReranker:
    """Sleeps ``delay`` seconds; records whether it saw the cancellation."""

    provider_name = "slow"
    remote = False

    def __init__(self, delay: float = 10.0, *, swallow: bool = False) -> None:
        self.delay = delay
        self.swallow = swallow
        self.started = asyncio.Event()
        self.cancelled = False

    async def rerank(self, request: RagRerankRequest) -> RagRerankResponse:
        self.started.set()
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled = True
            if not self.swallow:
                raise
        return RagRerankResponse(
            candidates=tuple(
                RagRerankCandidateResult(document_id=c.document_id, chunk_id=c.chunk_id, relevance=0.5)
                for c in request.candidates
            )
        )


class RaisingReranker:
    """Raises ``error(request)``; by default an exception whose text echoes the query and content."""

    provider_name = "raising"
    remote = False

    def __init__(self, error: Callable[[RagRerankRequest], BaseException] | None = None) -> None:
        self.error = error or (
            lambda r: RuntimeError(f"upstream echoed {r.query} / {' | '.join(c.content for c in r.candidates)}")
        )

    async def rerank(self, request: RagRerankRequest) -> RagRerankResponse:
        raise self.error(request)


class RemoteReranker(ScoringReranker):
    provider_name = "remote-api"
    remote = True


class UndeclaredReranker:
    """Declares neither provider_name nor remote: treated as remote (fail closed)."""

    async def rerank(self, request: RagRerankRequest) -> RagRerankResponse:
        raise AssertionError("must never be called")


@dataclasses.dataclass
class Kit:
    hit: Callable[..., RagRetrievalHit] = hit
    Retriever: type[ScriptedRetriever] = ScriptedRetriever
    ScoringReranker: type[ScoringReranker] = ScoringReranker
    RespondingReranker: type[RespondingReranker] = RespondingReranker
    SlowReranker: type[SlowReranker] = SlowReranker
    RaisingReranker: type[RaisingReranker] = RaisingReranker
    RemoteReranker: type[RemoteReranker] = RemoteReranker
    UndeclaredReranker: type[UndeclaredReranker] = UndeclaredReranker
    canary: str = CANARY

    @staticmethod
    def query(text: str = "remote work policy", index_name: str = "docs", top_k: int = 20) -> RagQuery:
        return RagQuery(index_name=index_name, text=text, top_k=top_k)


@pytest.fixture
def kit() -> Kit:
    return Kit()


@pytest.fixture
def logs() -> Iterator[list[dict[str, Any]]]:
    """Every structlog event of the test, at every level.

    ``capture_logs`` swaps the processors only; a level-filtering wrapper left behind by another test
    (``configure_logging`` in the CLI tests) would hide info events, so the defaults are restored for
    the capture and the previous configuration afterwards.
    """
    saved = structlog.get_config()
    structlog.reset_defaults()
    try:
        with structlog.testing.capture_logs() as captured:
            yield captured
    finally:
        structlog.configure(**saved)

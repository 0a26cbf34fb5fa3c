"""The :class:`~runiq.rag.RagReranker` over a rerank API: batching, concurrency, merging, the contract.

A request's candidates are split into batches of ``batch_size`` documents (the backend's per-request
limit), each sent with the same query; at most ``max_concurrency`` batches of this reranker are in
flight at once, across all callers. Rerank APIs score each (query, document) pair on its own, so
scores from different batches are on one scale and are merged by position. Any failing batch fails
the whole call (all-or-nothing: the context policy then falls back or fails as configured).

Rerank APIs carry no answerability signal, so every candidate and the aggregate are ``UNKNOWN``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from runiq.errors import first_leaf
from runiq.rag.providers import RagAnswerability, RagRerankCandidateResult, RagRerankRequest, RagRerankResponse

from runiq_rerank_http.options import PROVIDER_NAME, HttpRerankerOptions
from runiq_rerank_http.transport import RerankTransport
from runiq_rerank_http.wire import parse_relevances, request_body

__all__ = ["HttpReranker", "batches"]


def batches(count: int, size: int) -> list[slice]:
    """Consecutive slices of at most ``size`` positions covering ``range(count)``."""
    return [slice(start, min(start + size, count)) for start in range(0, count, size)]


class HttpReranker:
    """Remote: ``remote`` is ``True``, so the host must approve it (``use_reranker(..., approved=True)``)."""

    provider_name = PROVIDER_NAME
    remote = True

    def __init__(self, transport: RerankTransport, options: HttpRerankerOptions) -> None:
        self._transport = transport
        self._options = options
        self._semaphore = asyncio.Semaphore(options.max_concurrency)

    async def rerank(self, request: RagRerankRequest) -> RagRerankResponse:
        documents = [candidate.content for candidate in request.candidates]
        plan = batches(len(documents), self._options.batch_size)
        if len(plan) == 1:
            relevances = await self._score(request.query, documents)
        else:
            relevances = await self._score_batches(request.query, documents, plan)
        results = tuple(
            RagRerankCandidateResult(
                document_id=candidate.document_id,
                chunk_id=candidate.chunk_id,
                relevance=relevance,
                answerability=RagAnswerability.UNKNOWN,
            )
            for candidate, relevance in zip(request.candidates, relevances, strict=True)
        )
        return RagRerankResponse(candidates=results, answerability=RagAnswerability.UNKNOWN)

    async def _score_batches(self, query: str, documents: Sequence[str], plan: list[slice]) -> list[float]:
        failure: BaseException | None = None
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(self._score(query, documents[part])) for part in plan]
        except BaseExceptionGroup as failures:  # the first batch's content-free error stands for the call
            failure = first_leaf(failures)
        if failure is not None:
            raise failure  # outside the handler: no __context__ to carry the group along
        return [relevance for task in tasks for relevance in task.result()]

    async def _score(self, query: str, documents: Sequence[str]) -> list[float]:
        body = request_body(self._options, query, documents)
        async with self._semaphore:
            payload = await self._transport.post(body)
        return parse_relevances(payload, len(documents), self._options, PROVIDER_NAME)

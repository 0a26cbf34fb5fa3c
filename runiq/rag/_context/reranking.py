"""The reranking step of the policy path: bound, call under a deadline, validate, reorder or fall back.

1. Disabled: no call, accepted order. Nothing accepted: no call (``skipped``).
2. Resolve the reranker; none is ``reranker_unavailable``; a remote one without approval is
   ``reranker_not_approved`` (and nothing is sent).
3. Send the first ``maximum_candidates`` accepted candidates under ``asyncio.timeout``. The deadline
   is ``reranker_timeout``; any exception ``reranker_failed``; a response that breaks the contract
   ``reranker_invalid_response``. The caller's own cancellation propagates untouched.
4. Success: the sent head is ordered by rerank relevance (desc), then original rank, document id and
   chunk id; the unsent tail follows in accepted order. Hits are not modified.
5. Failure: ``use_retrieval_order`` keeps the accepted order (``fallback``); ``fail`` raises.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from runiq.errors import RagError, translated
from runiq.logging import get_logger
from runiq.rag._context.options import RerankerFailurePolicy, RerankingOptions
from runiq.rag._context.results import RagRerankingOutcome, RagRerankingReport, RagRerankScore
from runiq.rag._documents import ChunkKey
from runiq.rag._reranking.errors import (
    RerankerError,
    RerankerNotApprovedError,
    RerankerResponseError,
    RerankerTimeoutError,
    RerankerUnavailableError,
    RerankingFailureCode,
)
from runiq.rag._reranking.registration import RerankerRegistration
from runiq.rag._reranking.types import RagRerankCandidate, RagRerankRequest
from runiq.rag._reranking.validation import ValidatedRerank, validate_rerank_response
from runiq.rag._retrieval.results import RagRetrievalHit

__all__ = ["RerankStep", "RerankStepFailed", "run_reranking"]

log = get_logger(__name__)

Resolve = Callable[[], Awaitable[RerankerRegistration | None]]


@dataclass(frozen=True, slots=True)
class RerankStep:
    order: tuple[RagRetrievalHit, ...]
    scores: Mapping[ChunkKey, RagRerankScore]
    report: RagRerankingReport


class RerankStepFailed(Exception):  # internal signal, never escapes the context package
    def __init__(self, report: RagRerankingReport, error: RagError) -> None:
        super().__init__(report.failure_code)
        self.report = report
        self.error = error


@dataclass(frozen=True, slots=True)
class _Failure:
    error: RagError
    provider: str | None
    ran: bool = False
    candidates: int = 0
    duration: float = 0.0
    timed_out: bool = False


def _failure_code(error: RagError) -> RerankingFailureCode:
    if isinstance(error, RerankerError | RerankerNotApprovedError):
        return error.code
    return RerankingFailureCode.FAILED


def _fail(
    failure: _Failure, options: RerankingOptions, accepted: Sequence[RagRetrievalHit], index_name: str
) -> RerankStep:
    error = failure.error
    code = _failure_code(error)
    fallback = options.on_failure is RerankerFailurePolicy.USE_RETRIEVAL_ORDER
    report = RagRerankingReport(
        outcome=RagRerankingOutcome.FALLBACK if fallback else RagRerankingOutcome.FAILED,
        failure_policy=options.on_failure,
        provider=failure.provider,
        ran=failure.ran,
        candidate_count=failure.candidates,
        duration_seconds=failure.duration,
        timed_out=failure.timed_out,
        failure_code=code,
        violation=error.violation if isinstance(error, RerankerResponseError) else None,
        cause_type=getattr(error, "cause_type", None),
    )
    log.warning(
        "reranking.failed",
        index_name=index_name,
        provider=report.provider,
        failure_code=code.value,
        violation=report.violation.value if report.violation else None,
        cause_type=report.cause_type,
        timed_out=report.timed_out,
        candidate_count=report.candidate_count,
        duration_ms=round(report.duration_seconds * 1000, 3),
        action="fallback" if fallback else "fail",
    )
    if not fallback:
        raise RerankStepFailed(report, error)
    return RerankStep(tuple(accepted), {}, report)


async def _call(registration: RerankerRegistration, request: RagRerankRequest, seconds: float) -> ValidatedRerank:
    provider = registration.provider_name
    deadline = asyncio.timeout(seconds)

    async def rerank() -> object:
        async with deadline:
            return await registration.reranker.rerank(request)

    def translate(exc: Exception) -> RerankerError:
        # Our deadline, or the provider's own timeout; either way its text is not kept.
        if isinstance(exc, TimeoutError):
            if deadline.expired():
                return RerankerTimeoutError(provider, seconds)
            return RerankerTimeoutError(provider, cause_type=type(exc).__name__)
        return RerankerError(provider, cause_type=type(exc).__name__)

    response = await translated(rerank, translate)
    if deadline.expired():  # the provider swallowed the cancellation and answered late
        raise RerankerTimeoutError(provider, seconds)
    return validate_rerank_response(request, response, provider=provider)


async def _attempt(
    registration: RerankerRegistration, request: RagRerankRequest, seconds: float
) -> ValidatedRerank | _Failure:
    """Call the reranker; a failure comes back as a value, so the step fails outside any ``except``."""
    started = time.perf_counter()
    try:
        return await _call(registration, request, seconds)
    except RerankerError as exc:  # content-free and unchained: raised by runiq outside an ``except``
        return _Failure(
            exc,
            registration.provider_name,
            ran=True,
            candidates=len(request.candidates),
            duration=time.perf_counter() - started,
            timed_out=isinstance(exc, RerankerTimeoutError) and exc.cause_type is None,
        )


async def _resolved(resolve: Resolve) -> RerankerRegistration | _Failure | None:
    def translate(exc: Exception) -> RerankerError:  # the provider factory could not open it
        return RerankerError("<unresolved>", "the reranker could not be opened", cause_type=type(exc).__name__)

    try:
        return await translated(resolve, translate)
    except RerankerError as exc:
        return _Failure(exc, None)


def _reorder(
    accepted: Sequence[RagRetrievalHit], head: Sequence[RagRerankCandidate], validated: ValidatedRerank
) -> tuple[tuple[RagRetrievalHit, ...], dict[ChunkKey, RagRerankScore]]:
    def order(candidate: RagRerankCandidate) -> tuple[float, int, str, str]:
        relevance = validated.scores[candidate.key][0]
        return (-relevance, candidate.original_rank, candidate.document_id, candidate.chunk_id)

    ranked = sorted(head, key=order)
    scores = {
        c.key: RagRerankScore(relevance=validated.scores[c.key][0], answerability=validated.scores[c.key][1], rank=r)
        for r, c in enumerate(ranked, start=1)
    }
    by_rank = {i: hit for i, hit in enumerate(accepted, start=1)}
    return tuple(by_rank[c.original_rank] for c in ranked) + tuple(accepted[len(head) :]), scores


async def run_reranking(
    query_text: str,
    accepted: Sequence[RagRetrievalHit],
    options: RerankingOptions,
    resolve: Resolve,
    *,
    index_name: str,
) -> RerankStep:
    """Run the step; raises :class:`RerankStepFailed` when it failed and the policy is ``fail``."""
    if not options.enabled or not accepted:
        outcome = RagRerankingOutcome.DISABLED if not options.enabled else RagRerankingOutcome.SKIPPED
        return RerankStep(tuple(accepted), {}, RagRerankingReport(outcome=outcome, failure_policy=options.on_failure))
    registration = await _resolved(resolve)
    if isinstance(registration, _Failure):
        return _fail(registration, options, accepted, index_name)
    if registration is None:
        return _fail(_Failure(RerankerUnavailableError(), None), options, accepted, index_name)
    provider = registration.provider_name
    if not registration.permitted:
        return _fail(_Failure(RerankerNotApprovedError(provider), provider), options, accepted, index_name)
    head = [
        RagRerankCandidate(document_id=h.document_id, chunk_id=h.chunk_id, content=h.content, original_rank=rank)
        for rank, h in enumerate(accepted[: options.maximum_candidates], start=1)
    ]
    request = RagRerankRequest(query=query_text, candidates=tuple(head))
    started = time.perf_counter()
    validated = await _attempt(registration, request, options.timeout_seconds)
    if isinstance(validated, _Failure):
        return _fail(validated, options, accepted, index_name)
    duration = time.perf_counter() - started
    order, scores = _reorder(accepted, head, validated)
    report = RagRerankingReport(
        outcome=RagRerankingOutcome.SUCCEEDED,
        failure_policy=options.on_failure,
        provider=provider,
        ran=True,
        candidate_count=len(head),
        duration_seconds=duration,
        answerability=validated.answerability,
    )
    log.info(
        "reranking.completed",
        index_name=index_name,
        provider=provider,
        candidate_count=len(head),
        answerability=validated.answerability.value,
        duration_ms=round(duration * 1000, 3),
    )
    return RerankStep(order, scores, report)

"""``RagContextAssembler``: the single runtime policy path from a query to the context a model may see.

Order (one place, every caller)::

    retrieval -> acceptance (invalid scores, threshold, null-relevance policy)
              -> duplicate filtering (identity, normalised content, near-identical content)
              -> limits (per document, maximum accepted results)
              -> optional reranking (candidate limit, timeout, fallback or fail)
              -> grounding enforcement (answerability)
              -> context budget (characters or approximate tokens, first fit in the final order)

Retrieval failures propagate as they are (the retriever's errors are content-free); nothing is
silently turned into "no context". Hits are never modified: the result holds the retrieval hits
themselves, with reranker scores beside them. Logs carry the index name, counts, codes and
durations, never the query or any content.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from runiq.errors import RagConfigurationError, chained, translated
from runiq.logging import get_logger
from runiq.rag._context.acceptance import AcceptanceResult, evaluate_acceptance
from runiq.rag._context.budget import measure, select_within_budget
from runiq.rag._context.options import GroundingOptions, RagContextOptions
from runiq.rag._context.reranking import RerankStep, RerankStepFailed, run_reranking
from runiq.rag._context.results import (
    RagCandidateDecision,
    RagContextBudgetReport,
    RagContextItem,
    RagContextOutcome,
    RagContextResult,
    RagDecisionReason,
    RagNoContextReason,
    RagRerankingOutcome,
)
from runiq.rag._documents import ChunkKey
from runiq.rag._observability.otel import rerank_span
from runiq.rag._reranking.errors import RerankerNotApprovedError, RerankingFailedError
from runiq.rag._reranking.registration import RerankerRegistration, RerankerResolver
from runiq.rag._reranking.types import RagAnswerability, RagReranker
from runiq.rag._retrieval.query import RagQuery
from runiq.rag._retrieval.results import RagRetrievalHit, RagRetrievalResult

__all__ = ["ContextRetriever", "RagContextAssembler"]

log = get_logger(__name__)

_NOT_GROUNDED = {RagNoContextReason.NOT_ANSWERABLE, RagNoContextReason.ANSWERABILITY_UNAVAILABLE}


@runtime_checkable
class ContextRetriever(Protocol):
    """What the assembler needs from retrieval (:class:`~runiq.rag.RagRetriever` is one)."""

    async def retrieve(self, query: RagQuery) -> RagRetrievalResult: ...


def _grounding(
    step: RerankStep, grounding: GroundingOptions
) -> tuple[dict[ChunkKey, RagDecisionReason], RagNoContextReason | None]:
    """Which reranked candidates grounding drops, and the no-context reason when it drops them all."""
    if not step.order:
        return {}, None
    succeeded = step.report.outcome is RagRerankingOutcome.SUCCEEDED
    if grounding.require_answerable and (not succeeded or step.report.answerability is not RagAnswerability.ANSWERABLE):
        reason = RagNoContextReason.NOT_ANSWERABLE if succeeded else RagNoContextReason.ANSWERABILITY_UNAVAILABLE
        return {hit.key: RagDecisionReason.NOT_GROUNDED for hit in step.order}, reason
    dropped: dict[ChunkKey, RagDecisionReason] = {}
    if grounding.exclude_not_answerable and succeeded:
        for hit in step.order:
            score = step.scores.get(hit.key)
            if score is not None and score.answerability is RagAnswerability.NOT_ANSWERABLE:
                dropped[hit.key] = RagDecisionReason.NOT_ANSWERABLE
    if dropped and len(dropped) == len(step.order):
        return dropped, RagNoContextReason.NOT_ANSWERABLE
    return dropped, None


def _no_context_reason(hits: Sequence[RagRetrievalHit], acceptance: AcceptanceResult) -> RagNoContextReason:
    if not hits:
        return RagNoContextReason.NO_RESULTS
    if not acceptance.accepted:
        threshold_only = all(r is RagDecisionReason.BELOW_MINIMUM_RELEVANCE for r in acceptance.reasons)
        return (
            RagNoContextReason.BELOW_RELEVANCE_THRESHOLD if threshold_only else RagNoContextReason.CANDIDATES_REJECTED
        )
    return RagNoContextReason.CONTEXT_BUDGET_EXHAUSTED


def _decisions(
    hits: Sequence[RagRetrievalHit],
    acceptance: AcceptanceResult,
    step: RerankStep | None,
    final: dict[ChunkKey, RagDecisionReason],
    sizes: dict[ChunkKey, int],
    context_ranks: dict[ChunkKey, int],
) -> tuple[RagCandidateDecision, ...]:
    accepted_ranks = {hit.key: rank for rank, hit in enumerate(acceptance.accepted, start=1)}
    scores = step.scores if step is not None else {}
    out = []
    for hit, rejection in zip(hits, acceptance.reasons, strict=True):
        accepted = rejection is None
        key = hit.key
        out.append(
            RagCandidateDecision(
                document_id=hit.document_id,
                chunk_id=hit.chunk_id,
                retrieval_rank=hit.rank,
                reason=final[key] if rejection is None else rejection,
                accepted=accepted,
                accepted_rank=accepted_ranks[key] if accepted else None,
                context_rank=context_ranks.get(key) if accepted else None,
                rerank=scores.get(key) if accepted else None,
                size=sizes.get(key) if accepted else None,
            )
        )
    return tuple(out)


class RagContextAssembler:
    """Turns a query into an accepted, deduplicated, optionally reranked, grounded and budgeted context.

    Args:
        retriever: the retrieval facade (``host.services.get(RagRetriever)``).
        reranker: a reranker for every index, bare (it must be local or it is refused) or wrapped in a
            :class:`~runiq.rag._reranking.RerankerRegistration` carrying the host's egress approval.
        reranker_resolver: alternatively, resolve each index's reranker at request time
            (:func:`~runiq.rag._reranking.index_reranker_resolver`).

    Raises:
        RerankerNotApprovedError: ``reranker`` sends content off-host and was not approved.
    """

    def __init__(
        self,
        retriever: ContextRetriever,
        reranker: RagReranker | RerankerRegistration | None = None,
        *,
        reranker_resolver: RerankerResolver | None = None,
    ) -> None:
        if not callable(getattr(retriever, "retrieve", None)):
            raise RagConfigurationError("RagContextAssembler needs a retriever with an async retrieve(query) method.")
        if reranker is not None and reranker_resolver is not None:
            raise RagConfigurationError("Pass either a reranker or a reranker resolver, not both.")
        registration = (
            reranker
            if isinstance(reranker, RerankerRegistration) or reranker is None
            else RerankerRegistration(reranker)
        )
        if registration is not None and not registration.permitted:
            raise RerankerNotApprovedError(registration.provider_name)
        self._retriever = retriever
        self._registration = registration
        self._resolver = reranker_resolver

    async def _resolve(self, index_name: str) -> RerankerRegistration | None:
        if self._resolver is not None:
            return await self._resolver(index_name)
        return self._registration

    async def assemble(self, query: RagQuery, options: RagContextOptions | None = None) -> RagContextResult:
        """Run the policy path once for ``query``.

        Raises:
            RagError: retrieval failed (unchanged from the retriever).
            RerankingFailedError: reranking failed and ``options.reranking.on_failure`` is ``fail``.
        """
        options = RagContextOptions() if options is None else options
        if not isinstance(options, RagContextOptions):
            raise RagConfigurationError("assemble() needs RagContextOptions.")
        started = time.perf_counter()
        retrieval = await self._retriever.retrieve(query)
        index_name = retrieval.index_name
        hits = retrieval.hits
        acceptance = evaluate_acceptance(hits, options)

        with rerank_span(index_name, record=options.reranking.enabled and bool(acceptance.accepted)) as span:

            def translate(exc: Exception) -> Exception:
                # Raised outside ``except``: the error chains the content-free RerankerError, nothing else.
                if isinstance(exc, RerankStepFailed):
                    span.describe_rerank(exc.report)
                    return chained(self._failed(retrieval, acceptance, exc, started), exc.error)
                return exc

            step = await translated(
                lambda: run_reranking(
                    query.text,
                    acceptance.accepted,
                    options.reranking,
                    lambda: self._resolve(index_name),
                    index_name=index_name,
                ),
                translate,
            )
            span.describe_rerank(step.report)
        return self._finish(retrieval, acceptance, step, options, started)

    def _failed(
        self, retrieval: RagRetrievalResult, acceptance: AcceptanceResult, failed: RerankStepFailed, started: float
    ) -> RerankingFailedError:
        final = {hit.key: RagDecisionReason.RERANKING_FAILED for hit in acceptance.accepted}
        decisions = _decisions(retrieval.hits, acceptance, None, final, {}, {})
        report = failed.report
        assert report.failure_code is not None
        log.warning(
            "context.failed",
            index_name=retrieval.index_name,
            mode=retrieval.mode.value,
            reason=report.failure_code.value,
            candidate_count=len(retrieval.hits),
            accepted_count=len(acceptance.accepted),
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
        )
        return RerankingFailedError(
            retrieval.index_name,
            report.failure_code,
            provider=report.provider,
            timed_out=report.timed_out,
            violation=report.violation,
            cause_type=report.cause_type,
            decisions=decisions,
        )

    def _finish(
        self,
        retrieval: RagRetrievalResult,
        acceptance: AcceptanceResult,
        step: RerankStep,
        options: RagContextOptions,
        started: float,
    ) -> RagContextResult:
        budget = options.budget
        sizes = {hit.key: measure(hit.content, budget.unit) for hit in acceptance.accepted}
        final, no_context = _grounding(step, options.grounding)
        remaining = [hit for hit in step.order if hit.key not in final]
        chosen, used = select_within_budget([sizes[h.key] for h in remaining], budget)
        selected = [hit for hit, keep in zip(remaining, chosen, strict=True) if keep]
        for hit, keep in zip(remaining, chosen, strict=True):
            final[hit.key] = RagDecisionReason.SELECTED if keep else RagDecisionReason.BUDGET_EXCEEDED
        context_ranks = {hit.key: rank for rank, hit in enumerate(selected, start=1)}
        accepted_ranks = {hit.key: rank for rank, hit in enumerate(acceptance.accepted, start=1)}
        context = tuple(
            RagContextItem(
                hit=hit,
                context_rank=context_ranks[hit.key],
                accepted_rank=accepted_ranks[hit.key],
                size=sizes[hit.key],
                rerank=step.scores.get(hit.key),
            )
            for hit in selected
        )
        if context:
            no_context = None
        elif no_context is None:
            no_context = _no_context_reason(retrieval.hits, acceptance)
        outcome = (
            RagContextOutcome.CONTEXT
            if context
            else RagContextOutcome.NOT_GROUNDED
            if no_context in _NOT_GROUNDED
            else RagContextOutcome.NO_CONTEXT
        )
        result = RagContextResult(
            index_name=retrieval.index_name,
            retrieval_mode=retrieval.mode,
            outcome=outcome,
            no_context_reason=no_context,
            context=context,
            decisions=_decisions(retrieval.hits, acceptance, step, final, sizes, context_ranks),
            reranking=step.report,
            budget=RagContextBudgetReport(
                unit=budget.unit, maximum=budget.maximum, used=used, per_chunk_overhead=budget.per_chunk_overhead
            ),
            duration_seconds=time.perf_counter() - started,
            retrieval=retrieval,
        )
        self._log(result)
        return result

    @staticmethod
    def _log(result: RagContextResult) -> None:
        log.info(
            "context.assembled",
            index_name=result.index_name,
            mode=result.retrieval_mode.value,
            outcome=result.outcome.value,
            no_context_reason=result.no_context_reason.value if result.no_context_reason else None,
            candidate_count=len(result.decisions),
            accepted_count=result.accepted_count,
            selected_count=len(result.context),
            reasons=result.reason_counts,
            reranking=result.reranking.outcome.value,
            answerability=result.answerability.value,
            budget_unit=result.budget.unit.value,
            budget_used=result.budget.used,
            budget_maximum=result.budget.maximum,
            duration_ms=round(result.duration_seconds * 1000, 3),
        )

"""The reranking step: bounded candidates, reordering beside untouched retrieval scores, every failure
mode under both failure policies, timeouts, cancellation and egress approval."""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from runiq.rag._context import (
    ContextBudget,
    ContextBudgetUnit,
    RagContextAssembler,
    RagContextOptions,
    RagDecisionReason,
    RagRerankingOutcome,
    RerankerFailurePolicy,
    RerankingOptions,
)
from runiq.rag._reranking import (
    RagAnswerability,
    RagRerankCandidateResult,
    RagRerankRequest,
    RagRerankResponse,
    RerankerNotApprovedError,
    RerankerRegistration,
    RerankingFailedError,
    RerankingFailureCode,
    RerankResponseViolation,
)

FALLBACK, FAIL = RerankerFailurePolicy.USE_RETRIEVAL_ORDER, RerankerFailurePolicy.FAIL
ANSWERABLE = RagAnswerability.ANSWERABLE


def options(**reranking: Any) -> RagContextOptions:
    reranking.setdefault("enabled", True)
    return RagContextOptions(reranking=RerankingOptions(**reranking), maximum_accepted_results=10)


def three(kit: Any) -> list[Any]:
    return [kit.hit("a", relevance=0.9), kit.hit("b", relevance=0.8), kit.hit("c", relevance=0.7)]


def by_doc(scores: dict[str, float]) -> Callable[[Any], tuple[float, RagAnswerability]]:
    return lambda c: (scores[c.document_id], RagAnswerability.UNKNOWN)


async def test_disabled_reranking_never_calls_the_reranker(kit: Any) -> None:
    """Disabled: accepted order, outcome disabled, no call."""
    reranker = kit.ScoringReranker()
    result = await RagContextAssembler(kit.Retriever(three(kit)), reranker).assemble(kit.query())
    assert reranker.requests == []
    assert result.reranking.outcome is RagRerankingOutcome.DISABLED
    assert result.reranking.ran is False
    assert all(i.rerank is None for i in result.context)


async def test_nothing_accepted_skips_the_call(kit: Any) -> None:
    """Enabled but nothing accepted: skipped, no call, answerability unknown."""
    reranker = kit.ScoringReranker()
    hits = [kit.hit("a", relevance=math.nan)]
    result = await RagContextAssembler(kit.Retriever(hits), reranker).assemble(kit.query(), options())
    assert reranker.requests == []
    assert result.reranking.outcome is RagRerankingOutcome.SKIPPED
    assert result.answerability is RagAnswerability.UNKNOWN


async def test_bounded_head_is_reordered_and_the_tail_follows(kit: Any) -> None:
    """Two of three sent: b outranks a; c (unsent) follows in accepted order."""
    reranker = kit.ScoringReranker(by_doc({"a": 0.2, "b": 0.9}))
    hits = three(kit)
    result = await RagContextAssembler(kit.Retriever(hits), reranker).assemble(
        kit.query(), options(maximum_candidates=2)
    )
    assert [i.document_id for i in result.context] == ["b", "a", "c"]
    (request,) = reranker.requests
    assert [c.document_id for c in request.candidates] == ["a", "b"]
    assert [c.original_rank for c in request.candidates] == [1, 2]
    assert [c.content for c in request.candidates] == [hits[0].content, hits[1].content]
    assert request.query == "remote work policy"
    assert result.reranking.outcome is RagRerankingOutcome.SUCCEEDED
    assert result.reranking.candidate_count == 2
    assert result.reranking.ran is True
    assert [(i.rerank.rank, i.rerank.relevance) if i.rerank else None for i in result.context] == [
        (1, 0.9),
        (2, 0.2),
        None,
    ]
    assert [(d.accepted_rank, d.context_rank) for d in result.decisions] == [(1, 2), (2, 1), (3, 3)]


async def test_reranking_never_touches_retrieval_scores_or_provenance(kit: Any) -> None:
    """The context holds the retrieval hits themselves; rerank scores live beside them."""
    reranker = kit.ScoringReranker(by_doc({"a": 0.1, "b": 0.5, "c": 1.0}))
    retriever = kit.Retriever(three(kit))
    before = [dataclasses.asdict(h) for h in retriever.hits]
    result = await RagContextAssembler(retriever, reranker).assemble(kit.query(), options())
    assert [i.document_id for i in result.context] == ["c", "b", "a"]
    by_id = {h.document_id: h for h in retriever.hits}
    for item in result.context:
        assert item.hit is by_id[item.document_id]
    assert [dataclasses.asdict(h) for h in retriever.hits] == before
    assert [dataclasses.asdict(h) for h in result.retrieval.hits] == before
    assert result.context[0].hit.relevance == 0.7
    assert result.context[0].rerank is not None
    assert result.context[0].rerank.relevance == 1.0


async def test_ties_keep_the_original_order(kit: Any) -> None:
    """Equal rerank relevance: original rank decides."""
    reranker = kit.ScoringReranker(lambda c: (0.5, RagAnswerability.UNKNOWN))
    result = await RagContextAssembler(kit.Retriever(three(kit)), reranker).assemble(kit.query(), options())
    assert [i.document_id for i in result.context] == ["a", "b", "c"]


async def test_numpy_scores_are_accepted(kit: Any) -> None:
    """A cross-encoder's float32 scores are real numbers in [0, 1]."""
    reranker = kit.ScoringReranker(lambda c: (np.float32(0.25 * c.original_rank), RagAnswerability.UNKNOWN))
    result = await RagContextAssembler(kit.Retriever(three(kit)), reranker).assemble(kit.query(), options())
    assert [i.document_id for i in result.context] == ["c", "b", "a"]
    assert all(type(i.rerank.relevance) is float for i in result.context if i.rerank)


async def test_budget_runs_on_the_reranked_order(kit: Any) -> None:
    """A reranked-first chunk can still be excluded by the budget."""
    hits = [kit.hit("small", content="x" * 10), kit.hit("big", content="y" * 100)]
    reranker = kit.ScoringReranker(by_doc({"small": 0.1, "big": 0.9}))
    opts = dataclasses.replace(options(), budget=ContextBudget(maximum=50, unit=ContextBudgetUnit.CHARACTERS))
    result = await RagContextAssembler(kit.Retriever(hits), reranker).assemble(kit.query(), opts)
    assert [d.reason for d in result.decisions] == [RagDecisionReason.SELECTED, RagDecisionReason.BUDGET_EXCEEDED]
    assert result.decisions[1].rerank is not None
    assert result.decisions[1].rerank.rank == 1


def _response(request: RagRerankRequest, **changes: Any) -> RagRerankResponse:
    results = [
        RagRerankCandidateResult(document_id=c.document_id, chunk_id=c.chunk_id, relevance=0.5)
        for c in request.candidates
    ]
    return RagRerankResponse(candidates=tuple(results), **changes)


def _with(request: RagRerankRequest, index: int, **changes: Any) -> RagRerankResponse:
    response = _response(request)
    items = list(response.candidates)
    items[index] = dataclasses.replace(items[index], **changes)
    return RagRerankResponse(candidates=tuple(items))


INVALID: dict[str, tuple[Callable[[RagRerankRequest], object], RerankResponseViolation]] = {
    "none": (lambda r: None, RerankResponseViolation.NOT_A_RESPONSE),
    "list": (lambda r: list(_response(r).candidates), RerankResponseViolation.NOT_A_RESPONSE),
    "dict": (lambda r: {"candidates": []}, RerankResponseViolation.NOT_A_RESPONSE),
    "candidates-none": (lambda r: RagRerankResponse(candidates=None), RerankResponseViolation.NOT_A_RESPONSE),  # type: ignore[arg-type]
    "aggregate-string": (
        lambda r: _response(r, answerability="answerable"),
        RerankResponseViolation.INVALID_AGGREGATE_ANSWERABILITY,
    ),
    "element-dict": (
        lambda r: RagRerankResponse(candidates=({"document_id": "a"},)),  # type: ignore[arg-type]
        RerankResponseViolation.NOT_A_CANDIDATE_RESULT,
    ),
    "blank-identity": (lambda r: _with(r, 0, document_id=""), RerankResponseViolation.INVALID_IDENTITY),
    "invented": (lambda r: _with(r, 0, document_id="zzz"), RerankResponseViolation.UNKNOWN_IDENTITY),
    "duplicated": (
        lambda r: RagRerankResponse(candidates=(_response(r).candidates[0],) * len(r.candidates)),
        RerankResponseViolation.DUPLICATE_IDENTITY,
    ),
    "omitted": (
        lambda r: RagRerankResponse(candidates=_response(r).candidates[1:]),
        RerankResponseViolation.MISSING_IDENTITY,
    ),
    "empty": (lambda r: RagRerankResponse(candidates=()), RerankResponseViolation.MISSING_IDENTITY),
    "nan": (lambda r: _with(r, 1, relevance=math.nan), RerankResponseViolation.NON_FINITE_RELEVANCE),
    "inf": (lambda r: _with(r, 1, relevance=math.inf), RerankResponseViolation.NON_FINITE_RELEVANCE),
    "above-one": (lambda r: _with(r, 1, relevance=1.5), RerankResponseViolation.RELEVANCE_OUT_OF_RANGE),
    "negative": (lambda r: _with(r, 1, relevance=-0.1), RerankResponseViolation.RELEVANCE_OUT_OF_RANGE),
    "string-score": (lambda r: _with(r, 1, relevance="0.5"), RerankResponseViolation.INVALID_RELEVANCE),
    "bool-score": (lambda r: _with(r, 1, relevance=True), RerankResponseViolation.INVALID_RELEVANCE),
    "candidate-answerability": (
        lambda r: _with(r, 0, answerability="yes"),
        RerankResponseViolation.INVALID_CANDIDATE_ANSWERABILITY,
    ),
}


def _failure_cases(kit: Any) -> dict[str, tuple[dict[str, Any], RerankingFailureCode, dict[str, Any]]]:
    """name -> (assembler kwargs, failure code, expected report fields)."""

    async def no_reranker(index_name: str) -> None:
        return None

    async def unapproved(index_name: str) -> RerankerRegistration:
        return RerankerRegistration(kit.RemoteReranker())

    async def broken(index_name: str) -> RerankerRegistration:
        raise ConnectionError(f"cannot open for {kit.canary}")

    cases: dict[str, tuple[dict[str, Any], RerankingFailureCode, dict[str, Any]]] = {
        "timeout": ({"reranker": kit.SlowReranker()}, RerankingFailureCode.TIMEOUT, {"timed_out": True, "ran": True}),
        "swallowed-cancellation": (
            {"reranker": kit.SlowReranker(swallow=True)},
            RerankingFailureCode.TIMEOUT,
            {"timed_out": True},
        ),
        "provider-timeout": (
            {"reranker": kit.RaisingReranker(lambda r: TimeoutError(r.query))},
            RerankingFailureCode.TIMEOUT,
            {"timed_out": False, "cause_type": "TimeoutError"},
        ),
        "exception": (
            {"reranker": kit.RaisingReranker()},
            RerankingFailureCode.FAILED,
            {"cause_type": "RuntimeError", "ran": True, "timed_out": False},
        ),
        "unavailable": ({"reranker_resolver": no_reranker}, RerankingFailureCode.UNAVAILABLE, {"ran": False}),
        "not-approved": ({"reranker_resolver": unapproved}, RerankingFailureCode.NOT_APPROVED, {"ran": False}),
        "resolver-fails": (
            {"reranker_resolver": broken},
            RerankingFailureCode.FAILED,
            {"ran": False, "cause_type": "ConnectionError"},
        ),
    }
    for name, (respond, violation) in INVALID.items():
        cases[f"invalid-{name}"] = (
            {"reranker": kit.RespondingReranker(respond)},
            RerankingFailureCode.INVALID_RESPONSE,
            {"violation": violation, "ran": True},
        )
    return cases


FAILURE_NAMES = [
    "timeout",
    "swallowed-cancellation",
    "provider-timeout",
    "exception",
    "unavailable",
    "not-approved",
    "resolver-fails",
] + [f"invalid-{n}" for n in INVALID]


@pytest.mark.parametrize("name", FAILURE_NAMES)
async def test_failure_falls_back_to_retrieval_order(kit: Any, name: str) -> None:
    """use_retrieval_order: the accepted order stands, outcome fallback, the failure recorded."""
    kwargs, code, fields = _failure_cases(kit)[name]
    assembler = RagContextAssembler(kit.Retriever(three(kit)), **kwargs)
    result = await assembler.assemble(kit.query(), options(timeout_seconds=0.05, on_failure=FALLBACK))
    assert [i.document_id for i in result.context] == ["a", "b", "c"]
    assert all(i.rerank is None for i in result.context)
    report = result.reranking
    assert report.outcome is RagRerankingOutcome.FALLBACK
    assert report.failure_code is code
    assert report.answerability is RagAnswerability.UNKNOWN
    for key, value in fields.items():
        assert getattr(report, key) == value, key


@pytest.mark.parametrize("name", FAILURE_NAMES)
async def test_failure_with_policy_fail_raises(kit: Any, name: str) -> None:
    """fail: RerankingFailedError with the code and content-free decisions; no context."""
    kwargs, code, fields = _failure_cases(kit)[name]
    assembler = RagContextAssembler(kit.Retriever([*three(kit), kit.hit("x", relevance=math.nan)]), **kwargs)
    with pytest.raises(RerankingFailedError) as caught:
        await assembler.assemble(kit.query(), options(timeout_seconds=0.05, on_failure=FAIL))
    error = caught.value
    assert error.code is code
    assert error.index_name == "docs"
    assert [d.reason for d in error.decisions] == [RagDecisionReason.RERANKING_FAILED] * 3 + [
        RagDecisionReason.INVALID_SCORE
    ]
    if "violation" in fields:
        assert error.violation is fields["violation"]
    if "timed_out" in fields:
        assert error.timed_out is fields["timed_out"]
    if "cause_type" in fields:
        assert error.cause_type == fields["cause_type"]
    assert error.__cause__ is not None
    assert error.__cause__.__cause__ is None  # the provider's own exception is not chained


async def test_timeout_cancels_the_provider_call(kit: Any) -> None:
    """At the deadline the provider sees the cancellation; the step takes about the timeout."""
    reranker = kit.SlowReranker()
    result = await RagContextAssembler(kit.Retriever(three(kit)), reranker).assemble(
        kit.query(), options(timeout_seconds=0.02)
    )
    assert reranker.cancelled
    assert result.reranking.timed_out
    assert 0.015 <= result.reranking.duration_seconds < 1.0


async def test_caller_cancellation_propagates(kit: Any) -> None:
    """The caller's cancellation is not a reranker failure: CancelledError reaches the caller."""
    reranker = kit.SlowReranker()
    assembler = RagContextAssembler(kit.Retriever(three(kit)), reranker)
    task = asyncio.create_task(assembler.assemble(kit.query(), options(timeout_seconds=30)))
    await reranker.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert reranker.cancelled


def test_an_unapproved_remote_reranker_is_refused_at_construction(kit: Any) -> None:
    """A remote reranker, bare or unapproved, or one that does not declare its egress, is refused."""
    retriever = kit.Retriever()
    with pytest.raises(RerankerNotApprovedError, match="remote-api"):
        RagContextAssembler(retriever, kit.RemoteReranker())
    with pytest.raises(RerankerNotApprovedError):
        RagContextAssembler(retriever, RerankerRegistration(kit.RemoteReranker(), approved=False))
    with pytest.raises(RerankerNotApprovedError, match="UndeclaredReranker"):
        RagContextAssembler(retriever, kit.UndeclaredReranker())


async def test_an_approved_remote_reranker_is_used(kit: Any) -> None:
    """approved=True is the host's egress decision; then the remote reranker is called."""
    reranker = kit.RemoteReranker(by_doc({"a": 0.1, "b": 0.2, "c": 0.3}))
    registration = RerankerRegistration(reranker, approved=True)
    assert registration.permitted
    assert registration.remote
    result = await RagContextAssembler(kit.Retriever(three(kit)), registration).assemble(kit.query(), options())
    assert [i.document_id for i in result.context] == ["c", "b", "a"]
    assert result.reranking.provider == "remote-api"


async def test_a_resolver_supplies_the_reranker_per_index(kit: Any) -> None:
    """A resolver is asked with the retrieved index name."""
    asked: list[str] = []
    reranker = kit.ScoringReranker(by_doc({"a": 0.1, "b": 0.2, "c": 0.3}))

    async def resolve(index_name: str) -> RerankerRegistration:
        asked.append(index_name)
        return RerankerRegistration(reranker)

    assembler = RagContextAssembler(kit.Retriever(three(kit)), reranker_resolver=resolve)
    result = await assembler.assemble(kit.query(index_name="handbook"), options())
    assert asked == ["handbook"]
    assert [i.document_id for i in result.context] == ["c", "b", "a"]


def test_registration_and_resolver_are_exclusive(kit: Any) -> None:
    """One source of rerankers at a time; a registration needs a rerank method and a bool approval."""
    from runiq.rag import RagConfigurationError

    async def resolve(index_name: str) -> None:
        return None

    with pytest.raises(RagConfigurationError):
        RagContextAssembler(kit.Retriever(), kit.ScoringReranker(), reranker_resolver=resolve)
    with pytest.raises(RagConfigurationError):
        RerankerRegistration(object())  # type: ignore[arg-type]
    with pytest.raises(RagConfigurationError):
        RerankerRegistration(kit.ScoringReranker(), approved="yes")  # type: ignore[arg-type]

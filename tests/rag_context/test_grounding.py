"""Grounding enforcement: answerability required, per-candidate exclusion, and the grounded signal."""

from __future__ import annotations

from typing import Any

import pytest

from runiq.rag._context import (
    GroundingOptions,
    RagContextAssembler,
    RagContextOptions,
    RagContextOutcome,
    RagDecisionReason,
    RagNoContextReason,
    RagPolicyStage,
    RagRerankingOutcome,
    RerankingOptions,
)
from runiq.rag._reranking import RagAnswerability

A, N, U = RagAnswerability.ANSWERABLE, RagAnswerability.NOT_ANSWERABLE, RagAnswerability.UNKNOWN


def options(**grounding: bool) -> RagContextOptions:
    return RagContextOptions(
        reranking=RerankingOptions(enabled=True, timeout_seconds=0.05), grounding=GroundingOptions(**grounding)
    )


def hits(kit: Any) -> list[Any]:
    return [kit.hit("a"), kit.hit("b")]


async def test_answerable_context_is_grounded(kit: Any) -> None:
    """Required and the aggregate says answerable: context, grounded."""
    reranker = kit.ScoringReranker(lambda c: (0.8, A), answerability=A)
    result = await RagContextAssembler(kit.Retriever(hits(kit)), reranker).assemble(
        kit.query(), options(require_answerable=True)
    )
    assert result.outcome is RagContextOutcome.CONTEXT
    assert result.grounded
    assert result.answerability is A


@pytest.mark.parametrize("aggregate", [N, U])
async def test_required_answerability_blocks_not_answerable_and_unknown(kit: Any, aggregate: RagAnswerability) -> None:
    """Not answerable or unknown aggregate: not_grounded, every accepted candidate dropped, nothing selected."""
    reranker = kit.ScoringReranker(lambda c: (0.9, A), answerability=aggregate)  # the aggregate wins over candidates
    result = await RagContextAssembler(kit.Retriever(hits(kit)), reranker).assemble(
        kit.query(), options(require_answerable=True)
    )
    assert result.outcome is RagContextOutcome.NOT_GROUNDED
    assert result.no_context_reason is RagNoContextReason.NOT_ANSWERABLE
    assert result.context == ()
    assert not result.grounded
    assert [d.reason for d in result.decisions] == [RagDecisionReason.NOT_GROUNDED] * 2
    assert {d.stage for d in result.decisions} == {RagPolicyStage.GROUNDING}
    assert all(d.rerank is not None for d in result.decisions)


async def test_required_answerability_after_a_fallback_has_no_signal(kit: Any) -> None:
    """A fallback gives no answerability: not_grounded / answerability_unavailable."""
    result = await RagContextAssembler(kit.Retriever(hits(kit)), kit.RaisingReranker()).assemble(
        kit.query(), options(require_answerable=True)
    )
    assert result.reranking.outcome is RagRerankingOutcome.FALLBACK
    assert result.outcome is RagContextOutcome.NOT_GROUNDED
    assert result.no_context_reason is RagNoContextReason.ANSWERABILITY_UNAVAILABLE


async def test_nothing_accepted_is_no_context_not_ungrounded(kit: Any) -> None:
    """With no accepted candidates the acceptance reason stands."""
    reranker = kit.ScoringReranker(answerability=N)
    assembler = RagContextAssembler(kit.Retriever([]), reranker)
    result = await assembler.assemble(kit.query(), options(require_answerable=True))
    assert result.outcome is RagContextOutcome.NO_CONTEXT
    assert result.no_context_reason is RagNoContextReason.NO_RESULTS


async def test_without_the_requirement_answerability_is_recorded_only(kit: Any) -> None:
    """Open behaviour: a not-answerable aggregate is reported but the context is kept (and not grounded)."""
    reranker = kit.ScoringReranker(lambda c: (0.3, N), answerability=N)
    result = await RagContextAssembler(kit.Retriever(hits(kit)), reranker).assemble(kit.query(), options())
    assert result.outcome is RagContextOutcome.CONTEXT
    assert result.answerability is N
    assert not result.grounded
    assert [i.rerank.answerability for i in result.context if i.rerank] == [N, N]


async def test_excluding_not_answerable_candidates(kit: Any) -> None:
    """Candidates marked not answerable are dropped one by one; unknown ones stay."""
    marks = {"a": N, "b": U, "c": A}
    reranker = kit.ScoringReranker(lambda c: (0.5, marks[c.document_id]), answerability=A)
    retriever = kit.Retriever([kit.hit("a"), kit.hit("b"), kit.hit("c")])
    result = await RagContextAssembler(retriever, reranker).assemble(kit.query(), options(exclude_not_answerable=True))
    assert [d.reason.value for d in result.decisions] == ["not_answerable", "selected", "selected"]
    assert result.grounded


async def test_excluding_every_candidate_is_not_grounded(kit: Any) -> None:
    """All marked not answerable: not_grounded / not_answerable."""
    reranker = kit.ScoringReranker(lambda c: (0.5, N), answerability=U)
    result = await RagContextAssembler(kit.Retriever(hits(kit)), reranker).assemble(
        kit.query(), options(exclude_not_answerable=True)
    )
    assert result.outcome is RagContextOutcome.NOT_GROUNDED
    assert result.no_context_reason is RagNoContextReason.NOT_ANSWERABLE


async def test_exclusion_needs_a_successful_rerank(kit: Any) -> None:
    """After a fallback there are no candidate flags, so nothing is excluded."""
    result = await RagContextAssembler(kit.Retriever(hits(kit)), kit.RaisingReranker()).assemble(
        kit.query(), options(exclude_not_answerable=True)
    )
    assert result.outcome is RagContextOutcome.CONTEXT
    assert len(result.context) == 2

"""Acceptance, duplicate filtering and limits: every rule of the policy path before reranking."""

from __future__ import annotations

import math
from typing import Any

import pytest

from runiq.rag import RagRetrievalMode
from runiq.rag._context import (
    ContextBudget,
    DuplicateFilterOptions,
    NullRelevancePolicy,
    RagContextAssembler,
    RagContextOptions,
    RagContextOutcome,
    RagContextResult,
    RagDecisionReason,
    RagNoContextReason,
    RagPolicyStage,
    normalise_text,
)

R = RagDecisionReason


async def assemble(kit: Any, hits: list[Any], **options: Any) -> RagContextResult:
    retriever = kit.Retriever(hits)
    return await RagContextAssembler(retriever).assemble(kit.query(), RagContextOptions(**options))


def reasons(result: RagContextResult) -> list[str]:
    return [d.reason.value for d in result.decisions]


async def test_no_candidates_is_no_results(kit: Any) -> None:
    """A successful retrieval with zero hits is no_context / no_results, not an error."""
    result = await assemble(kit, [])
    assert result.outcome is RagContextOutcome.NO_CONTEXT
    assert result.no_context_reason is RagNoContextReason.NO_RESULTS
    assert result.decisions == ()
    assert result.context == ()


async def test_accepted_candidates_keep_retrieval_order(kit: Any) -> None:
    """Relevance does not reorder: a lower-relevance hit ranked first by retrieval stays first."""
    hits = [kit.hit("b", relevance=0.6), kit.hit("a", relevance=0.9), kit.hit("c", relevance=0.7)]
    result = await assemble(kit, hits)
    assert [i.document_id for i in result.context] == ["b", "a", "c"]
    assert [d.accepted_rank for d in result.decisions] == [1, 2, 3]
    assert [d.context_rank for d in result.decisions] == [1, 2, 3]
    assert result.outcome is RagContextOutcome.CONTEXT
    assert result.no_context_reason is None


@pytest.mark.parametrize(
    "bad",
    [
        {"relevance": math.nan},
        {"relevance": math.inf},
        {"relevance": 1.1},
        {"relevance": -0.1},
        {"relevance": 0.5, "raw_score": math.nan},
        {"relevance": 0.5, "raw_score": -math.inf},
        {"relevance": 0.5, "metric": ""},
        {"relevance": 0.5, "metric": None},
    ],
)
async def test_invalid_scores_are_rejected(kit: Any, bad: dict[str, Any]) -> None:
    """NaN/inf/out-of-range relevance, non-finite raw scores and a missing metric are invalid_score."""
    result = await assemble(kit, [kit.hit("bad", **bad), kit.hit("good")])
    assert reasons(result) == ["invalid_score", "selected"]


async def test_a_lexical_only_hit_has_a_valid_score_without_a_metric(kit: Any) -> None:
    """A lexical rank is evidence enough: no metric, no raw score, still valid."""
    result = await assemble(kit, [kit.hit("lex", semantic=False)])
    assert reasons(result) == ["selected"]


async def test_threshold_is_inclusive_and_only_applies_to_relevance(kit: Any) -> None:
    """Equal passes, below is rejected; a lexical hit (relevance None) is not thresholded."""
    hits = [kit.hit("eq", relevance=0.75), kit.hit("below", relevance=0.7499), kit.hit("lex", semantic=False)]
    result = await assemble(kit, hits, minimum_relevance=0.75)
    assert reasons(result) == ["selected", "below_minimum_relevance", "selected"]


async def test_orthogonal_cosine_is_rejected_by_a_high_threshold(kit: Any) -> None:
    """Raw cosine 0 is relevance 0.5, below 0.75 (the .NET acceptance case)."""
    result = await assemble(kit, [kit.hit("orth", relevance=0.5, raw_score=0.0)], minimum_relevance=0.75)
    assert result.no_context_reason is RagNoContextReason.BELOW_RELEVANCE_THRESHOLD


async def test_all_below_threshold_vs_mixed_rejections(kit: Any) -> None:
    """Only threshold rejections: below_relevance_threshold; mixed reasons: candidates_rejected."""
    only = await assemble(kit, [kit.hit("a", relevance=0.2), kit.hit("b", relevance=0.3)], minimum_relevance=0.96)
    assert only.no_context_reason is RagNoContextReason.BELOW_RELEVANCE_THRESHOLD
    mixed = await assemble(kit, [kit.hit("a", relevance=0.2), kit.hit("b", relevance=math.nan)], minimum_relevance=0.96)
    assert mixed.no_context_reason is RagNoContextReason.CANDIDATES_REJECTED
    assert mixed.outcome is RagContextOutcome.NO_CONTEXT


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (NullRelevancePolicy.ACCEPT, ["selected", "selected", "selected"]),
        (NullRelevancePolicy.REJECT, ["relevance_unavailable", "relevance_unavailable", "selected"]),
        (NullRelevancePolicy.ACCEPT_LEXICAL, ["relevance_unavailable", "selected", "selected"]),
    ],
)
async def test_null_relevance_policy(kit: Any, policy: NullRelevancePolicy, expected: list[str]) -> None:
    """Dot product (relevance None, no lexical rank), a lexical-only hit, a cosine hit, under each policy."""
    hits = [
        kit.hit("dot", relevance=None, raw_score=3.0, metric="dot_product"),
        kit.hit("lex", semantic=False),
        kit.hit("cos", relevance=0.8),
    ]
    result = await assemble(kit, hits, null_relevance_policy=policy)
    assert reasons(result) == expected


async def test_a_hybrid_hit_with_relevance_is_thresholded_on_it(kit: Any) -> None:
    """A hybrid hit with a semantic relevance is judged by it, its lexical rank notwithstanding."""
    hybrid = kit.hit("hyb", relevance=0.4, lexical_rank=1)
    assert hybrid.provenance.mode is RagRetrievalMode.HYBRID
    result = await assemble(kit, [hybrid], minimum_relevance=0.5)
    assert reasons(result) == ["below_minimum_relevance"]


async def test_blank_content_is_rejected(kit: Any) -> None:
    """Whitespace-only content has nothing to contribute."""
    result = await assemble(kit, [kit.hit("blank", content="  \n\t "), kit.hit("ok")])
    assert reasons(result) == ["empty_content", "selected"]


async def test_same_identity_twice_is_a_duplicate(kit: Any) -> None:
    """The second occurrence of an accepted identity is duplicate_identity."""
    first = kit.hit("a", content="First text about remote work.")
    again = kit.hit("a", content="Other text entirely, about parking permits and cars.")
    result = await assemble(kit, [first, again])
    assert reasons(result) == ["selected", "duplicate_identity"]


async def test_identity_rejected_first_can_be_accepted_later(kit: Any) -> None:
    """Duplicates are judged against accepted candidates only."""
    result = await assemble(kit, [kit.hit("a", relevance=math.nan), kit.hit("a")])
    assert reasons(result) == ["invalid_score", "selected"]


async def test_normalised_content_duplicates(kit: Any) -> None:
    """Case, Unicode compatibility forms and whitespace do not make content different."""
    original = kit.hit("a", content="Remote work is allowed three days a week.")
    copy = kit.hit("b", content="  REMOTE   work is allowed\nthree days a week.  ")
    compat = kit.hit(
        "c", content="\uff32\uff45\uff4d\uff4f\uff54\uff45 work is allowed three days a week."
    )  # fullwidth, NFKC
    result = await assemble(
        kit, [original, copy, compat], duplicates=DuplicateFilterOptions(near_duplicate_threshold=None)
    )
    assert reasons(result) == ["selected", "duplicate_content", "duplicate_content"]
    assert normalise_text(copy.content) == normalise_text(original.content)


async def test_exact_content_filter_can_be_turned_off(kit: Any) -> None:
    """With both content filters off, only identity duplicates are removed."""
    hits = [kit.hit("a", content="Same text."), kit.hit("b", content="Same text.")]
    off = DuplicateFilterOptions(exact_content=False, near_duplicate_threshold=None)
    assert reasons(await assemble(kit, hits, duplicates=off)) == ["selected", "selected"]


NEAR_BASE = (
    "Employees may work remotely up to three days per week after approval by their manager and "
    "the completion of the remote work agreement form in the human resources portal, effective 2024."
)


async def test_near_duplicates_by_shingle_jaccard(kit: Any) -> None:
    """A one-word edit at the end is a near duplicate at 0.9; a different text is not."""
    edited = NEAR_BASE.replace("2024", "2025")
    other = "Parking permits are issued by facilities on the first Monday of each month for all staff."
    result = await assemble(
        kit, [kit.hit("a", content=NEAR_BASE), kit.hit("b", content=edited), kit.hit("c", content=other)]
    )
    assert reasons(result) == ["selected", "near_duplicate_content", "selected"]


async def test_near_duplicate_threshold_is_configurable(kit: Any) -> None:
    """A mid-text edit drops Jaccard below 0.9 but above 0.5; the threshold decides."""
    edited = NEAR_BASE.replace("manager", "director")
    hits = [kit.hit("a", content=NEAR_BASE), kit.hit("b", content=edited)]
    assert reasons(await assemble(kit, hits)) == ["selected", "selected"]
    loose = DuplicateFilterOptions(near_duplicate_threshold=0.5)
    assert reasons(await assemble(kit, hits, duplicates=loose)) == ["selected", "near_duplicate_content"]


async def test_short_texts_compare_as_a_whole(kit: Any) -> None:
    """Texts shorter than a shingle are one shingle: punctuation-only differences are near duplicates."""
    hits = [kit.hit("a", content="Badges: always!"), kit.hit("b", content="badges, always.")]
    result = await assemble(kit, hits, duplicates=DuplicateFilterOptions(exact_content=False))
    assert reasons(result) == ["selected", "near_duplicate_content"]


async def test_per_document_limit(kit: Any) -> None:
    """A document contributes at most maximum_chunks_per_document; others fill the remaining slots."""
    hits = [kit.hit("a", 0), kit.hit("a", 1), kit.hit("a", 2), kit.hit("b", 0), kit.hit("c", 0)]
    result = await assemble(kit, hits, maximum_chunks_per_document=2, maximum_accepted_results=3)
    assert reasons(result) == ["selected", "selected", "document_limit_exceeded", "selected", "result_limit_exceeded"]


async def test_result_limit_then_duplicates_order(kit: Any) -> None:
    """The .NET case: max 2 of four, the third over the limit, the fourth a duplicate of the first."""
    hits = [
        kit.hit("document-a", 1, "Alpha text."),
        kit.hit("document-b", 2, "Beta text."),
        kit.hit("document-c", 3, "Gamma text."),
        kit.hit("document-d", 4, "Alpha text."),
    ]
    result = await assemble(kit, hits, maximum_accepted_results=2)
    assert reasons(result) == ["selected", "selected", "result_limit_exceeded", "duplicate_content"]
    assert result.accepted_count == 2


async def test_every_candidate_gets_exactly_one_decision(kit: Any) -> None:
    """Decisions cover every retrieved candidate in retrieval order, with its stage."""
    hits = [kit.hit("a", relevance=math.nan), kit.hit("b", relevance=0.1), kit.hit("c"), kit.hit("d")]
    result = await assemble(kit, hits, minimum_relevance=0.5, maximum_accepted_results=1)
    assert [d.retrieval_rank for d in result.decisions] == [1, 2, 3, 4]
    assert [d.stage for d in result.decisions] == [
        RagPolicyStage.ACCEPTANCE,
        RagPolicyStage.ACCEPTANCE,
        RagPolicyStage.BUDGET,
        RagPolicyStage.LIMITS,
    ]
    assert [d.accepted for d in result.decisions] == [False, False, True, False]
    assert result.reason_counts == {
        "below_minimum_relevance": 1,
        "invalid_score": 1,
        "result_limit_exceeded": 1,
        "selected": 1,
    }


async def test_the_retrieval_query_is_passed_through(kit: Any) -> None:
    """The assembler retrieves with the caller's query as it is (top_k is the candidate budget)."""
    retriever = kit.Retriever([kit.hit("a")])
    query = kit.query(top_k=7)
    await RagContextAssembler(retriever).assemble(query, RagContextOptions(budget=ContextBudget(maximum=10_000)))
    assert retriever.queries == [query]


async def test_retrieval_failures_propagate(kit: Any) -> None:
    """A retrieval failure is never turned into no-context."""
    from runiq.rag import RetrievalError, RetrievalErrorCode

    class Failing:
        async def retrieve(self, query: Any) -> Any:
            raise RetrievalError(RetrievalErrorCode.EMBEDDING_FAILED, "docs")

    with pytest.raises(RetrievalError):
        await RagContextAssembler(Failing()).assemble(kit.query())


async def test_assemble_refuses_other_option_types(kit: Any) -> None:
    """Options must be RagContextOptions (a dict is not silently accepted)."""
    from runiq.rag import RagConfigurationError

    with pytest.raises(RagConfigurationError):
        await RagContextAssembler(kit.Retriever()).assemble(kit.query(), {"minimum_relevance": 0.5})  # type: ignore[arg-type]
    with pytest.raises(RagConfigurationError):
        RagContextAssembler(object())  # type: ignore[arg-type]

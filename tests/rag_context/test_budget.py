"""Context budget: the deterministic token estimate, character and token units, first-fit selection."""

from __future__ import annotations

from typing import Any

import pytest

from runiq.rag._context import (
    ContextBudget,
    ContextBudgetUnit,
    RagContextAssembler,
    RagContextOptions,
    RagContextOutcome,
    RagContextResult,
    RagNoContextReason,
    estimate_tokens,
)

CHARS, TOKENS = ContextBudgetUnit.CHARACTERS, ContextBudgetUnit.APPROXIMATE_TOKENS


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("", 0),
        ("   \n\t", 0),
        ("hello", 1),
        ("hello world", 2),
        ("POL-HR-014", 5),  # POL - HR - 014
        ("filename.cs", 3),
        ("snake_case", 3),  # underscore is not a letter or digit
        ("Grüße, 世界!", 4),  # Grüße , 世界 !
        ("a1b2 <system>", 4),  # a1b2 < system >
    ],
)
def test_token_estimate(text: str, tokens: int) -> None:
    """Letter/digit runs count 1, other non-whitespace characters 1 each, whitespace 0."""
    assert estimate_tokens(text) == tokens


async def assemble(kit: Any, contents: list[str], budget: ContextBudget, **options: Any) -> RagContextResult:
    hits = [kit.hit(f"d{i}", content=text) for i, text in enumerate(contents)]
    options.setdefault("maximum_accepted_results", 10)
    return await RagContextAssembler(kit.Retriever(hits)).assemble(
        kit.query(), RagContextOptions(budget=budget, **options)
    )


async def test_character_budget_skips_what_does_not_fit_and_continues(kit: Any) -> None:
    """First fit in order: a chunk too big is skipped, a smaller later one still gets in; nothing is cut."""
    result = await assemble(kit, ["a" * 40, "b" * 70, "c" * 50, "d" * 10], ContextBudget(maximum=100, unit=CHARS))
    assert [d.reason.value for d in result.decisions] == ["selected", "budget_exceeded", "selected", "selected"]
    assert [i.content for i in result.context] == ["a" * 40, "c" * 50, "d" * 10]
    assert result.budget.used == 100
    assert [d.size for d in result.decisions] == [40, 70, 50, 10]


async def test_exact_fit_is_selected(kit: Any) -> None:
    """used + size == maximum fits."""
    result = await assemble(kit, ["x" * 100], ContextBudget(maximum=100, unit=CHARS))
    assert result.budget.used == 100
    assert result.outcome is RagContextOutcome.CONTEXT


async def test_token_budget_uses_the_estimate(kit: Any) -> None:
    """Three 4-token chunks under a 10-token budget: two selected."""
    result = await assemble(
        kit,
        ["one two three four", "five six seven eight", "nine ten eleven twelve"],
        ContextBudget(maximum=10, unit=TOKENS),
    )
    assert [d.size for d in result.decisions] == [4, 4, 4]
    assert len(result.context) == 2
    assert result.budget.used == 8


async def test_units_differ_for_the_same_content(kit: Any) -> None:
    """The same chunk measures by code points in one unit and by estimate in the other."""
    text = "POL-HR-014 applies."
    chars = await assemble(kit, [text], ContextBudget(maximum=1000, unit=CHARS))
    tokens = await assemble(kit, [text], ContextBudget(maximum=1000, unit=TOKENS))
    assert chars.context[0].size == len(text)
    assert tokens.context[0].size == estimate_tokens(text) == 7


async def test_per_chunk_overhead_is_charged_per_selected_chunk(kit: Any) -> None:
    """Overhead models citation headers: 3 chunks of 10 + 5 overhead do not fit into 40."""
    result = await assemble(
        kit, ["a" * 10, "b" * 10, "c" * 10], ContextBudget(maximum=40, unit=CHARS, per_chunk_overhead=5)
    )
    assert len(result.context) == 2
    assert result.budget.used == 30
    assert result.budget.per_chunk_overhead == 5


async def test_nothing_fits_is_budget_exhausted(kit: Any) -> None:
    """Accepted candidates but none fit: context_budget_exhausted."""
    result = await assemble(kit, ["a" * 50, "b" * 60], ContextBudget(maximum=10, unit=CHARS))
    assert result.outcome is RagContextOutcome.NO_CONTEXT
    assert result.no_context_reason is RagNoContextReason.CONTEXT_BUDGET_EXHAUSTED
    assert result.accepted_count == 2
    assert [d.reason.value for d in result.decisions] == ["budget_exceeded", "budget_exceeded"]


async def test_selection_is_deterministic(kit: Any) -> None:
    """The same input always gives the same selection and context order."""
    contents = [f"chunk {i} " * (i + 1) for i in range(8)]
    runs = [await assemble(kit, contents, ContextBudget(maximum=60, unit=CHARS)) for _ in range(3)]
    assert len({tuple((d.reason, d.context_rank) for d in r.decisions) for r in runs}) == 1


async def test_context_ranks_are_consecutive(kit: Any) -> None:
    """Selected items are numbered 1..n in context order, skipping budget exclusions."""
    result = await assemble(kit, ["a" * 10, "b" * 99, "c" * 10], ContextBudget(maximum=30, unit=CHARS))
    assert [i.context_rank for i in result.context] == [1, 2]
    assert [i.accepted_rank for i in result.context] == [1, 3]
    assert [d.context_rank for d in result.decisions] == [1, None, 2]

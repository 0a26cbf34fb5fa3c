"""A failed reranking step (policy ``fail``) raises a RerankingFailedError from which no reranker
exception is reachable: not the cause's ``__context__`` (which ``from None`` only hides), not an
attribute, not a group member. The rerankers fail with the query and candidate content in their
exceptions."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from runiq.rag._context import RagContextAssembler, RagContextOptions, RerankerFailurePolicy, RerankingOptions
from runiq.rag._reranking import RerankerRegistration, RerankingFailedError, RerankingFailureCode
from runiq.rag.testing import CANARY
from runiq.rag.testing.chains import assert_content_free


async def _echoing_resolver(index_name: str) -> RerankerRegistration:
    raise ConnectionError(f"could not open the reranker for {CANARY}")


FAILURES: dict[str, tuple[Callable[[Any], dict[str, Any]], RerankingFailureCode]] = {
    "raises": (lambda kit: {"reranker": kit.RaisingReranker()}, RerankingFailureCode.FAILED),
    "own-timeout": (
        lambda kit: {"reranker": kit.RaisingReranker(lambda r: TimeoutError(f"{r.query}"))},
        RerankingFailureCode.TIMEOUT,
    ),
    "deadline": (lambda kit: {"reranker": kit.SlowReranker()}, RerankingFailureCode.TIMEOUT),
    "invalid": (
        lambda kit: {"reranker": kit.RespondingReranker(lambda r: {"echo": r.query})},
        RerankingFailureCode.INVALID_RESPONSE,
    ),
    "resolver": (lambda kit: {"reranker_resolver": _echoing_resolver}, RerankingFailureCode.FAILED),
}


@pytest.mark.parametrize("name", list(FAILURES))
async def test_reranking_failures_keep_no_provider_exception(kit: Any, name: str) -> None:
    """Each failure: the right code, and nothing but runiq's own content-free errors reachable."""
    build, code = FAILURES[name]
    hits = [
        kit.hit("a", content=f"Remote work policy {CANARY} alpha."),
        kit.hit("b", content=f"Remote work policy {CANARY} beta, other words."),
        kit.hit("c", content=CANARY, relevance=math.nan),
    ]
    assembler = RagContextAssembler(kit.Retriever(hits), **build(kit))
    options = RagContextOptions(
        reranking=RerankingOptions(enabled=True, timeout_seconds=0.05, on_failure=RerankerFailurePolicy.FAIL)
    )
    with pytest.raises(RerankingFailedError) as caught:
        await assembler.assemble(kit.query(text=f"remote work {CANARY}"), options)
    error = caught.value
    assert error.code is code
    assert error.__cause__ is not None and error.__cause__.__context__ is None
    assert error.__context__ is None  # raised outside ``except``: no internal signal chained either
    assert_content_free(error, CANARY)

"""Manager errors become problems raised outside the ``except`` block, so a ProblemError carries no
``__context__`` (the handler renders only its fixed problem; nothing else rides along with it)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from runiq.errors import IngestionUnavailableError, NoActiveIngestionError
from runiq.rag import IndexNotFoundError, IngestionConflictError
from runiq.rag.testing.chains import assert_content_free
from runiq_dashboard import routes
from runiq_dashboard.problems import ProblemError


class FailingManager:
    """Refuses every command with ``error``; no operation is active."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def start(self, index_name: str, reason: object) -> Any:
        raise self.error

    async def cancel(self, index_name: str) -> Any:
        raise self.error

    def status(self, index_name: str) -> Any:
        return SimpleNamespace(active_operation=None)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (IngestionConflictError("docs"), "ActiveIngestionOperation"),
        (IndexNotFoundError("docs"), "RagIndexNotFound"),
        (IngestionUnavailableError("docs"), "IngestionUnavailable"),
    ],
)
async def test_start_refusals_are_problems_with_nothing_chained(error: Exception, code: str) -> None:
    with pytest.raises(ProblemError) as caught:
        await routes._start(FailingManager(error), "docs")  # type: ignore[arg-type]
    assert caught.value.problem.code == code
    assert caught.value.__context__ is None
    assert caught.value.__cause__ is None
    assert_content_free(caught.value)


@pytest.mark.parametrize(
    ("error", "code"),
    [(NoActiveIngestionError("docs"), "NoActiveIngestionOperation"), (IndexNotFoundError("docs"), "RagIndexNotFound")],
)
async def test_cancel_refusals_are_problems_with_nothing_chained(error: Exception, code: str) -> None:
    with pytest.raises(ProblemError) as caught:
        await routes._cancel(FailingManager(error), "docs")  # type: ignore[arg-type]
    assert caught.value.problem.code == code
    assert caught.value.__context__ is None
    assert caught.value.__cause__ is None


async def test_an_unexpected_manager_error_passes_through_unchanged() -> None:
    error = RuntimeError("a bug")
    with pytest.raises(RuntimeError) as caught:
        await routes._start(FailingManager(error), "docs")  # type: ignore[arg-type]
    assert caught.value is error

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog

pytest_plugins = ["runiq.rag.testing.fixtures"]


@pytest.fixture(autouse=True)
def _fresh_structlog() -> Iterator[None]:
    """Code under test (benchmarks, the CLI) may configure structlog globally; no test sees another's config."""
    yield
    structlog.reset_defaults()

"""LoaderPool loads of loaders registered as linear (isolated=False): small files in a thread with the
worker's checks, larger ones in a worker like any other."""

from __future__ import annotations

import os

import pytest

from runiq.rag._loaders import (
    IN_THREAD_MAX_BYTES,
    DocumentLoadError,
    LoadBudget,
    LoaderPool,
    LoaderRegistry,
    LoadFailureCode,
    PlainTextLoader,
    builtin_registry,
)
from runiq.rag.testing.loader_fakes import LeakyLoader, ProcessLoader, SleepyLoader


async def test_a_small_file_loads_in_this_process_and_a_large_one_in_a_worker() -> None:
    """Up to IN_THREAD_MAX_BYTES a linear loader runs here; past it, a forked worker runs it."""
    async with LoaderPool(workers=1) as pool:
        small = await pool.load(ProcessLoader(), b"x", isolated=False)
        large = await pool.load(ProcessLoader(), b"x" * (IN_THREAD_MAX_BYTES + 1), isolated=False)
        isolated = await pool.load(ProcessLoader(), b"x")
    assert int(small.text) == os.getpid()
    assert int(large.text) != os.getpid()
    assert int(isolated.text) != os.getpid()


async def test_in_thread_loads_get_the_worker_checks() -> None:
    """Blank text is 'empty', text over max_characters 'too_large', a file over max_file_bytes never
    reaches the loader, and a loader's own exception is 'failed' with nothing of the content."""
    budget = LoadBudget(max_file_bytes=100, max_characters=10)
    async with LoaderPool(budget) as pool:
        for data, code in [
            (b"  \n ", LoadFailureCode.EMPTY),
            (b"eleven chars", LoadFailureCode.TOO_LARGE),
            (b"x" * 101, LoadFailureCode.TOO_LARGE),
            (b"\xff\xfe\x00bad \xc3\x28", LoadFailureCode.UNDECODABLE),
        ]:
            with pytest.raises(DocumentLoadError) as caught:
                await pool.load(PlainTextLoader(), data, isolated=False)
            assert caught.value.code is code
        with pytest.raises(DocumentLoadError) as leaked:
            await pool.load(LeakyLoader(), b"secret words", isolated=False)
    assert leaked.value.code is LoadFailureCode.FAILED
    assert leaked.value.__context__ is None and "secret" not in str(leaked.value)


async def test_an_in_thread_load_over_its_time_budget_fails_timeout() -> None:
    """The run goes on: the file fails 'timeout' at the budget (the thread finishes on its own)."""
    async with LoaderPool(LoadBudget(timeout_seconds=0.2)) as pool:
        with pytest.raises(DocumentLoadError) as caught:
            await pool.load(SleepyLoader(), b"x" * 10, isolated=False)  # sleeps 1 s
    assert caught.value.code is LoadFailureCode.TIMEOUT


def test_the_builtin_text_formats_are_registered_as_linear_and_html_as_isolated() -> None:
    """Only parses linear in their input skip the worker; every other loader is isolated by default."""
    registry = builtin_registry()
    isolated = {name: registry.get(name).isolated for name in registry.names()}
    assert isolated == {"csv": False, "html": True, "json": False, "markdown": False, "text": False, "tsv": False}
    plugin = LoaderRegistry()
    plugin.add(ProcessLoader())
    assert plugin.get("fake").isolated
    assert plugin.spec_for_path("A.FAKE") == plugin.get("fake")

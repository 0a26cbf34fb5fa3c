"""LoaderPool: loaders run in worker processes, and a hostile file fails with a code within its budget.

One pool (two warm supervisors) serves the whole module: starting an interpreter that imports runiq
takes seconds on a loaded machine, a forked child per file takes milliseconds.
"""

from __future__ import annotations

import asyncio
import sys
import time
import types
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from runiq.rag._loaders import (
    DocumentLoadError,
    HtmlLoader,
    LoadBudget,
    LoadedDocument,
    LoaderPool,
    LoadFailureCode,
    LoadOptions,
    PlainTextLoader,
)
from runiq.rag.testing import CANARY
from runiq.rag.testing.loader_fakes import (
    CrashingLoader,
    DeferredImportProbe,
    HungryLoader,
    LeakyLoader,
    NoisyLoader,
    SpinningLoader,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

TIMEOUT = 2.0
BUDGET = LoadBudget(
    max_file_bytes=1024 * 1024, timeout_seconds=TIMEOUT, max_characters=10_000, max_memory_bytes=1024**3
)
PAGE = b"<html><head><title>Leave</title><script>x()</script></head><body><h1>Annual leave</h1><p>25 days.</p>"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def pool() -> AsyncIterator[LoaderPool]:
    async with LoaderPool(BUDGET, workers=2) as pool:
        await pool.start()
        yield pool


async def _failure(pool: LoaderPool, loader: object, data: bytes) -> tuple[DocumentLoadError, float]:
    started = time.monotonic()
    with pytest.raises(DocumentLoadError) as caught:
        await pool.load(loader, data)  # type: ignore[arg-type]
    return caught.value, time.monotonic() - started


async def test_a_worker_returns_what_the_loader_returns_in_process(pool: LoaderPool) -> None:
    loaded = await pool.load(HtmlLoader(), PAGE)
    assert loaded == HtmlLoader().load(PAGE, options=LoadOptions())
    assert (loaded.title, loaded.text) == ("Leave", "# Annual leave\n\n25 days.")


async def test_options_reach_the_loader(pool: LoaderPool) -> None:
    from runiq.rag._loaders import JsonLoader

    loaded = await pool.load(
        JsonLoader(),
        b'{"body": "x", "lang": "en"}',
        options=LoadOptions(json_text_field="body", json_metadata_fields=("lang",)),
    )
    assert (loaded.text, dict(loaded.metadata)) == ("x", {"lang": "en"})


async def test_a_spinning_loader_fails_timeout_within_its_budget_and_the_next_file_loads_at_once(
    pool: LoaderPool,
) -> None:
    """Two hostile files at once (both workers) each fail within the budget; the pool serves on without
    restarting anything."""
    started = time.monotonic()
    outcomes = await asyncio.gather(
        pool.load(SpinningLoader(), b"x"), pool.load(SpinningLoader(), b"y"), return_exceptions=True
    )
    elapsed = time.monotonic() - started
    assert [o.code for o in outcomes if isinstance(o, DocumentLoadError)] == [LoadFailureCode.TIMEOUT] * 2
    assert TIMEOUT * 0.9 <= elapsed < TIMEOUT + 5.0  # killed at the budget, in parallel (not 2 x TIMEOUT)
    started = time.monotonic()
    assert (await pool.load(PlainTextLoader(), b"next file")).text == "next file"
    assert time.monotonic() - started < TIMEOUT  # no interpreter had to start


async def test_a_memory_bomb_fails_too_large(pool: LoaderPool) -> None:
    """A loader asking for more than the worker's address-space cap gets MemoryError: too_large."""
    error, elapsed = await _failure(pool, HungryLoader(), b"xx")  # 2 GiB against a 1 GiB cap
    assert error.code is LoadFailureCode.TOO_LARGE
    assert elapsed < TIMEOUT


async def test_a_crashing_parser_fails_only_its_file(pool: LoaderPool) -> None:
    error, _ = await _failure(pool, CrashingLoader(), b"x")
    assert error.code is LoadFailureCode.FAILED
    assert (await pool.load(PlainTextLoader(), b"after the crash")).text == "after the crash"


async def test_what_a_loader_imports_when_loading_is_imported_before_the_fork(pool: LoaderPool) -> None:
    """The supervisor imports the parsers loader modules name with ``import_when_loading`` once, so a
    file's child starts with them (importing pypdf or openpyxl per file costs 0.1-0.25 s of CPU)."""
    assert "graphlib" not in sys.modules  # the host process registers and pickles loaders without importing them
    assert (await pool.load(DeferredImportProbe(), b"x")).text == "imported"
    assert DeferredImportProbe().load(b"x", options=LoadOptions()).text == "not imported"


async def test_failures_say_nothing_about_the_content(pool: LoaderPool) -> None:
    """The loader's exception quotes the document; the error the caller gets has a code and a fixed message."""
    error, _ = await _failure(pool, LeakyLoader(), f"salary table {CANARY}".encode())
    assert error.code is LoadFailureCode.FAILED
    assert error.__cause__ is None
    assert error.__context__ is None
    assert CANARY not in f"{error} {error!r} {error.args} {vars(error)}"


async def test_a_loader_printing_content_reaches_no_output_and_breaks_no_reply(
    pool: LoaderPool, capfd: pytest.CaptureFixture[str]
) -> None:
    loaded = await pool.load(NoisyLoader(), b"quarterly numbers")
    assert (loaded.text, loaded.title) == ("quarterly numbers", "noisy")
    captured = capfd.readouterr()
    assert CANARY not in captured.out + captured.err


async def test_size_budgets_and_empty_results(pool: LoaderPool) -> None:
    """Bytes over the budget never reach a worker; text over the character budget and blank text fail."""
    error, elapsed = await _failure(pool, PlainTextLoader(), b"x" * (BUDGET.max_file_bytes + 1))
    assert (error.code, elapsed < 1.0) == (LoadFailureCode.TOO_LARGE, True)
    error, _ = await _failure(pool, PlainTextLoader(), b"y" * (BUDGET.max_characters + 1))
    assert error.code is LoadFailureCode.TOO_LARGE
    for blank in (b"", b" \n\t "):
        error, _ = await _failure(pool, PlainTextLoader(), blank)
        assert error.code is LoadFailureCode.EMPTY


async def test_a_loader_the_worker_cannot_import_fails_its_file(
    pool: LoaderPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loader class that exists only in the parent (its module is not importable) fails its file."""
    module = types.ModuleType("runiq_parent_only_loaders")
    loader_class = type("ParentOnlyLoader", (PlainTextLoader,), {"__module__": module.__name__})
    module.ParentOnlyLoader = loader_class  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    error, _ = await _failure(pool, loader_class(), b"x")
    assert error.code is LoadFailureCode.FAILED


async def test_cancelling_a_load_kills_its_worker_and_the_child_it_forked(pool: LoaderPool) -> None:
    """A cancelled load's late reply must not answer the next file: the supervisor and its child die."""
    task = asyncio.create_task(pool.load(SpinningLoader(), b"x"))
    await asyncio.sleep(0.5)
    groups = [w._process.pid for w in pool._workers if w._process is not None]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(groups) == 2
    remaining = {w._process.pid for w in pool._workers if w._process is not None}
    (killed,) = set(groups) - remaining
    assert await asyncio.to_thread(_running_after_kill, killed) == 0  # the supervisor and the spinning child it forked
    assert (await pool.load(PlainTextLoader(), b"served again")).text == "served again"
    assert isinstance(await pool.load(HtmlLoader(), PAGE), LoadedDocument)


def _running_members(group: int) -> list[int]:
    """Processes of a process group that are not zombies (a killed orphan waits for init to reap it)."""
    members = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def _running_after_kill(group: int) -> int:
    """How many of the group still run once a SIGKILL had time to land. Shorter than the child's own
    CPU-time cap (budget + 1 s of CPU), so only the kill can empty the group in time."""
    deadline = time.monotonic() + 1.5
    while (running := len(_running_members(group))) and time.monotonic() < deadline:
        time.sleep(0.05)
    return running


async def test_a_closed_pool_refuses_work() -> None:
    pool = LoaderPool(BUDGET, workers=1)
    await pool.aclose()
    with pytest.raises(RuntimeError):
        await pool.load(PlainTextLoader(), b"x")

"""Run loaders off the event loop, each file within a size, time and memory budget.

Why processes: the parsers are pure Python and a hostile file can keep one busy for minutes (or for
ever). A thread cannot be stopped, so a time budget in a thread is a report, not a limit. Each worker
is a warm supervisor process (``python -m runiq.rag._loaders.worker``) that forks one child per file
and kills it with ``SIGKILL`` when the file overruns its budget: the file fails ``timeout`` within its
budget, and the next file is served at once (a fork of a warm process costs milliseconds; starting an
interpreter that imports runiq costs seconds). The child also caps its memory (``RLIMIT_AS``), so a
decompression bomb fails ``too_large``, and a parser crash ends only that child (``failed``).

Why not ``concurrent.futures.ProcessPoolExecutor``: it cannot kill one task (a stuck task blocks its
worker for ever, or killing it breaks the whole pool with ``BrokenProcessPool``), and its spawn and
forkserver start methods re-import the host's ``__main__`` in every worker. The supervisors here are
plain subprocesses on two pipes, like the PostgreSQL plugin's tokenising worker, each in its own
process group so that stopping one stops whatever it forked.

Checks before the parse: a file over ``max_file_bytes`` fails ``too_large`` without reaching a worker;
archive formats check their declared unpacked size before inflating anything
(:func:`~runiq.rag._loaders.archives.open_zip`).

Why some loads run in a thread instead (``load(..., isolated=False)``): a fork per file costs about
4 ms here, ten times what decoding a small text file costs, so a folder of text would load at a
fraction of the speed the rest of ingestion runs at. Loaders whose parse is linear in the input and
never inflates it (text decoding, JSON and CSV in C, the Markdown heading scan) are registered as not
needing isolation (:meth:`~runiq.rag._loaders.LoaderRegistry.add`). Files up to
``IN_THREAD_MAX_BYTES`` of those formats load in a thread with the same size and character checks; a
file that overruns the time budget fails ``timeout``, but a thread cannot be stopped, so a larger file
goes to a worker like any other: there the fork costs little beside the parse, and the thread never
holds a parse of more than a few seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pickle
import signal
import sys
from dataclasses import dataclass
from typing import Any

from runiq.rag._errors import RagConfigurationError
from runiq.rag._loaders.base import DocumentLoader, Heading, LoadedDocument, LoadOptions, PageSpan
from runiq.rag._loaders.errors import DocumentLoadError, LoadFailureCode
from runiq.rag._loaders.worker import HEADER, load_checked

__all__ = ["DEFAULT_MAX_FILE_BYTES", "IN_THREAD_MAX_BYTES", "LoadBudget", "LoaderPool", "loads_in_thread"]

# The largest file a loader is given, unless configured: the one default for LoadBudget and every
# directory source. PDFs and Office files with images are often tens of MiB while their text is small;
# text beyond ``max_characters`` fails ``too_large`` whatever the file size.
DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024
# The largest file a loader registered as not needing isolation loads in a thread (see above).
IN_THREAD_MAX_BYTES = 2 * 1024 * 1024


def loads_in_thread(*, isolated: bool, size: int) -> bool:
    """The one rule for where a file loads: in a thread only for a loader registered as not needing
    isolation and a file of at most ``IN_THREAD_MAX_BYTES``; in a forked worker otherwise."""
    return not isolated and size <= IN_THREAD_MAX_BYTES


_START_TIMEOUT = 60.0  # importing runiq in a fresh interpreter on a loaded machine
_STOP_TIMEOUT = 5.0
_BACKSTOP_GRACE = 10.0
_REPLY_OVERHEAD = 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadBudget:
    """Per-file limits. ``max_memory_bytes`` caps the address space of the process that loads a file
    (None: no cap); that process starts as a copy of its supervisor, about 250 MB with the PDF and
    Office loaders imported, so the cap is what a parse may add on top of that."""

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    timeout_seconds: float = 60.0
    max_characters: int = 20_000_000
    max_memory_bytes: int | None = 2 * 1024 * 1024 * 1024

    def __post_init__(self) -> None:
        if self.max_file_bytes <= 0 or self.max_characters <= 0 or self.timeout_seconds <= 0:
            raise RagConfigurationError("Loader budgets must be greater than zero.")
        if self.max_memory_bytes is not None and self.max_memory_bytes < 512 * 1024 * 1024:
            raise RagConfigurationError("Loader max_memory_bytes must be at least 512 MiB (or None).")


class LoaderPool:
    """A fixed number of worker processes, started on first use and stopped by :meth:`aclose`.

    ``load`` raises :class:`DocumentLoadError` for a file that cannot be loaded; a run goes on with the
    next file. Cancelling a ``load`` kills its worker (its late reply must not answer the next file).
    """

    def __init__(self, budget: LoadBudget | None = None, *, workers: int = 2) -> None:
        if workers <= 0:
            raise RagConfigurationError("A loader pool needs at least one worker.")
        self.budget = budget if budget is not None else LoadBudget()
        self._workers = [_Worker(self.budget) for _ in range(workers)]
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        for worker in self._workers:
            self._idle.put_nowait(worker)
        self._closed = False

    async def __aenter__(self) -> LoaderPool:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Start every worker now instead of on first use (a host's startup, or a test's warm-up)."""
        await asyncio.gather(*(worker.started() for worker in self._workers))

    async def load(
        self, loader: DocumentLoader, data: bytes, *, options: LoadOptions | None = None, isolated: bool = True
    ) -> LoadedDocument:
        """``loader``'s document from ``data`` within the budget. ``isolated=False`` (a loader registered
        as linear) runs a file of up to ``IN_THREAD_MAX_BYTES`` in a thread. Raises :class:`DocumentLoadError`."""
        if self._closed:
            raise RuntimeError("The loader pool is closed.")
        if len(data) > self.budget.max_file_bytes:
            raise DocumentLoadError(LoadFailureCode.TOO_LARGE)
        request = (loader, data, options or LoadOptions(), self.budget.max_characters)
        if loads_in_thread(isolated=isolated, size=len(data)):
            return await self._load_in_thread(*request)
        payload = await asyncio.to_thread(pickle.dumps, request, pickle.HIGHEST_PROTOCOL)
        worker = await self._idle.get()
        try:
            reply = await worker.exchange(payload)
        finally:
            self._idle.put_nowait(worker)
        return await asyncio.to_thread(_decode_reply, reply)

    async def _load_in_thread(
        self, loader: DocumentLoader, data: bytes, options: LoadOptions, max_characters: int
    ) -> LoadedDocument:
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(
                asyncio.to_thread(load_checked, loader, data, options, max_characters), self.budget.timeout_seconds
            )
        raise DocumentLoadError(LoadFailureCode.TIMEOUT)

    async def aclose(self) -> None:
        self._closed = True
        await asyncio.gather(*(worker.close() for worker in self._workers))


class _Worker:
    """One supervisor process; one request at a time (the pool's queue hands it to one caller)."""

    def __init__(self, budget: LoadBudget) -> None:
        self._budget = budget
        self._process: asyncio.subprocess.Process | None = None

    async def started(self) -> asyncio.subprocess.Process:
        if self._process is None or self._process.returncode is not None:
            await self._stop(kill=True)
            self._process = await asyncio.wait_for(self._spawn(), _START_TIMEOUT)
        return self._process

    async def _spawn(self) -> asyncio.subprocess.Process:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "runiq.rag._loaders.worker",
            repr(self._budget.timeout_seconds),
            str(self._budget.max_memory_bytes or 0),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=_child_environment(),
            start_new_session=True,  # its own process group: stopping it stops a child it forked too
        )
        self._process = process
        assert process.stdout is not None
        await _read_payload(process.stdout, 64)  # the ready frame: the supervisor's imports are done
        return process

    async def exchange(self, payload: bytes) -> bytes:
        """The reply payload. The supervisor enforces the time budget; this is the backstop should the
        supervisor itself stop answering (it is then replaced, and the file fails ``timeout``)."""
        code: LoadFailureCode | None = None
        reply = b""
        try:
            process = await self.started()
        except (OSError, EOFError, asyncio.IncompleteReadError, ValueError, TimeoutError):
            code = LoadFailureCode.FAILED  # the worker could not start
        else:
            code, reply = await self._timed(process, payload)
        if code is not None:
            await self._stop(kill=True)
            raise DocumentLoadError(code)
        return reply

    async def _timed(self, process: asyncio.subprocess.Process, payload: bytes) -> tuple[LoadFailureCode | None, bytes]:
        backstop = self._budget.timeout_seconds + _BACKSTOP_GRACE
        try:
            return None, await asyncio.wait_for(self._round_trip(process, payload), backstop)
        except TimeoutError:
            return LoadFailureCode.TIMEOUT, b""
        except (OSError, EOFError, asyncio.IncompleteReadError, ValueError):
            return LoadFailureCode.FAILED, b""  # the supervisor died mid-request
        except BaseException:
            await self._stop(kill=True)  # cancelled: a late reply must not answer the next request
            raise

    async def _round_trip(self, process: asyncio.subprocess.Process, payload: bytes) -> bytes:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(HEADER.pack(len(payload)) + payload)
        await process.stdin.drain()
        return await _read_payload(process.stdout, 4 * self._budget.max_characters + _REPLY_OVERHEAD)

    async def _stop(self, *, kill: bool) -> None:
        """End the supervisor and reap it: killed at once with anything it forked, or asked to exit
        (end of input) and killed if it has not within a few seconds."""
        process, self._process = self._process, None
        if process is None:
            return
        if kill:
            _kill_group(process)
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), _STOP_TIMEOUT)
        except TimeoutError:
            _kill_group(process)
            await process.wait()

    async def close(self) -> None:
        await self._stop(kill=False)


def _kill_group(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


async def _read_payload(stream: asyncio.StreamReader, limit: int) -> bytes:
    size = HEADER.unpack(await stream.readexactly(HEADER.size))[0]
    if size > limit:
        raise ValueError("reply frame over its limit")
    return await stream.readexactly(size)


def _child_environment() -> dict[str, str]:
    """The parent's environment, with its import path, so the child unpickles the same loader classes."""
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(path for path in sys.path if path)
    return environment


def _decode_reply(reply: bytes) -> LoadedDocument:
    code: LoadFailureCode | None = None
    try:
        message: dict[str, Any] = json.loads(reply)
        if "failure" in message:
            code = LoadFailureCode(message["failure"])
        else:
            return _document(message["document"])
    except (ValueError, KeyError, TypeError, IndexError):
        code = LoadFailureCode.FAILED  # a reply that is not what the worker sends
    assert code is not None
    raise DocumentLoadError(code)


def _document(fields: dict[str, Any]) -> LoadedDocument:
    return LoadedDocument(
        text=fields["text"],
        title=fields["title"],
        content_type=str(fields["content_type"]),
        pages=tuple(PageSpan(int(n), int(s), int(e)) for n, s, e in fields["pages"]),
        headings=tuple(Heading(int(level), str(title), int(start)) for level, title, start in fields["headings"]),
        metadata=fields["metadata"],
    )

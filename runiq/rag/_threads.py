"""A thread of its own for allocation-heavy work kept off the event loop.

glibc gives each thread that allocates its own malloc arena, and an arena keeps its peak. Work sent to
the loop's default pool (``asyncio.to_thread``) reaches more of the pool's threads as a long run goes
on, so the process's peak RSS grows with the run's length, an arena per thread. Work that holds the GIL
gains nothing from more threads anyway. Measured on one-line files through ``RagIngestionManager``
(``benchmarks/managed_ingestion.py memory``): preparing chunks in the default pool, +130 MiB at 200,000
files against +64 MiB in one thread; the directory source's listing and reads in the default pool,
+58 MiB at 200,000 files and +86 MiB at 400,000, in one thread +66 and +67 MiB.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["OwnThread"]

T = TypeVar("T")


class OwnThread:
    """One worker thread, started on the first call; calls run one after another, in the order made."""

    def __init__(self, name: str) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    def run(self, function: Callable[..., T], /, *args: object) -> asyncio.Future[T]:
        """``function(*args)`` in the thread, in a copy of the caller's context (as ``asyncio.to_thread``)."""
        context = contextvars.copy_context()
        return asyncio.get_running_loop().run_in_executor(
            self._executor, functools.partial(context.run, function, *args)
        )

    def shutdown(self) -> None:
        """The thread ends after the calls already made (none is dropped)."""
        self._executor.shutdown(wait=False)

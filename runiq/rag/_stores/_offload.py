"""Run blocking work in a worker thread without letting a cancelled caller outlive it.

``await asyncio.to_thread(f)`` returns at once when the awaiting task is cancelled, while the thread
keeps running. A store that holds its read lock around the call would then release the lock while
the thread still reads the index, and a writer could change rows under it. :func:`run_to_completion`
waits for the thread first and only then re-raises the cancellation.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TypeVar

__all__ = ["run_to_completion"]

T = TypeVar("T")


async def run_to_completion(func: Callable[[], T]) -> T:
    future = asyncio.get_running_loop().run_in_executor(None, func)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        while not future.done():  # the thread cannot be stopped: wait for it, then re-raise
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([future])
        raise

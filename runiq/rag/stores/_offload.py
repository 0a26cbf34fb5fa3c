"""Run blocking work in a worker thread without letting a cancelled caller outlive it.

``await asyncio.to_thread(f)`` returns at once when the awaiting task is cancelled, while the thread
keeps running. A store that holds its read lock around the call would then release the lock while
the thread still reads the index, and a writer could change rows under it. :func:`run_to_completion`
waits for the thread first and only then re-raises the cancellation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

__all__ = ["run_to_completion"]

T = TypeVar("T")


async def run_to_completion(func: Callable[[], T]) -> T:
    task = asyncio.ensure_future(asyncio.to_thread(func))
    cancelled: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait([task])
        except asyncio.CancelledError as exc:  # keep waiting: the thread cannot be stopped
            cancelled = exc
    if cancelled is not None:
        raise cancelled
    return task.result()

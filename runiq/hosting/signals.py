"""Running an entry point's main coroutine so that SIGTERM, like Ctrl-C, stops it cleanly.

Without this, SIGTERM's default action ends the process on the spot: no ``finally`` block or
``async with`` exit runs, so stores stay open and an embedded database server keeps running.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine
from types import FrameType
from typing import Any, TypeVar

__all__ = ["HANDLED_SIGNALS", "Interrupted", "run_until_signalled"]

T = TypeVar("T")

HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """The main coroutine was cancelled because the process received ``signum``; its cleanup has run.

    A ``BaseException``, like ``KeyboardInterrupt``, so ``except Exception`` does not swallow it.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(f"Interrupted by signal {signal.Signals(signum).name}.")
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """The shell convention for a process ended by a signal: 128 + its number."""
        return 128 + self.signum


def run_until_signalled(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``, except that SIGINT and SIGTERM cancel ``main`` so its ``finally`` blocks and
    ``async with`` exits run (stores close, an embedded server stops), then raise :class:`Interrupted`.

    Each further signal cancels again, interrupting a cleanup that hangs. The handlers are Python
    ``signal.signal`` handlers, restored on return, so code that installs its own for a while (uvicorn
    does while it serves) takes over and hands back. Outside the main thread this is ``asyncio.run``.
    """
    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(main)
    return asyncio.run(_supervised(main))


async def _supervised(main: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(main)
    received: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        loop.call_soon_threadsafe(task.cancel)  # wakes the loop, which a bare cancel() would not

    previous = {sig: signal.signal(sig, on_signal) for sig in HANDLED_SIGNALS}
    try:
        result = await task
    except asyncio.CancelledError:
        if not received:
            raise
        raise Interrupted(received[0]) from None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
    if received:  # main finished (or swallowed the cancellation) after the signal arrived
        raise Interrupted(received[0])
    return result

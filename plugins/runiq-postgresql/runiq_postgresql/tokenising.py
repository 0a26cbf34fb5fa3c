"""Bulk tokenising in a helper process, so the analyzer runs on another core than the event loop.

The analyzer is pure Python and holds the GIL: in a worker thread it competes with the event loop
that feeds COPY to the server, so a bulk load spends its time taking turns. A child process (one
per store, started on the first bulk write) tokenises the next slice while the server merges the
current one.

The child is ``python -m runiq_postgresql.tokenising_worker`` on two pipes: it never imports the
host's ``__main__`` (as ``multiprocessing`` spawn would), exits when its stdin closes (so it dies
with its parent), and writes nothing but result frames: its stderr goes nowhere, and an error is
reported as the exception's type name only, never with content. When the child cannot start or
dies, the store tokenises in a thread instead and logs why, without content.
"""

from __future__ import annotations

import asyncio
import pickle
import struct
import sys
from collections.abc import Sequence

from runiq.logging import get_logger
from runiq.rag.providers import LexicalOptions
from runiq_postgresql.lexical import SliceTerms

__all__ = ["HEADER", "TokenisingWorker", "WorkerUnavailable", "frame", "read_frame"]

log = get_logger(__name__)

HEADER = struct.Struct(">I")  # the payload length in front of every frame
_START_TIMEOUT = 30.0


class WorkerUnavailable(Exception):
    """The child process could not start or stopped; callers tokenise in-process instead."""


def frame(payload: object) -> bytes:
    """A length-prefixed pickle: the one message format in both directions."""
    data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


async def read_frame(reader: asyncio.StreamReader) -> object:
    size = HEADER.unpack(await reader.readexactly(HEADER.size))[0]
    return pickle.loads(await reader.readexactly(size))  # noqa: S301 - our own child, over a private pipe


class TokenisingWorker:
    """One child process; requests are serialised (one slice in flight), the store pipelines them."""

    def __init__(self, lexical: LexicalOptions) -> None:
        self._lexical = lexical
        self._process: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()
        self._failed = False

    @property
    def available(self) -> bool:
        return not self._failed

    async def slice_terms(self, contents: Sequence[str]) -> SliceTerms:
        """The same value as ``lexical.slice_terms(contents)``, computed in the child."""
        async with self._lock:
            try:
                process = await self._started()
                assert process.stdin is not None
                assert process.stdout is not None
                process.stdin.write(frame(list(contents)))
                await process.stdin.drain()
                reply = await read_frame(process.stdout)
            except (OSError, EOFError, asyncio.IncompleteReadError, pickle.UnpicklingError) as exc:
                await self._fail(type(exc).__name__)
                raise WorkerUnavailable from None
            except asyncio.CancelledError:
                self._discard()  # its reply would answer the next request: start a fresh child next time
                raise
        if not isinstance(reply, SliceTerms):
            await self._fail(str(reply))  # the child's error frame: an exception type name
            raise WorkerUnavailable
        return reply

    async def _started(self) -> asyncio.subprocess.Process:
        if self._failed:
            raise WorkerUnavailable
        if self._process is None:
            self._process = await asyncio.wait_for(
                asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "runiq_postgresql.tokenising_worker",
                    self._lexical.stopwords,
                    self._lexical.stemmer,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.DEVNULL,
                ),
                _START_TIMEOUT,
            )
            log.info("postgresql.tokenising_worker_started", pid=self._process.pid)
        return self._process

    async def _fail(self, reason: str) -> None:
        self._failed = True
        log.warning("postgresql.tokenising_worker_unavailable", reason=reason, fallback="thread")
        await self.close()

    def _discard(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            process.kill()

    async def close(self) -> None:
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        if process.stdin is not None:
            process.stdin.close()  # the child exits at end of input
        try:
            await asyncio.wait_for(process.wait(), 5.0)
        except TimeoutError:
            process.kill()
            await process.wait()

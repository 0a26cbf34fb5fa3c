"""Synchronous access to a runiq host, for scripts, notebooks and REPLs.

runiq's API is asyncio. :func:`open_host` starts a host on a private event loop in a background thread;
the :class:`SyncHost` it returns submits the async API's coroutines to that loop
(``asyncio.run_coroutine_threadsafe``) and waits for their results. Nothing is re-implemented: each
method is one call of the async API. Because the loop is private, the methods behave the same from
plain code and from inside a running event loop (a Jupyter cell, an async test): there is no
"event loop is already running" error and no deadlock. The calling thread waits; asynchronous code
that can ``await`` should use the async API instead.

    with open_host("runiq.toml") as runiq:
        runiq.run("handbook")
        result = runiq.retrieve(RagQuery(index_name="handbook", text="POL-HR-014"))
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from pathlib import Path
from types import TracebackType
from typing import TypeVar

import structlog

from runiq.hosting import Host, HostBuilder
from runiq.logging import configure_logging
from runiq.rag import (
    RagIndexStatus,
    RagIngestionManager,
    RagIngestionOperation,
    RagIngestionReason,
    RagQuery,
    RagRetrievalResult,
    RagRetriever,
    add_runiq_rag,
)
from runiq.settings import LoggingSettings, RuniqSettings

__all__ = ["SyncHost", "open_host"]

T = TypeVar("T")

_THREAD_NAME = "runiq-sync-host"


class SyncHost:
    """A started :class:`~runiq.hosting.Host` driven from synchronous code. Use :func:`open_host`.

    Methods may be called from any thread except the host's own loop thread (code running *on* the host,
    such as a provider or a sink, must await the async API). :meth:`close` stops the host; a
    ``with`` block closes it on exit, and a host still open when the interpreter exits is closed then.
    """

    def __init__(self, host: Host) -> None:
        self._host = host
        self._closed = False
        self._lock = threading.Lock()
        self._loop_ready: Future[tuple[asyncio.AbstractEventLoop, asyncio.Event, asyncio.Task[None]]] = Future()
        self._started: Future[None] = Future()
        self._stopped: Future[None] = Future()
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), name=_THREAD_NAME, daemon=True)
        self._thread.start()
        self._loop, self._stop, self._task = self._loop_ready.result()
        try:
            self._started.result()
        except BaseException:  # start failed, or Ctrl-C while an on_startup ingestion runs
            self._closed = True
            with contextlib.suppress(RuntimeError):  # the loop closes on its own after a failed start
                self._loop.call_soon_threadsafe(self._task.cancel)
            self._thread.join()
            raise
        atexit.register(self.close)

    async def _main(self) -> None:
        stop = asyncio.Event()
        task = asyncio.current_task()
        assert task is not None
        self._loop_ready.set_result((asyncio.get_running_loop(), stop, task))
        try:
            await self._host.start()
        except BaseException as exc:  # the host stopped what it had started; the caller re-raises
            self._started.set_exception(exc)
            return
        self._started.set_result(None)
        try:
            await stop.wait()
        finally:
            await self._stop_host()

    async def _stop_host(self) -> None:
        try:
            await self._host.stop()
        except BaseException as exc:
            self._stopped.set_exception(exc)
        else:
            self._stopped.set_result(None)

    @property
    def host(self) -> Host:
        """The underlying async host. Use its services through :meth:`call`, which runs on its loop."""
        return self._host

    def call(self, function: Callable[[Host], Awaitable[T]]) -> T:
        """Run ``function(host)`` on the host's loop and return its awaited result, for any async API
        without a method here, e.g. ``call(lambda h: h.services.get(RagContextAssembler).assemble(...))``.

        Exceptions propagate unchanged. Ctrl-C (``KeyboardInterrupt``) cancels the call, then propagates.
        """
        if threading.current_thread() is self._thread:
            raise RuntimeError("A SyncHost cannot be called from its own event loop; await the async API there.")
        with self._lock:
            if self._closed:
                raise RuntimeError("This SyncHost is closed.")
            future = asyncio.run_coroutine_threadsafe(_invoke(function, self._host), self._loop)
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            raise

    def retrieve(self, query: RagQuery) -> RagRetrievalResult:
        """:meth:`RagRetriever.retrieve <runiq.rag.RagRetriever.retrieve>`."""
        return self.call(lambda host: host.services.get(RagRetriever).retrieve(query))

    def run(self, index_name: str, reason: RagIngestionReason = RagIngestionReason.MANUAL) -> RagIngestionOperation:
        """:meth:`RagIngestionManager.run <runiq.rag.RagIngestionManager.run>`: ingest now and wait."""
        return self.call(lambda host: host.services.get(RagIngestionManager).run(index_name, reason))

    def status(self, index_name: str) -> RagIndexStatus:
        """:meth:`RagIngestionManager.status <runiq.rag.RagIngestionManager.status>`, read on the host's loop."""

        async def status(host: Host) -> RagIndexStatus:
            return host.services.get(RagIngestionManager).status(index_name)

        return self.call(status)

    def close(self) -> None:
        """Stop the host (active ingestion runs are cancelled, stores closed) and its loop. Idempotent."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("A SyncHost cannot be closed from its own event loop.")
        with self._lock:
            if self._closed:
                return
            self._closed = True
        atexit.unregister(self.close)
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join()
        self._stopped.result()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> SyncHost:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


async def _invoke(function: Callable[[Host], Awaitable[T]], host: Host) -> T:
    return await function(host)


def open_host(target: str | os.PathLike[str] | HostBuilder | Host) -> SyncHost:
    """Build (if needed) and start a host on a private event loop; returns the :class:`SyncHost`.

    ``target`` is a ``runiq.toml`` path (loaded with :meth:`RuniqSettings.load
    <runiq.settings.RuniqSettings.load>`, installed plugins included), a :class:`HostBuilder` (RAG is
    added with :func:`~runiq.rag.add_runiq_rag` if it was not) or a built, not yet started
    :class:`Host`. Starting fires the indexes' ingestion strategies, as ``async with host`` does:
    ``on_startup`` indexes are ingested before this returns.

    When structlog is not configured yet, it is configured like the ``runiq`` command does (the file's
    ``[logging]`` settings, written to stderr), so runiq's logs never land on stdout; a configuration
    the application made is left alone.
    """
    if isinstance(target, Host):
        _default_logging(None)
        return SyncHost(target)
    if isinstance(target, HostBuilder):
        _default_logging(target.settings.logging)
        builder = target
    else:
        settings = RuniqSettings.load(Path(target))
        _default_logging(settings.logging)  # before plugins load: they may log
        builder = HostBuilder(settings=settings)
    add_runiq_rag(builder)
    return SyncHost(builder.build())


def _default_logging(settings: LoggingSettings | None) -> None:
    if not structlog.is_configured():
        configure_logging(settings)

"""What runs inside each Ray actor: one open embedding client of the configured provider.

This module is imported in the worker processes; it must not import Ray (the driver decorates the
class with the resources it asks for).
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Coroutine, Mapping, Sequence
from contextlib import AsyncExitStack
from typing import Any, TypeVar

import numpy as np
from runiq.errors import ProviderError, RagConfigurationError
from runiq.hosting import builtin_plugins
from runiq.plugins import PluginHost
from runiq.rag.providers import EmbeddingClient, EmbeddingInputKind, ProviderKind, ProviderRegistry

__all__ = ["EmbeddingWorker", "WorkerFailure"]

T = TypeVar("T")


class WorkerFailure(Exception):
    """A picklable, content-free stand-in for a worker's exception.

    runiq errors are content-free by contract, so a configuration error keeps its message; any other
    exception keeps only its type name, so no input reaches Ray's logs or the driver.
    """

    def __init__(self, kind: str, message: str, configuration: bool) -> None:
        super().__init__(kind, message, configuration)
        self.kind = kind
        self.message = message
        self.configuration = configuration


def _failure(exc: Exception) -> WorkerFailure:
    if isinstance(exc, RagConfigurationError):
        return WorkerFailure(type(exc).__name__, str(exc), configuration=True)
    if isinstance(exc, ProviderError):
        return WorkerFailure(type(exc).__name__, exc.reason, configuration=False)
    return WorkerFailure(type(exc).__name__, "", configuration=False)


class EmbeddingWorker:
    """Opens the provider once on its own event loop and embeds one batch per call.

    Ray runs one call at a time per actor (the default ``max_concurrency=1``), which suits models
    that already use every core they are given. The provider's loop runs in a thread of its own: the
    actor's thread may already run Ray's.
    """

    def __init__(self, provider: str, options: Mapping[str, Any], plugin_modules: Sequence[str] = ()) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="runiq-ray-provider", daemon=True)
        self._thread.start()
        self._resources = AsyncExitStack()
        # A failure to open is kept and raised by the first call: an exception in an actor's
        # constructor reaches the driver only as text inside Ray's ActorDiedError.
        self._client: EmbeddingClient | WorkerFailure
        try:
            self._client = self._run(self._open(provider, options, plugin_modules))
        except WorkerFailure as failure:
            self._client = failure

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        try:
            return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()
        except Exception as exc:
            failure = _failure(exc)
        raise failure

    async def _open(self, provider: str, options: Mapping[str, Any], plugin_modules: Sequence[str]) -> EmbeddingClient:
        plugins = [importlib.import_module(name) for name in plugin_modules]
        registry = ProviderRegistry()
        # the same providers a host has: the built-ins, entry points, plugin_modules
        PluginHost.create(plugins=plugins, builtins=builtin_plugins()).register_providers(registry)
        spec = registry.get(ProviderKind.EMBEDDING, provider)
        validated = spec.validate_options(options, context="a Ray embedding worker")
        client: EmbeddingClient = await self._resources.enter_async_context(spec.factory(validated))
        return client

    def _opened(self) -> EmbeddingClient:
        if isinstance(self._client, WorkerFailure):
            raise self._client
        return self._client

    def describe(self) -> tuple[str, int]:
        """The inner model's identity and dimensions: the index records the model, not the transport."""
        client = self._opened()
        return client.model_name, client.dimensions

    def embed(self, texts: list[str], kind: str) -> np.ndarray[Any, np.dtype[np.float32]]:
        client = self._opened()
        vectors = self._run(client.embed(texts, EmbeddingInputKind(kind)))
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def close(self) -> None:
        """Close the provider, then stop and close the loop (even when the provider fails to close)."""
        try:
            if not isinstance(self._client, WorkerFailure):
                self._run(self._resources.aclose())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop.close()

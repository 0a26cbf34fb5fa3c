"""The module named by the ``runiq`` entry point: it holds the hook implementations.

Registration runs in every host and every ``runiq`` command (``runiq status`` included), so this
module imports only the options model; the embedder and numpy load when a host first opens the
provider, off the event loop.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from runiq.rag.providers import ProviderRegistry, hookimpl

from runiq_example_plugin.options import PROVIDER_NAME, CharNgramOptions

if TYPE_CHECKING:
    from runiq_example_plugin.embedder import CharNgramEmbedder

__all__ = ["runiq_register_providers"]


@asynccontextmanager
async def _open(options: CharNgramOptions) -> AsyncIterator[CharNgramEmbedder]:
    # Importing numpy takes a moment of CPU: in a worker thread, once per process.
    await asyncio.to_thread(importlib.import_module, "runiq_example_plugin.embedder")
    from runiq_example_plugin.embedder import CharNgramEmbedder

    # Nothing to open or close; a client with a connection pool would open it here and close it
    # after the yield, when the host stops.
    yield CharNgramEmbedder(options)


@hookimpl
def runiq_register_providers(registry: ProviderRegistry) -> None:
    registry.add_embedding(PROVIDER_NAME, _open, options=CharNgramOptions)

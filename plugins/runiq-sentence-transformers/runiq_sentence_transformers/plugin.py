"""The ``runiq`` entry point: registers the ``sentence-transformers`` embedding and cross-encoder reranker providers.

Importing this module is cheap: sentence-transformers (and torch) are imported only when a model is
first opened, so hosts that never use the provider do not pay seconds of start-up for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from runiq.rag.providers import ProviderRegistry, hookimpl

from runiq_sentence_transformers.cross_encoder import CrossEncoderOptions, open_cross_encoder
from runiq_sentence_transformers.loading import load_model, resolve_model_path
from runiq_sentence_transformers.options import PROVIDER_NAME, SentenceTransformerOptions

if TYPE_CHECKING:
    from runiq_sentence_transformers.embedder import SentenceTransformerEmbedder

__all__ = ["open_sentence_transformer", "runiq_register_providers"]


@asynccontextmanager
async def open_sentence_transformer(options: SentenceTransformerOptions) -> AsyncIterator[SentenceTransformerEmbedder]:
    """Check the local path and load the model in a worker thread; it is released when the host stops.

    Raises:
        RagConfigurationError: ``model_path`` is not an existing local model directory.
        ProviderUnavailableError: the model could not be loaded (broken files, unavailable device).
    """
    path = await asyncio.to_thread(resolve_model_path, options)
    model = await asyncio.to_thread(load_model, path, options.device)  # imports sentence-transformers and numpy
    from runiq_sentence_transformers.embedder import SentenceTransformerEmbedder

    yield SentenceTransformerEmbedder(
        model, model_name=options.identity, batch_size=options.batch_size, normalize=options.normalize
    )


@hookimpl
def runiq_register_providers(registry: ProviderRegistry) -> None:
    registry.add_embedding(PROVIDER_NAME, open_sentence_transformer, options=SentenceTransformerOptions)
    # The cross-encoder reranker runs in process: nothing leaves the host, so no egress approval is needed.
    registry.add_reranker(PROVIDER_NAME, open_cross_encoder, options=CrossEncoderOptions, remote=False)

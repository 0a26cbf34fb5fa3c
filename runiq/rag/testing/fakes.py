"""Fakes for failure-path tests: slow, failing and canary-leaking providers, and a counting key source."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from pydantic import SecretStr

from runiq.errors import ProviderUnavailableError
from runiq.rag._documents import RagChunk, chunk_id_for
from runiq.rag._embeddings.base import EmbeddingInputKind, FloatMatrix
from runiq.rag._embeddings.hashing import HashingEmbedder

__all__ = ["CANARY", "CountingSecretProvider", "FailingEmbedder", "SlowEmbedder", "UnavailableEmbedder", "make_chunks"]

# Put this in documents and queries; assert it never shows up in logs, errors or payloads.
CANARY = "CANARY-7f3a9c-SECRET-CONTENT"


def make_chunks(document_id: str, texts: Sequence[str]) -> list[RagChunk]:
    """Chunks with deterministic ids and offsets as if ``texts`` were concatenated."""
    chunks = []
    offset = 0
    for ordinal, text in enumerate(texts):
        chunks.append(
            RagChunk(
                document_id=document_id,
                chunk_id=chunk_id_for(document_id, ordinal),
                ordinal=ordinal,
                content=text,
                start=offset,
                end=offset + len(text),
            )
        )
        offset += len(text)
    return chunks


@dataclass
class CountingSecretProvider:
    """A :class:`runiq.secrets.SecretProvider` holding ``secret`` that counts how often it was ``asked``
    (to test when a provider reads its key: on open, on first use, once)."""

    secret: str | None = field(repr=False)  # str() of a provider identifies its source, never the secret
    source: str = "test vault"
    asked: int = field(default=0, repr=False, compare=False)

    async def get_secret(self) -> SecretStr | None:
        self.asked += 1
        return SecretStr(self.secret) if self.secret is not None else None


class SlowEmbedder(HashingEmbedder):
    """A hashing embedder that waits ``delay`` seconds per call (timeouts, cancellation)."""

    def __init__(self, delay: float, dimensions: int = 64) -> None:
        super().__init__(dimensions)
        self.delay = delay
        self.calls = 0

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        self.calls += 1
        await asyncio.sleep(self.delay)
        return await super().embed(texts, kind)


class FailingEmbedder(HashingEmbedder):
    """Fails every call, with the inputs in the exception it raises internally (to prove nobody copies it)."""

    def __init__(self, dimensions: int = 64, *, fail_on: str | None = None) -> None:
        super().__init__(dimensions)
        self.fail_on = fail_on

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        if self.fail_on is None or any(self.fail_on in t for t in texts):
            raise RuntimeError(f"provider echoed input: {' | '.join(texts)}")
        return await super().embed(texts, kind)


class UnavailableEmbedder(HashingEmbedder):
    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        raise ProviderUnavailableError("fake", "the provider refused the connection")

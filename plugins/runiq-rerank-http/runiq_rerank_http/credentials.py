"""The ``Authorization`` header of a rerank request, from the key's source (:mod:`runiq.secrets`).

The key is read on the first rerank call, not at registration and not when the host opens the index:
the index's resources (store, embedder, reranker) open together, so a missing reranker key read on open
would fail ingestion and retrieval too. Read lazily, it fails only the reranking step, which the
context policy's failure policy then handles (fall back to retrieval order, or fail).
"""

from __future__ import annotations

import asyncio

from pydantic import SecretStr
from runiq.secrets import SecretProvider, require_secret

__all__ = ["BearerCredentials"]


class BearerCredentials:
    """``Authorization: Bearer <key>`` from ``source``, read once on first use (``None``: send no key).

    Until a key is found, every call asks the source again, so setting it fixes a running host.
    """

    def __init__(self, source: SecretProvider | None, *, label: str) -> None:
        self._source = source
        self._label = label
        self._secret: SecretStr | None = None
        self._lock = asyncio.Lock()

    async def headers(self) -> dict[str, str]:
        """The header to send.

        Raises:
            RagConfigurationError: a key is expected and its source has none (the message names the
                source, never a value).
        """
        if self._source is None:
            return {}
        if self._secret is None:
            async with self._lock:
                if self._secret is None:
                    self._secret = await require_secret(self._source, needed_by=f"The {self._label}")
        return {"Authorization": f"Bearer {self._secret.get_secret_value()}"}

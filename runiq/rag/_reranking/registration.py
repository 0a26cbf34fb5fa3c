"""Egress approval: which reranker the context policy may call, and whether the host approved it.

A reranker that declares ``remote = True`` (or declares nothing) ships the query and the full text of
the bounded candidates to a third party. That is a data-egress decision the *host* makes, once, at
registration; a per-request option can never approve it. Wrap the reranker in a
:class:`RerankerRegistration` with ``approved=True`` to allow it. Local rerankers (``remote = False``)
need no approval. An unapproved remote reranker passed to the assembler is a configuration error at
construction; one resolved per index at request time is a ``reranker_not_approved`` failure that
follows the failure policy (the fallback sends nothing).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from runiq.errors import RagConfigurationError
from runiq.plugins.registry import ProviderKind
from runiq.rag._reranking.types import RagReranker

if TYPE_CHECKING:
    from runiq.rag._runtime import IndexRuntime

__all__ = ["RerankerRegistration", "RerankerResolver", "index_reranker_resolver", "reranker_name", "reranker_remote"]


def reranker_name(reranker: object) -> str:
    """The declared ``provider_name``, or the class name when it is missing or not a clean string."""
    name = getattr(reranker, "provider_name", None)
    if isinstance(name, str) and name.strip() and len(name) <= 128:
        return name.strip()
    return type(reranker).__name__


def reranker_remote(reranker: object) -> bool:
    """The declared ``remote`` flag; anything but an explicit ``False`` counts as remote (fail closed)."""
    return getattr(reranker, "remote", True) is not False


@dataclass(frozen=True, slots=True)
class RerankerRegistration:
    """A reranker and the host's egress approval for it.

    ``approved`` only matters for remote rerankers: it records that the host selected this provider
    for the data it will see (tenant and residency requirements, a signed processing agreement).
    """

    reranker: RagReranker
    approved: bool = False

    def __post_init__(self) -> None:
        if not callable(getattr(self.reranker, "rerank", None)):
            raise RagConfigurationError("A reranker must have an async rerank(request) method.")
        if not isinstance(self.approved, bool):
            raise RagConfigurationError("RerankerRegistration.approved must be a bool.")

    @property
    def provider_name(self) -> str:
        return reranker_name(self.reranker)

    @property
    def remote(self) -> bool:
        return reranker_remote(self.reranker)

    @property
    def permitted(self) -> bool:
        """May the policy send content to this reranker?"""
        return self.approved or not self.remote


# Resolves the reranker of an index at request time (``None``: the index has none).
RerankerResolver = Callable[[str], Awaitable[RerankerRegistration | None]]


def index_reranker_resolver(runtime: IndexRuntime) -> RerankerResolver:
    """Resolve the reranker an index selected with ``IndexBuilder.use_reranker``.

    Approval is read from ``IndexDefinition.reranker_approved`` (``False`` when the definition has no
    such field), so a remote provider selected without approval is refused at request time.
    """

    async def resolve(index_name: str) -> RerankerRegistration | None:
        resources = await runtime.get(index_name)
        if resources.reranker is None:
            return None
        definition = resources.definition
        # The provider registration is the authority on egress: use_reranker already refused a remote
        # provider without approval, and a provider registered as local needs none.
        local = (
            definition.reranker is not None
            and not runtime.providers.get(ProviderKind.RERANKER, definition.reranker.name).remote
        )
        return RerankerRegistration(resources.reranker, approved=definition.reranker_approved or local)

    return resolve

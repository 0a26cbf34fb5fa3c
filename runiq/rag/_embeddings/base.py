"""The embedding boundary."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatMatrix: TypeAlias = npt.NDArray[np.float32]
    FloatVector: TypeAlias = npt.NDArray[np.float32]

__all__ = ["EmbeddingClient", "EmbeddingInputKind", "FloatMatrix", "FloatVector"]


class EmbeddingInputKind(StrEnum):
    """Some models embed queries and passages differently; clients that do not care ignore it."""

    DOCUMENT = "document"
    QUERY = "query"


@runtime_checkable
class EmbeddingClient(Protocol):
    """Turns texts into vectors. One call is one provider batch; :class:`EmbeddingBatcher` splits.

    Contract (checked by ``runiq.rag.testing.EmbeddingClientContract``): the result is a
    ``(len(texts), dimensions)`` float32 array in input order, finite, for any string including
    empty ones. Errors are :class:`~runiq.rag._errors.ProviderError` subclasses whose text never
    contains the inputs.
    """

    @property
    def model_name(self) -> str:
        """The model identity recorded with the index, so a changed model is detected."""
        ...

    @property
    def dimensions(self) -> int: ...

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix: ...


if not TYPE_CHECKING:  # hidden from type checkers, which read the aliases above

    def __getattr__(name: str) -> object:
        """The array aliases load numpy on first use (PEP 562): modules that only annotate with them
        import them under ``TYPE_CHECKING``, so importing the embedding boundary does not load numpy."""
        if name in ("FloatMatrix", "FloatVector"):
            import numpy as np
            import numpy.typing as npt

            return npt.NDArray[np.float32]
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

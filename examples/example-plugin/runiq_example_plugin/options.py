"""The ``example-char-ngrams`` provider's name, options model and typed selection.

Registration needs only these, so the plugin's entry point imports this module; numpy, which the
embedder needs, loads when a host first opens the provider (:mod:`runiq_example_plugin.embedder`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PROVIDER_NAME", "CharNgramEmbedding", "CharNgramOptions"]

PROVIDER_NAME = "example-char-ngrams"


class CharNgramOptions(BaseModel):
    """Options of the ``example-char-ngrams`` provider; runiq validates them at registration."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dimensions: int = Field(default=256, ge=8, le=8192)
    n: int = Field(default=3, ge=1, le=8)
    lowercase: bool = True


class CharNgramEmbedding:
    """Typed selection: ``index.use_embedding(CharNgramEmbedding(dimensions=128))``.

    The options are validated here too, so a typo fails where it is written, not at host start.
    """

    provider_name = PROVIDER_NAME

    def __init__(self, *, dimensions: int = 256, n: int = 3, lowercase: bool = True) -> None:
        self._options = CharNgramOptions(dimensions=dimensions, n=n, lowercase=lowercase)

    @property
    def display_name(self) -> str:
        return f"Character {self._options.n}-grams ({self._options.dimensions} dimensions)"

    def provider_options(self) -> dict[str, object]:
        return self._options.model_dump()

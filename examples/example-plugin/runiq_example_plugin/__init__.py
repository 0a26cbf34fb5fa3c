"""runiq-example-plugin: a complete, minimal third-party plugin for runiq.

It contributes one embedding provider, ``example-char-ngrams``, discovered through the ``runiq``
entry-point group. Select it by name (``use_embedding("example-char-ngrams", dimensions=128)``) or
with the typed selection (``use_embedding(CharNgramEmbedding(dimensions=128))``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runiq_example_plugin.options import PROVIDER_NAME, CharNgramEmbedding, CharNgramOptions

if TYPE_CHECKING:
    from runiq_example_plugin.embedder import CharNgramEmbedder

__all__ = ["PROVIDER_NAME", "CharNgramEmbedder", "CharNgramEmbedding", "CharNgramOptions"]


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any attribute

    def __getattr__(name: str) -> object:
        """``CharNgramEmbedder`` loads on first use (PEP 562): its module imports numpy, which
        registering the plugin does not need."""
        if name == "CharNgramEmbedder":
            from runiq_example_plugin.embedder import CharNgramEmbedder

            return CharNgramEmbedder
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""runiq-example-plugin: a complete, minimal third-party plugin for runiq.

It contributes one embedding provider, ``example-char-ngrams``, discovered through the ``runiq``
entry-point group. Select it by name (``use_embedding("example-char-ngrams", dimensions=128)``) or
with the typed selection (``use_embedding(CharNgramEmbedding(dimensions=128))``).
"""

from __future__ import annotations

from runiq_example_plugin.embedder import PROVIDER_NAME, CharNgramEmbedder, CharNgramEmbedding, CharNgramOptions

__all__ = ["PROVIDER_NAME", "CharNgramEmbedder", "CharNgramEmbedding", "CharNgramOptions"]

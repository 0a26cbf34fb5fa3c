"""Registration: the fluent builders, frozen definitions and settings binding.

``add_runiq_rag`` lives in :mod:`runiq.rag._wiring` (it depends on ingestion, which depends on these).
"""

from __future__ import annotations

from runiq.rag._registration.builder import IndexBuilder, ProviderSelection, RagBuilder
from runiq.rag._registration.definitions import IndexDefinition, IndexRegistry, ProviderReference

__all__ = [
    "IndexBuilder",
    "IndexDefinition",
    "IndexRegistry",
    "ProviderReference",
    "ProviderSelection",
    "RagBuilder",
]

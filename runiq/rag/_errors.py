"""The exception tree, re-exported under ``runiq.rag`` (defined in :mod:`runiq.errors`)."""

from __future__ import annotations

from runiq.errors import *  # noqa: F403
from runiq.errors import __all__ as __all__

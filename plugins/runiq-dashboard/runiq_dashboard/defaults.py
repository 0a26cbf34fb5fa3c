"""The dashboard's port when none is given, importable without FastAPI or uvicorn (``runiq serve --help``)."""

from __future__ import annotations

__all__ = ["DEFAULT_PORT"]

DEFAULT_PORT = 8710

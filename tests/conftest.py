from __future__ import annotations

pytest_plugins = ["runiq.rag.testing.fixtures"]

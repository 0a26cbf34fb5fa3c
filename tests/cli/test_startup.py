"""``runiq --help`` starts without the RAG core, numpy or any plugin (issue 28: every command took 3-4.5 s)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = (
    "numpy",
    "torch",
    "sentence_transformers",
    "openai",
    "asyncpg",
    "fastapi",
    "uvicorn",
    "dependency_injector",
    "pydantic_settings",
    "runiq_dashboard",
    "runiq_postgresql",
    "runiq_openai",
    "runiq_sentence_transformers",
    "runiq.rag",
    "runiq.hosting",
)

_PROBE = """
import json, sys
from runiq.cli.main import app
try:
    app(sys.argv[1:], prog_name="runiq")
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(f"{h}.") for h in HEAVY))


def _modules_after(*arguments: str) -> tuple[str, set[str]]:
    completed = subprocess.run(  # our own interpreter running our own CLI
        [sys.executable, "-c", _PROBE, *arguments], capture_output=True, text=True, timeout=120, check=False
    )
    return completed.stdout, set(json.loads(completed.stderr.strip().splitlines()[-1]))


def test_help_loads_no_heavy_module() -> None:
    """Measured with benchmarks/cli_startup.py: 2.63 s before, 0.56 s after (median of 7, load 4-5)."""
    output, modules = _modules_after("--help")
    assert "ingest" in output and "serve" in output
    assert _heavy(modules) == []


def test_command_help_loads_no_heavy_module() -> None:
    output, modules = _modules_after("query", "--help")
    assert "--server" in output and "--json" in output
    assert _heavy(modules) == []

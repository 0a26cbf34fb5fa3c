"""The command line starts without what it does not need (issue 28: every command took 3-4.5 s).

``runiq --help`` loads neither the RAG core, numpy nor any provider plugin; importing the CLI entry or
``runiq.rag`` loads no provider SDK; building the host that ``ingest`` and ``query`` use imports no SDK
of a provider it does not use, no document parser (loaders import theirs in the loader worker) and
not numpy; and ``runiq status``, which reads what the configuration declares, loads every installed
plugin but none of the services: no ingestion, retrieval or context module, no dependency container,
no structlog. The wall times are in ``benchmarks/cli_startup.py``, not here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

SDKS = ("openai", "torch", "sentence_transformers", "fastapi", "uvicorn", "asyncpg", "httpx", "ray")
# Parsers the loaders import when they load a file: in the loader worker, never in the host process.
PARSERS = ("bs4", "markdown_it", "charset_normalizer", "openpyxl", "pypdf", "docx", "pptx", "PIL")
# What building a host needs no more: the stores, the BM25 engine and the embedders import numpy when
# a provider opens; croniter is imported when a cron schedule is validated.
DEFERRED = (
    "numpy",
    "croniter",
    "runiq.rag._stores.memory",
    "runiq.rag._lexical.engine",
    "runiq_postgresql.store",
    "runiq_rerank_http.transport",
    "runiq_ray.embedder",
    "runiq_sentence_transformers.embedder",
)
# What `runiq status` does not import beyond DEFERRED: it builds a host that declares the indexes and
# resolves no service. The services' modules (the ingestion manager and its pipeline, the retriever's
# runtime, context assembly), dependency-injector with PyYAML, and structlog with rich's traceback
# and attrs (loggers import it on their first event; status logs nothing and configures no logging).
NOT_FOR_STATUS = (
    "runiq.rag._ingestion.manager",
    "runiq.rag._ingestion.pipeline",
    "runiq.rag._ingestion.lifecycle",
    "runiq.rag._runtime",
    "runiq.rag._context",
    "dependency_injector",
    "yaml",
    "structlog",
    "attr",
    "rich.traceback",
    "rich.progress",
    "runiq_example_plugin.embedder",
)
HEAVY = (
    *SDKS,
    *(parser for parser in PARSERS if parser != "markdown_it"),  # typer renders help with rich's Markdown
    "numpy",
    "dependency_injector",
    "pydantic_settings",
    "runiq_dashboard.app",
    "runiq_dashboard.server",
    "runiq_dashboard.plugin",
    "runiq_postgresql",
    "runiq_openai",
    "runiq_sentence_transformers",
    "runiq.rag",
    "runiq.hosting",
)

_CLI_PROBE = """
import json, sys
from runiq.cli.main import app
try:
    app(sys.argv[1:], prog_name="runiq")
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""

_IMPORT_PROBE = "import json, sys\nimport runiq.cli.main, runiq.rag\nprint(json.dumps(sorted(sys.modules)))"

# What `runiq ingest` and `runiq query` do before they act: settings, every installed plugin, the host.
_HOST_PROBE = """
import json, sys
from pathlib import Path
from runiq.cli.hosting import build_host
from runiq.rag import IndexRegistry, RagIngestionManager
host = build_host(Path(sys.argv[1]))
[definition] = host.services.get(IndexRegistry)
host.services.get(RagIngestionManager).status(definition.name)
print(json.dumps(sorted(sys.modules)))
"""

CONFIG = """
[rag.indexes.notes]
sources = [{ path = "docs" }]
embedding = { provider = "hashing" }
vector_store = { provider = "in-memory" }
"""


_INSTALLED = [
    plugin
    for plugin in (
        "runiq_openai",
        "runiq_sentence_transformers",
        "runiq_dashboard",
        "runiq_documents",
        "runiq_postgresql",
        "runiq_rerank_http",
        "runiq_ray",
    )
    if importlib.util.find_spec(plugin) is not None
]


# The worked example plugin, when it is installed (the development environment installs it).
_EXAMPLE = [plugin for plugin in ("runiq_example_plugin",) if importlib.util.find_spec(plugin) is not None]


def _matching(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(f"{h}.") for h in names))


def _modules_after(*arguments: str, env: dict[str, str] | None = None) -> tuple[str, set[str]]:
    completed = subprocess.run(  # our own interpreter running our own CLI
        [sys.executable, "-c", _CLI_PROBE, *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    return completed.stdout, set(json.loads(completed.stderr.strip().splitlines()[-1]))


def _modules_of(probe: str, *arguments: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> set[str]:
    completed = subprocess.run(  # our own interpreter importing our own modules
        [sys.executable, "-c", probe, *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=cwd,
        env=env,
    )
    return set(json.loads(completed.stdout))


def test_help_loads_no_heavy_module() -> None:
    """Measured with benchmarks/cli_startup.py (see benchmarks/README.md)."""
    output, modules = _modules_after("--help")
    assert "ingest" in output and "status" in output
    assert _matching(modules, HEAVY) == []


def test_command_help_loads_no_heavy_module() -> None:
    output, modules = _modules_after("query", "--help")
    assert "--server" in output and "--json" in output
    assert _matching(modules, HEAVY) == []


def test_importing_the_cli_entry_and_runiq_rag_loads_no_provider_sdk() -> None:
    assert _matching(_modules_of(_IMPORT_PROBE), (*SDKS, *PARSERS, *DEFERRED)) == []


def test_building_the_host_loads_no_sdk_of_an_unused_provider(tmp_path: Path) -> None:
    """With every installed plugin loaded (entry points), only registration runs: the provider SDKs
    (openai, torch, sentence-transformers, asyncpg, httpx, Ray), the dashboard's server stack and the
    document parsers stay unimported."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "runiq.toml").write_text(CONFIG, encoding="utf-8")
    modules = _modules_of(_HOST_PROBE, str(tmp_path / "runiq.toml"), cwd=tmp_path)
    for plugin in _INSTALLED:  # installed, so its entry point was loaded
        assert f"{plugin}.plugin" in modules
    assert _matching(modules, (*SDKS, *PARSERS)) == []


def test_building_the_host_loads_no_numpy_no_parser_and_no_store_module(tmp_path: Path) -> None:
    """Every installed plugin is loaded (the worked example too: its embedder and numpy load when the
    provider opens); what they defer stays unimported."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "runiq.toml").write_text(CONFIG, encoding="utf-8")
    modules = _modules_of(_HOST_PROBE, str(tmp_path / "runiq.toml"), cwd=tmp_path)
    for plugin in (*_INSTALLED, *_EXAMPLE):
        assert f"{plugin}.plugin" in modules
    assert _matching(modules, (*SDKS, *PARSERS, *DEFERRED)) == []


def test_status_loads_every_plugin_but_no_service_module(tmp_path: Path) -> None:
    """``runiq status`` itself (the command, as the console script runs it) validates the configuration
    against every installed plugin, and imports no SDK, parser, store, service module, dependency
    container or structlog."""
    (tmp_path / "docs").mkdir()
    config = tmp_path / "runiq.toml"
    config.write_text(CONFIG, encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if not k.upper().startswith("RUNIQ_")}
    output, modules = _modules_after("status", "--json", "-c", str(config), env=environment)
    assert json.loads(output)["indexes"][0]["name"] == "notes"
    for plugin in (*_INSTALLED, *_EXAMPLE):
        assert f"{plugin}.plugin" in modules
    assert _matching(modules, (*SDKS, *PARSERS, *DEFERRED, *NOT_FOR_STATUS)) == []


def test_status_with_an_unknown_provider_fails_like_building_the_host(tmp_path: Path) -> None:
    """Reading declarations validates them as building the host does: same message, same exit status."""
    config = tmp_path / "runiq.toml"
    config.write_text(CONFIG.replace('provider = "hashing"', 'provider = "no-such-embedder"'), encoding="utf-8")
    environment = {k: v for k, v in os.environ.items() if not k.upper().startswith("RUNIQ_")}
    runs = [
        subprocess.run(  # our own interpreter running our own CLI
            [sys.executable, "-m", "runiq.cli", command, "-c", str(config)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=environment,
        )
        for command in ("status", "ingest")
    ]
    status, ingest = runs
    assert status.returncode == ingest.returncode == 2
    assert "no-such-embedder" in status.stderr
    assert status.stderr.partition("Error")[2] == ingest.stderr.partition("Error")[2]  # the box, after the usage

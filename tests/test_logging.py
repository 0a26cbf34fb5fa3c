"""Library code never logs to stdout: until the application configures structlog, runiq's events go to
standard-library loggers under a NullHandler; once it does, they follow its configuration. runiq never
changes structlog's global configuration by itself (issue 28)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import structlog
from structlog.testing import capture_logs

from runiq.logging import _public_name, get_logger

# A host with a lexical in-memory index, started, ingested, queried and stopped: every step logs at info.
SCRIPT = """
import asyncio, sys
{setup}
from runiq.hosting import HostBuilder
from runiq.rag import RagDocument, RagIngestionManager, RagQuery, RagRetriever, add_runiq_rag

def notes(index):
    index.use_documents([RagDocument(document_id="a", content="hello world")])
    index.use_in_memory_vector_store().use_default_mode("lexical")

async def main():
    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(builder, lambda rag: rag.add_index("notes", notes))
    async with builder.build() as host:
        await host.services.get(RagIngestionManager).run("notes")
        await host.services.get(RagRetriever).retrieve(RagQuery(index_name="notes", text="hello"))

asyncio.run(main())
{after}
print("script output")
"""


def _run(setup: str = "", after: str = "") -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.upper().startswith("RUNIQ_")}
    return subprocess.run(  # our own interpreter running the library
        [sys.executable, "-c", SCRIPT.format(setup=setup, after=after)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=environment,
    )


def test_a_script_that_configures_no_logging_gets_nothing_on_stdout_or_stderr() -> None:
    completed = _run(after="import structlog; assert not structlog.is_configured()")
    assert completed.stdout == "script output\n"
    assert completed.stderr == ""


def test_a_script_that_configures_stdlib_logging_gets_runiq_events_through_it() -> None:
    completed = _run(setup="import logging; logging.basicConfig(level=logging.INFO, stream=sys.stderr)")
    assert completed.stdout == "script output\n"
    assert "INFO:runiq.hosting.host:event='host.started'" in completed.stderr
    assert "event='ingestion.finished'" in completed.stderr


def test_a_structlog_configuration_made_after_import_applies_to_runiq() -> None:
    """configure_once still works (runiq configured nothing); runiq's events render through it to stderr."""
    setup = (
        "import runiq.rag, runiq.hosting, structlog, warnings\n"
        "warnings.simplefilter('error')\n"
        "structlog.configure_once(logger_factory=structlog.PrintLoggerFactory(sys.stderr))"
    )
    completed = _run(setup=setup)
    assert completed.stdout == "script output\n"
    assert "host.started" in completed.stderr


def test_events_follow_structlog_once_it_is_configured() -> None:
    """The choice is made per event: a logger created before the configuration uses it."""
    log = get_logger("runiq.tests.logging")
    saved = structlog.get_config()
    structlog.reset_defaults()
    try:
        with capture_logs() as captured:
            log.info("sample.event", count=3)
    finally:
        structlog.configure(**saved)
    assert captured == [{"event": "sample.event", "count": 3, "log_level": "info"}]


def test_library_and_plugin_modules_log_only_through_runiq_logging() -> None:
    """A module calling structlog.get_logger directly would print to stdout in an unconfigured host."""
    root = Path(__file__).resolve().parents[1]
    modules = [*root.glob("runiq/**/*.py"), *root.glob("plugins/*/runiq_*/**/*.py")]
    direct = [
        str(path.relative_to(root))
        for path in modules
        if "structlog.get_logger(" in path.read_text(encoding="utf-8") and path.name != "logging.py"
    ]
    assert modules
    assert direct == []


def test_a_private_module_logs_under_its_public_name() -> None:
    """Making a module private does not rename its logger, which operators configure by name."""
    assert _public_name("runiq_example._impl.store") == "runiq_example.impl.store"
    assert _public_name("runiq.cli.__main__") == "runiq.cli.__main__"
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    configured = logging.getLogger("runiq_example.impl")
    configured.addHandler(handler)
    configured.setLevel(logging.INFO)
    saved = structlog.get_config()
    structlog.reset_defaults()  # unconfigured: events go to the standard-library logger
    try:
        get_logger("runiq_example._impl").info("sample.event")
    finally:
        structlog.configure(**saved)
        configured.removeHandler(handler)
        configured.setLevel(logging.NOTSET)
    assert [record.name for record in records] == ["runiq_example.impl"]

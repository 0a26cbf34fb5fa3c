"""Session-wide rule for every suite (core, plugins, examples): a skipped test fails the run.

A run that skipped a suite (a missing browser, server or package) proves nothing about it, so the
project installs what its tests need (``scripts/bootstrap.sh``) and counts a skip as a failure.
"""

from __future__ import annotations

import pytest


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter is not None else 0
    if skipped and exitstatus == pytest.ExitCode.OK:
        reporter.write_line(f"{skipped} skipped test(s): a skip counts as a failure here", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

"""Meta-test (datasette's test_plugin_hooks_have_tests): every hookspec has at least one test_hook_<name> test."""

from __future__ import annotations

import re
from pathlib import Path

from runiq.plugins import hookspecs

TESTS = Path(__file__).resolve().parents[1]


def _hook_names() -> set[str]:
    return {name for name in dir(hookspecs) if hasattr(getattr(hookspecs, name), "runiq_spec")}


def test_plugin_hooks_have_tests() -> None:
    """Each runiq_* hookspec is exercised by a test whose name starts with test_hook_<hook name>."""
    defined = {
        match.group(1)
        for path in TESTS.rglob("test_*.py")
        for match in re.finditer(r"def test_hook_(\w+)\(", path.read_text())
    }
    hooks = _hook_names()
    assert hooks, "no hookspecs found"
    untested = sorted(h for h in hooks if not any(name.startswith(h) for name in defined))
    assert untested == []

"""Every hook is documented with its exact signature and has a test (datasette's two meta-tests).

``test_plugin_hooks_are_documented``: each hookspec in ``runiq/plugins/hookspecs.py`` has a heading in
``docs/reference/hooks.md`` and its ``def`` line appears verbatim in a code block of that section.
``test_plugin_hooks_have_tests``: each hook name starts the name of a ``test_hook_<hook>*`` function
somewhere under ``tests/``, ``plugins/`` or ``examples/``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from runiq.plugins import hookspecs

ROOT = Path(__file__).resolve().parents[2]
HOOKSPECS = ROOT / "runiq" / "plugins" / "hookspecs.py"
HOOKS_DOC = ROOT / "docs" / "reference" / "hooks.md"
TEST_ROOTS = [ROOT / "tests", ROOT / "plugins", ROOT / "examples"]
_SKIP_PARTS = {".venv", "venv", "node_modules", "site-packages", "build", ".tox"}

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*$", re.MULTILINE)
_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_TEST_HOOK = re.compile(r"def (test_hook_\w+)\s*\(")


def _is_hookspec(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Name) and decorator.id == "hookspec"


def _signatures() -> dict[str, str]:
    """Hook name -> its ``def`` line as written in hookspecs.py (normalised by ``ast.unparse``)."""
    tree = ast.parse(HOOKSPECS.read_text(encoding="utf-8"))
    signatures = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any(_is_hookspec(d) for d in node.decorator_list):
            returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
            signatures[node.name] = f"def {node.name}({ast.unparse(node.args)}){returns}:"
    return signatures


SIGNATURES = _signatures()


def _doc_sections() -> dict[str, str]:
    """Heading name -> the text up to the next heading of the same or a higher level."""
    text = HOOKS_DOC.read_text(encoding="utf-8")
    fences = [match.span() for match in _FENCE.finditer(text)]
    # A "# comment" inside a code block is not a heading.
    headings = [h for h in _HEADING.finditer(text) if not any(start <= h.start() < end for start, end in fences)]
    sections = {}
    for i, match in enumerate(headings):
        level = len(match.group(1))
        end = next((h.start() for h in headings[i + 1 :] if len(h.group(1)) <= level), len(text))
        # "## `runiq_x(registry)`" and "## runiq_x" both name the hook runiq_x.
        name = match.group(2).strip("`").split("(")[0].strip()
        sections[name] = text[match.end() : end]
    return sections


def test_hookspecs_are_found() -> None:
    """The source parse agrees with pluggy's markers, so no hook escapes the checks below."""
    marked = {name for name in dir(hookspecs) if hasattr(getattr(hookspecs, name), "runiq_spec")}
    assert SIGNATURES
    assert set(SIGNATURES) == marked


@pytest.mark.parametrize("hook", sorted(SIGNATURES))
def test_plugin_hooks_are_documented(hook: str) -> None:
    """docs/reference/hooks.md has a heading for the hook and its exact signature in a code block there."""
    sections = _doc_sections()
    assert hook in sections, f"docs/reference/hooks.md has no heading '## {hook}'"
    blocks = _FENCE.findall(sections[hook])
    assert any(SIGNATURES[hook] in block for block in blocks), (
        f"the section '{hook}' has no code block containing the signature:\n    {SIGNATURES[hook]}"
    )


def test_documented_hooks_exist() -> None:
    """No heading documents a runiq_* hook that the specifications do not define."""
    documented = {name for name in _doc_sections() if name.startswith("runiq_")}
    assert documented - set(SIGNATURES) == set()


def _test_hook_names() -> set[str]:
    names: set[str] = set()
    for root in TEST_ROOTS:
        for path in root.rglob("*.py"):
            if _SKIP_PARTS.intersection(path.relative_to(ROOT).parts):
                continue
            names.update(_TEST_HOOK.findall(path.read_text(encoding="utf-8", errors="replace")))
    return names


@pytest.mark.parametrize("hook", sorted(SIGNATURES))
def test_plugin_hooks_have_tests(hook: str) -> None:
    """Some test function under tests/, plugins/ or examples/ is named test_hook_<hook>..."""
    tests = sorted(name for name in _test_hook_names() if name.startswith(f"test_hook_{hook}"))
    assert tests, f"no test function is named test_hook_{hook}*"

"""The install instructions match the packaging: the CPU torch pin, the published extras, the distributions."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
CPU_INDEX = "--index-url https://download.pytorch.org/whl/cpu"
DOC_FOLDERS = ("docs", "plugins", "examples", "benchmarks", "scripts")  # not the root: .venv lives there


def _cpu_torch_line() -> str:
    """The documented first step: the torch release bootstrap.sh pins, from PyTorch's CPU index."""
    pins = re.findall(r"torch==([0-9][0-9.]*)", (ROOT / "scripts" / "bootstrap.sh").read_text(encoding="utf-8"))
    assert len(set(pins)) == 1, pins
    return f'pip install "torch=={pins[0]}" {CPU_INDEX}'


def _install_lines(markdown: str) -> list[str]:
    return [line.strip() for line in markdown.splitlines() if line.strip().startswith("pip install")]


def _section(markdown: str, heading: str) -> str:
    start = markdown.index(f"\n{heading}\n")
    end = markdown.find("\n## ", start + 1)
    return markdown[start : end if end != -1 else None]


def test_sentence_transformers_readme_installs_the_bootstrap_cpu_torch_first() -> None:
    """A plain install pulls a multi-GB CUDA torch; the note installs the pinned CPU build before the plugin."""
    readme = (ROOT / "plugins" / "runiq-sentence-transformers" / "README.md").read_text(encoding="utf-8")
    lines = _install_lines(_section(readme, "## Install (CPU)"))
    assert lines == [_cpu_torch_line(), "pip install runiq-sentence-transformers"]


def test_the_readme_cpu_torch_line_matches_the_plugin_note() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert _cpu_torch_line() in _install_lines(_section(readme, "## Install"))


def test_the_readme_install_section_names_every_published_distribution_and_extra(check_wheels: ModuleType) -> None:
    section = _section((ROOT / "README.md").read_text(encoding="utf-8"), "## Install")
    lines = " ".join(_install_lines(section))
    for project in check_wheels.projects():
        meta = check_wheels.pyproject(project)["project"]
        if "example" not in meta["name"]:
            assert f"pip install {meta['name']}" in lines or f"pip install '{meta['name']}" in lines, meta["name"]
    for extra in check_wheels.pyproject(check_wheels.ROOT)["project"]["optional-dependencies"]:
        assert f"'runiq[{extra}]'" in lines, extra


def test_docs_name_only_extras_that_exist(check_wheels: ModuleType) -> None:
    """`pip install ... name[extra]` anywhere in the Markdown names a published extra (test/lint/bench are groups)."""
    metas = [check_wheels.pyproject(project)["project"] for project in check_wheels.projects()]
    extras = {str(meta["name"]): set(meta.get("optional-dependencies", {})) for meta in metas}
    extras["."] = extras["runiq"]  # pip install -e ".[x]" from the repository root
    documents = [*ROOT.glob("*.md"), *(p for folder in DOC_FOLDERS for p in (ROOT / folder).rglob("*.md"))]
    named = [
        (path.relative_to(ROOT).as_posix(), distribution, extra)
        for path in documents
        for line in path.read_text(encoding="utf-8").splitlines()
        if "pip install" in line
        for distribution, listed in re.findall(r"(runiq[a-z-]*|\.)\[([a-z0-9,_-]+)\]", line)
        for extra in listed.split(",")
    ]
    assert named, "no extras found in the docs: the pattern is broken"
    assert [entry for entry in named if entry[2] not in extras.get(entry[1], set())] == []

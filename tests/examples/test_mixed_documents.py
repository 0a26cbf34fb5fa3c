"""The mixed-documents example: every generated file loads through its registered loader in a
LoaderPool, and the policy sentence is found whatever the format."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import runiq_documents.plugin

from runiq.hosting import HostBuilder
from runiq.rag._loaders import LoaderPool

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "mixed-documents" / "make_documents.py"
POLICY = "Travel expenses above 500 EUR need manager approval before booking."


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_documents", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_every_format_loads_and_holds_the_policy(tmp_path: Path) -> None:
    paths = _script().make_documents(tmp_path / "documents")
    loaders = HostBuilder(load_entry_points=False, plugins=[runiq_documents.plugin]).loaders
    image = next(path for path in paths if path.suffix == ".png")
    paths = [path for path in paths if path != image]
    assert sorted(path.suffix for path in paths) == sorted(
        [".txt", ".txt", ".md", ".html", ".json", ".csv", ".pdf", ".docx", ".pptx", ".xlsx"]
    )
    assert all(loaders.reads(path) for path in paths)  # a directory source would read every one
    assert not loaders.reads(image)  # and skip this one
    async with LoaderPool(workers=1) as pool:
        loaded = {path.name: await pool.load(loaders.require(path), path.read_bytes()) for path in paths}
    for name, document in loaded.items():
        if name not in {"per-diem.csv", "rates.xlsx"}:
            assert POLICY in document.text, name
    assert loaded["notes-windows-1252.txt"].text.startswith("Naïve question – “who approves?”")
    assert loaded["notes-windows-1252.txt"].metadata["encoding"] == "cp1252"
    assert loaded["notes-utf16.txt"].metadata["encoding"] == "utf-16"
    html = loaded["travel-desk.html"]
    assert (html.title, "trackVisitor()" in html.text, "Home" in html.text, "©" in html.text) == (
        "Travel desk",
        False,
        False,
        False,
    )
    pdf = loaded["handbook.pdf"]
    assert [pdf.text[p.start : p.end] for p in pdf.pages] == [
        "Travel handbook\nPage one is the introduction.",
        f"Approval\n{POLICY}\nThe quartermaster signs vouchers.",
    ]
    assert (
        loaded["per-diem.csv"].text
        == "City: Zürich; Rate (EUR): 60; Approver: Team lead\nCity: Bern; Rate (EUR): 55; Approver: Team lead"
    )
    assert "City: Zürich; Rate (EUR): 60; Valid from: 2024-01-01" in loaded["rates.xlsx"].text
    assert [h.title for h in loaded["kickoff.pptx"].headings] == ["Why", "Rule"]

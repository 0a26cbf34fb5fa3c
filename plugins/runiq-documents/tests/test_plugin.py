"""The distribution registers its loaders through runiq_register_loaders, beside the built-ins."""

from __future__ import annotations

import tomllib
from pathlib import Path

import runiq_documents.plugin
from runiq.hosting import HostBuilder

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_the_entry_point_names_the_plugin_module() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["runiq"] == {"documents": "runiq_documents.plugin"}


def test_the_hook_registers_pdf_and_office_loaders_beside_the_builtins() -> None:
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_documents.plugin])
    loaders = builder.loaders
    for name, file_name in [("pdf", "Report.PDF"), ("docx", "a.docx"), ("pptx", "b.pptx"), ("xlsx", "c.XLSM")]:
        loader = loaders.for_path(file_name)
        assert loader is not None
        assert loader.name == name
        assert loaders.get(name).plugin == "runiq_documents.plugin"
    assert loaders.for_media_type("application/pdf") is loaders.get("pdf").loader
    assert {".pdf", ".docx", ".pptx", ".xlsx", ".md", ".html", ".csv"} <= loaders.extensions

"""Write one small document per format runiq reads into a folder: the mixed-documents example's input.

    python examples/mixed-documents/make_documents.py [OUTPUT_DIR]   # default: ./documents

Text in Windows-1252 and UTF-16, Markdown, HTML with boilerplate to drop, JSON, CSV, and (with the
runiq-documents plugin installed) PDF, DOCX, PPTX and XLSX, all about the same travel policy, so a
query finds its answer whatever format holds it. Everything is generated; nothing is downloaded.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Callable
from pathlib import Path

POLICY = "Travel expenses above 500 EUR need manager approval before booking."


def _core_documents() -> dict[str, bytes]:
    html = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Travel desk</title>"
        "<script>track()</script></head><body><nav>Home | Policies</nav><main>"
        f"<h1>Travel desk</h1><p>{POLICY}</p><h2>Hotels</h2><p>Book hotels through the travel desk.</p>"
        "</main><footer>© Example Corp</footer></body></html>"
    )
    return {
        "notes-windows-1252.txt": f"Naïve question – “who approves?” {POLICY}".encode("cp1252"),  # noqa: RUF001
        "notes-utf16.txt": f"Überblick: {POLICY}".encode("utf-16"),
        "policy.md": f"# Travel policy\n\n## Approval\n\n{POLICY}\n".encode(),
        "travel-desk.html": html.encode(),
        "faq.json": json.dumps({"text": f"Q: Who approves travel? A: {POLICY}", "lang": "en"}).encode(),
        "per-diem.csv": "City;Rate (EUR);Approver\nZürich;60;Team lead\nBern;55;Team lead\n".encode(),
    }


def _plugin_documents() -> dict[str, bytes]:
    try:
        from runiq_documents.samples import docx_bytes, pdf_bytes, pptx_bytes, xlsx_bytes
    except ImportError:  # PDF and Office formats need the runiq-documents plugin
        return {}
    makers: dict[str, Callable[[], bytes]] = {
        "handbook.pdf": lambda: pdf_bytes(
            ["Travel handbook\nPage one is the introduction.", f"Approval\n{POLICY}"],
            title="Travel handbook",
            author="Finance",
        ),
        "policy.docx": lambda: docx_bytes(
            title="Travel policy",
            author="Finance",
            sections=[("Approval", [POLICY]), ("Hotels", ["Book through the travel desk."])],
            table=[["Amount", "Approver"], ["up to 500 EUR", "none"], ["above 500 EUR", "manager"]],
        ),
        "kickoff.pptx": lambda: pptx_bytes(
            title="Travel policy kickoff",
            author="Finance",
            slides=[("Why", ["Costs went up 20%"], ""), ("Rule", [POLICY], "Stress the 500 EUR limit.")],
        ),
        "rates.xlsx": lambda: xlsx_bytes(
            title="Per diem rates",
            author="Finance",
            sheets={"Per diem": [["City", "Rate (EUR)", "Valid from"], ["Zürich", 60, dt.date(2024, 1, 1)]]},
        ),
    }
    return {name: make() for name, make in makers.items()}


def make_documents(output: Path) -> list[Path]:
    """Write every document into ``output`` (created if missing); return their paths."""
    output.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in {**_core_documents(), **_plugin_documents()}.items():
        path = output / name
        path.write_bytes(data)
        written.append(path)
    return written


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("documents")
    for path in make_documents(target):
        print(path)

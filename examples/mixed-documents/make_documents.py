"""Write one small document per format runiq reads into a folder: the mixed-documents example's input.

    python examples/mixed-documents/make_documents.py [OUTPUT_DIR]   # default: ./documents

Text in Windows-1252 and UTF-16, Markdown, HTML with boilerplate to drop, JSON, CSV, and (with the
runiq-documents plugin installed) PDF, DOCX, PPTX and XLSX, all about the same travel policy, so a
query finds its answer whatever format holds it; beside them an image no loader reads (counted as
skipped). Each format also holds a word no other file has (``MARKERS``), so a query shows which
format answered: the PDF's is on its second page, the DOCX's in a table, the PPTX's on a slide, the
XLSX's in a cell, the HTML's in its body; the HTML's script, navigation and footer words must not be
found. Everything is generated; nothing is downloaded.
"""

from __future__ import annotations

import datetime as dt
import json
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

POLICY = "Travel expenses above 500 EUR need manager approval before booking."
# A word only one file holds, and where it is.
MARKERS = {
    "quartermaster": "handbook.pdf",  # on page 2
    "treasurer": "policy.docx",  # in a table cell
    "airfares": "kickoff.pptx",  # on slide 1
    "reykjavik": "rates.xlsx",  # in a cell
    "concierge": "travel-desk.html",  # in the body
}
# Words of the HTML page's boilerplate (script, navigation, footer) that loading drops.
BOILERPLATE = ("trackvisitor", "intranet", "examplecorp")


def _png() -> bytes:
    """A white 1x1 PNG: a file no loader reads, skipped (and counted) by the default selection."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\xff\xff\xff"))
        + chunk(b"IEND", b"")
    )


def _core_documents() -> dict[str, bytes]:
    html = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Travel desk</title>"
        "<script>trackVisitor()</script></head><body><nav>Home | Intranet</nav><main>"
        f"<h1>Travel desk</h1><p>{POLICY}</p><h2>Hotels</h2><p>Book hotels through the travel desk.</p>"
        "<p>The concierge arranges visas.</p></main><footer>© ExampleCorp</footer></body></html>"
    )
    return {
        "notes-windows-1252.txt": f"Naïve question – “who approves?” {POLICY}".encode("cp1252"),  # noqa: RUF001
        "notes-utf16.txt": f"Überblick: {POLICY}".encode("utf-16"),
        "policy.md": f"# Travel policy\n\n## Approval\n\n{POLICY}\n".encode(),
        "travel-desk.html": html.encode(),
        "faq.json": json.dumps({"text": f"Q: Who approves travel? A: {POLICY}", "lang": "en"}).encode(),
        "per-diem.csv": "City;Rate (EUR);Approver\nZürich;60;Team lead\nBern;55;Team lead\n".encode(),
        "logo.png": _png(),
    }


def _plugin_documents() -> dict[str, bytes]:
    try:
        from runiq_documents.samples import docx_bytes, pdf_bytes, pptx_bytes, xlsx_bytes
    except ImportError:  # PDF and Office formats need the runiq-documents plugin
        return {}
    makers: dict[str, Callable[[], bytes]] = {
        "handbook.pdf": lambda: pdf_bytes(
            [
                "Travel handbook\nPage one is the introduction.",
                f"Approval\n{POLICY}\nThe quartermaster signs vouchers.",
            ],
            title="Travel handbook",
            author="Finance",
        ),
        "policy.docx": lambda: docx_bytes(
            title="Travel policy",
            author="Finance",
            sections=[("Approval", [POLICY]), ("Hotels", ["Book through the travel desk."])],
            table=[
                ["Amount", "Approver"],
                ["up to 500 EUR", "none"],
                ["above 500 EUR", "manager"],
                ["above 5000 EUR", "treasurer"],
            ],
        ),
        "kickoff.pptx": lambda: pptx_bytes(
            title="Travel policy kickoff",
            author="Finance",
            slides=[
                ("Why", ["Costs went up 20%", "Airfares doubled"], ""),
                ("Rule", [POLICY], "Stress the 500 EUR limit."),
            ],
        ),
        "rates.xlsx": lambda: xlsx_bytes(
            title="Per diem rates",
            author="Finance",
            sheets={
                "Per diem": [
                    ["City", "Rate (EUR)", "Valid from"],
                    ["Zürich", 60, dt.date(2024, 1, 1)],
                    ["Reykjavik", 75, dt.date(2024, 1, 1)],
                ]
            },
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

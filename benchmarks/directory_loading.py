"""How fast a directory source turns small files into documents, per format.

    python benchmarks/directory_loading.py [--files 3000] [--html 300]

Writes N small Markdown and N plain-text files (and M HTML pages) into a temporary folder and streams
them through ``DirectorySource`` (median of 3 for text and Markdown, which load in the reading thread;
one run for HTML, which loads in a LoaderPool worker, one forked child per file, including the
workers' start). Prints files per second. Figures depend on the machine's load: run it alone.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from runiq.rag._sources import DirectorySource


async def _rate(root: Path, pattern: str, repeats: int) -> float:
    rates = []
    for _ in range(repeats):
        started = time.perf_counter()
        count = sum([1 async for _ in DirectorySource(root=root, pattern=pattern).stream()])
        rates.append(count / (time.perf_counter() - started))
    return statistics.median(rates)


async def main(files: int, pages: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i in range(files):
            (root / f"doc{i:05d}.md").write_text(f"# Title {i}\n\n" + "Some words about leave policy. " * 20)
            (root / f"doc{i:05d}.txt").write_text(f"Plain notes {i}. " * 40)
        for i in range(pages):
            (root / f"page{i:04d}.html").write_text(
                f"<html><head><title>P{i}</title></head><body><main><p>Text {i}.</p></main></body></html>"
            )
        print(f"markdown: {await _rate(root, '*.md', 3):.0f} files/s")
        print(f"text:     {await _rate(root, '*.txt', 3):.0f} files/s")
        if pages:
            print(f"html:     {await _rate(root, '*.html', 1):.0f} files/s (isolated, including worker start)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--html", type=int, default=300)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.files, arguments.html))

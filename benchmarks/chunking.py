"""Chunking benchmark: runiq's windowed chunkers vs one semantic-text-splitter call over the document.

    python benchmarks/chunking.py [--inputs NAME,...] [--repeats 3] [--single-call]

Inputs (deterministic): ``nows-1mb`` and ``nows-2mb`` (random letters and digits, no whitespace),
``a-2mb`` (one character repeated), ``prose-2mb`` (generated sentences and paragraphs), ``wrapped-2mb``
(the same prose hard-wrapped at 72 columns, like mail, RFCs or Markdown sources), ``cjk-2mb``
(CJK text with punctuation and no spaces), ``one-cjk-2mb`` (one CJK character repeated). Options are the
defaults (1000 characters, 100 overlap). Reports the median seconds per input and chunker and the chunk
count; ``--single-call`` also times the splitter called once on the whole text (what runiq did before
it chunked in windows), and says whether both give the same chunks.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import string
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from semantic_text_splitter import MarkdownSplitter, TextSplitter

from runiq.rag import RagDocument
from runiq.rag._chunking import ChunkingOptions, MarkdownChunker, TextChunker

MB = 1 << 20
_WORDS = ["policy", "remote", "work", "office", "team", "manager", "request", "approval", "travel", "the", "a", "of"]


def _nows(size: int) -> str:
    return "".join(random.Random(7).choices(string.ascii_letters + string.digits, k=size))


def _prose(size: int) -> str:
    rng = random.Random(3)
    parts: list[str] = []
    while sum(map(len, parts)) < size:
        sentences = (" ".join(rng.choices(_WORDS, k=rng.randint(5, 20))).capitalize() + "." for _ in range(6))
        parts.append(" ".join(sentences))
    return "\n\n".join(parts)[:size]


def _wrapped(size: int) -> str:
    paragraphs = _prose(size).split("\n\n")
    return "\n\n".join(textwrap.fill(paragraph, 72) for paragraph in paragraphs)[:size]


def _cjk(size: int) -> str:
    rng = random.Random(5)
    parts: list[str] = []
    while sum(map(len, parts)) < size:
        parts.append(
            "".join(chr(0x4E00 + rng.randrange(3000)) for _ in range(rng.randint(8, 40)))
            + "\uff0c\u3002"[rng.randrange(2)]
        )
    return "".join(parts)[:size]


INPUTS: dict[str, Callable[[], str]] = {
    "nows-1mb": lambda: _nows(MB),
    "nows-2mb": lambda: _nows(2 * MB),
    "a-2mb": lambda: "a" * (2 * MB),
    "prose-2mb": lambda: _prose(2 * MB),
    "wrapped-2mb": lambda: _wrapped(2 * MB),
    "cjk-2mb": lambda: _cjk(2 * MB),
    "one-cjk-2mb": lambda: "中" * (2 * MB),
}


def _median(repeats: int, run: Callable[[], object]) -> tuple[float, object]:
    times: list[float] = []
    result: object = None
    for _ in range(repeats):
        started = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def _measure(name: str, content: str, kind: str, repeats: int, single_call: bool) -> str:
    options = ChunkingOptions()
    markdown = kind == "markdown"
    chunker = MarkdownChunker(options) if markdown else TextChunker(options)
    document = RagDocument(document_id="d", content=content, content_type=f"text/{kind}")
    seconds, chunks = _median(repeats, lambda: chunker.chunk(document))
    spans = [(chunk.start, chunk.content) for chunk in chunks]  # type: ignore[attr-defined]
    line = f"{name:12s} {kind:8s} windows {seconds:7.3f}s {len(spans):5d} chunks"
    if single_call:
        splitter_type = MarkdownSplitter if markdown else TextSplitter
        splitter = splitter_type(options.max_characters, overlap=options.overlap)
        single, pieces = _median(1, lambda: splitter.chunk_indices(content))
        line += f" | single call {single:7.3f}s same chunks: {pieces == spans}"
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--inputs", default="nows-1mb,nows-2mb,a-2mb")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--single-call", action="store_true")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; options 1000/100; median of {args.repeats}")
    for name in args.inputs.split(","):
        content = INPUTS[name]()
        for kind in ("plain", "markdown"):
            print(_measure(name, content, kind, args.repeats, args.single_call), flush=True)


if __name__ == "__main__":
    main()

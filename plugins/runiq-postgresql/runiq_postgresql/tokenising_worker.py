"""The child side of :mod:`runiq_postgresql.tokenising`.

``python -m runiq_postgresql.tokenising_worker STOPWORDS STEMMER``

Reads length-prefixed pickled lists of chunk contents on stdin and answers each with a pickled
:class:`~runiq_postgresql.lexical.SliceTerms`; exits at end of input. On an error it answers with the
exception's type name (a ``str``, never content) and exits.
"""

from __future__ import annotations

import pickle
import sys
from typing import BinaryIO

from runiq.rag.providers import LexicalOptions
from runiq_postgresql.lexical import slice_terms
from runiq_postgresql.tokenising import HEADER, frame


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    data = stream.read(size)
    return data if data and len(data) == size else None


def serve(stdin: BinaryIO, stdout: BinaryIO, lexical: LexicalOptions) -> None:
    analyzer = lexical.analyzer()
    while (header := _read_exactly(stdin, HEADER.size)) is not None:
        body = _read_exactly(stdin, HEADER.unpack(header)[0])
        if body is None:
            return
        try:
            contents = pickle.loads(body)  # noqa: S301 - our parent, over a private pipe
            reply: object = slice_terms(contents, analyzer)
        except Exception as exc:  # reported by type only; the parent falls back to a thread
            stdout.write(frame(type(exc).__name__))
            stdout.flush()
            return
        stdout.write(frame(reply))
        stdout.flush()


def main() -> None:
    stopwords, stemmer = sys.argv[1], sys.argv[2]
    serve(sys.stdin.buffer, sys.stdout.buffer, LexicalOptions(stopwords=stopwords, stemmer=stemmer))  # type: ignore[arg-type]


if __name__ == "__main__":
    main()

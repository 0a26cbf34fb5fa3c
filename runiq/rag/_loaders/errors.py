"""Why a file could not be loaded: a small, stable set of codes and the one error that carries them."""

from __future__ import annotations

from enum import StrEnum

from runiq.errors import RagError

__all__ = ["DocumentLoadError", "LoadFailureCode"]


class LoadFailureCode(StrEnum):
    """Stable values for reports, logs and HTTP payloads. None of them says anything about the content."""

    UNSUPPORTED_FORMAT = "unsupported_format"  # no loader claims the file's extension or media type
    TOO_LARGE = "too_large"  # over a byte, unpacked-size, character or memory budget
    TIMEOUT = "timeout"  # the loader overran its time budget; its worker was replaced
    MALFORMED = "malformed"  # the bytes are not a valid file of the format (truncated, corrupt, hostile)
    ENCRYPTED = "encrypted"  # password protected; runiq has no password to try
    UNDECODABLE = "undecodable"  # text in no encoding runiq could detect
    EMPTY = "empty"  # a valid file with no extractable text (a scanned PDF without a text layer)
    FAILED = "failed"  # the loader raised something unexpected or its worker died


_MESSAGES = {
    LoadFailureCode.UNSUPPORTED_FORMAT: "No document loader reads this file format.",
    LoadFailureCode.TOO_LARGE: "The document exceeds a loading budget.",
    LoadFailureCode.TIMEOUT: "Loading the document exceeded its time budget.",
    LoadFailureCode.MALFORMED: "The document is malformed or not of its declared format.",
    LoadFailureCode.ENCRYPTED: "The document is encrypted.",
    LoadFailureCode.UNDECODABLE: "The document's text encoding could not be detected.",
    LoadFailureCode.EMPTY: "The document contains no extractable text.",
    LoadFailureCode.FAILED: "The document loader failed.",
}


class DocumentLoadError(RagError):
    """One file could not be turned into text. A per-document failure, never a failed run.

    The message is fixed per code: no file name, byte or parser message is ever part of it. Raise it
    outside an ``except`` block (see :func:`runiq.rag._loaders.failing_as`) so a parser's own exception,
    which may quote the document, is not kept as ``__context__`` either.
    """

    def __init__(self, code: LoadFailureCode) -> None:
        self.code = LoadFailureCode(code)
        super().__init__(_MESSAGES[self.code])

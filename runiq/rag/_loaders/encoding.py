"""Bytes to text in any common encoding: the one detection rule every text-based loader uses.

Order: a byte-order mark (UTF-8, UTF-16, UTF-32) decides; otherwise strict UTF-8; otherwise
``charset-normalizer`` (MIT) judges the candidates. Its ranking cannot tell Western single-byte
encodings apart on short text (it reads "Überblick" in Windows-1252 as Korean Johab, "café" as
UTF-16), so Windows-1252 is asked about first: when it decodes the bytes with no more chaos than the
best candidate, it wins, as it does in every browser for unlabelled legacy text. Latin-1 text decodes
identically there (they differ only in C1 control codes, which text does not use). Cyrillic, Greek,
Central European or Japanese bytes do not decode cleanly as Windows-1252 and get the detector's choice.
Text never contains NUL, so data with NUL bytes is never taken for UTF-8 (UTF-16 without a BOM is).
"""

from __future__ import annotations

import codecs
import re

from runiq.rag._loaders.deferred import import_when_loading
from runiq.rag._loaders.errors import DocumentLoadError, LoadFailureCode

__all__ = ["decode_text"]

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_WESTERN_DEFAULT = "cp1252"
# Control characters that text does not use (tab, newlines, form feed and escape are allowed); more
# than one in a hundred characters, or any NUL, means the bytes are not text in that encoding.
_CONTROL = re.compile("[\x01-\x08\x0e-\x1a\x1c-\x1f]")
import_when_loading("charset_normalizer")


def decode_text(data: bytes) -> tuple[str, str]:
    """``(text, encoding)`` with a byte-order mark removed; ``encoding`` is the codec's canonical name.

    Raises:
        DocumentLoadError: ``undecodable`` when no encoding gives text (binary data).
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return _checked(data, encoding)
    if b"\x00" not in data:
        try:
            return _checked(data, "utf-8")
        except DocumentLoadError:
            pass
    return _checked(data, _detected(data))


def _detected(data: bytes) -> str:
    from charset_normalizer import from_bytes

    western = from_bytes(data, cp_isolation=[_WESTERN_DEFAULT]).best()
    if western is not None and western.chaos == 0:
        return _WESTERN_DEFAULT
    best = from_bytes(data).best()
    if western is not None and (best is None or western.chaos <= best.chaos):
        return _WESTERN_DEFAULT
    if best is None:
        raise DocumentLoadError(LoadFailureCode.UNDECODABLE)
    return best.encoding


def _checked(data: bytes, encoding: str) -> tuple[str, str]:
    failed = False
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        failed = True
    if failed or "\x00" in text or len(_CONTROL.findall(text)) > len(text) // 100:
        raise DocumentLoadError(LoadFailureCode.UNDECODABLE)
    name = "utf-8" if encoding == "utf-8-sig" else codecs.lookup(encoding).name
    return text, name

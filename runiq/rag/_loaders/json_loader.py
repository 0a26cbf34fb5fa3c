"""JSON documents: the text is one top-level string field (``text`` by default, as the reference).

Other fields reach metadata only when configured (``LoadOptions.json_metadata_fields``), and only
scalar values (strings, numbers, booleans; a store can filter on nothing else). ``json.loads`` on
bytes detects UTF-8, UTF-16 and UTF-32 itself.
"""

from __future__ import annotations

import json

from runiq.rag._loaders.base import LoadedDocument, LoadOptions, guarded, parser_failures
from runiq.rag._loaders.errors import DocumentLoadError, LoadFailureCode

__all__ = ["JsonLoader"]

# JSONDecodeError and integers beyond the digit limit are ValueErrors, deep nesting a RecursionError.
_FAILURES = parser_failures({UnicodeDecodeError: LoadFailureCode.UNDECODABLE})


class JsonLoader:
    name = "json"
    extensions = frozenset({".json"})
    media_types = frozenset({"application/json"})

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        root = guarded(lambda: json.loads(data), _FAILURES)
        text = root.get(options.json_text_field) if isinstance(root, dict) else None
        if not isinstance(text, str):
            raise DocumentLoadError(LoadFailureCode.MALFORMED)  # the reference's "JSON text field is required"
        title_field = options.json_title_field
        title = root.get(title_field) if title_field is not None else None
        metadata = {
            key: value
            for key in options.json_metadata_fields
            if isinstance(value := root.get(key), str | int | float | bool) and value == value  # NaN is no value
        }
        return LoadedDocument(text=text, title=title if isinstance(title, str) else None, metadata=metadata)

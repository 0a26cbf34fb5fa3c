"""Check an error the way an attacker with a debugger would: everything reachable from it.

``raise ... from None`` hides a provider's exception from tracebacks but keeps it as
``__context__``, where the query, chunk content, a file name or an echoed API key survive. These
helpers walk ``__cause__``, ``__context__``, exception group members, ``args`` and attributes.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable

__all__ = ["assert_content_free", "reachable_exceptions"]


def _exceptions_in(values: Iterable[object]) -> list[BaseException]:
    found: list[BaseException] = []
    for value in values:
        if isinstance(value, BaseException):
            found.append(value)
        elif isinstance(value, tuple | list | set | frozenset):
            found.extend(_exceptions_in(value))
        elif isinstance(value, dict):
            found.extend(_exceptions_in(value.values()))
    return found


def _linked(error: BaseException) -> list[BaseException]:
    values: list[object] = [error.__cause__, error.__context__, *error.args, *getattr(error, "__dict__", {}).values()]
    if isinstance(error, BaseExceptionGroup):
        values.extend(error.exceptions)
    return _exceptions_in(values)


def reachable_exceptions(error: BaseException) -> list[BaseException]:
    """``error`` and every exception reachable from it, each once, ``error`` first."""
    found: list[BaseException] = []
    seen: set[int] = set()
    pending = [error]
    while pending:
        current = pending.pop(0)
        if id(current) not in seen:
            seen.add(id(current))
            found.append(current)
            pending.extend(_linked(current))
    return found


def _rendered(error: BaseException) -> str:
    return "\n".join([str(error), repr(error), repr(error.args), repr(getattr(error, "__dict__", {}))])


def assert_content_free(error: BaseException, *secrets: str) -> None:
    """Fail unless every exception reachable from ``error`` is defined by runiq (or a ``runiq_*``
    plugin) and no secret appears in any one's text, ``repr``, ``args`` or attributes, nor in the
    formatted traceback."""
    for found in reachable_exceptions(error):
        kind = f"{type(found).__module__}.{type(found).__qualname__}"
        assert type(found).__module__.startswith("runiq"), f"{kind} is reachable from {type(error).__name__}"
        rendered = _rendered(found)
        for secret in secrets:
            assert secret not in rendered, f"a secret is reachable from {type(error).__name__} in {kind}"
    formatted = "".join(traceback.format_exception(error))
    for secret in secrets:
        assert secret not in formatted, f"a secret is in the formatted traceback of {type(error).__name__}"

"""The translation helpers in runiq.errors: the replacement is raised outside ``except``, so nothing of
the foreign exception stays reachable, and a runiq error is only chained when its own chain is clean."""

from __future__ import annotations

import asyncio
import gc
import weakref

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from runiq.errors import (
    ProviderError,
    ProviderUnavailableError,
    RagConfigurationError,
    RagValidationError,
    call_translated,
    chained,
    content_free,
    field_names,
    first_leaf,
    invalid_fields,
    replacing,
    translated,
)

SECRET = "CANARY-7f3a9c-SECRET-CONTENT"


class _Echo(RuntimeError):
    """A provider exception (a subclass, since builtin exception instances take no weak references)."""


def _provider_failed(exc: Exception) -> ProviderError:
    return ProviderError("fake")


async def test_translated_raises_the_replacement_with_nothing_chained() -> None:
    """No __cause__, no __context__ (``from None`` would keep it), and the original is released."""
    originals: list[weakref.ref[Exception]] = []

    async def fail() -> None:
        error = _Echo(SECRET)
        originals.append(weakref.ref(error))
        raise error

    with pytest.raises(ProviderError) as caught:
        await translated(fail, _provider_failed)
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None
    gc.collect()
    assert originals[0]() is None


def test_call_translated_raises_the_replacement_with_nothing_chained() -> None:
    """The synchronous form behaves the same; a result passes through."""

    def fail() -> None:
        raise ValueError(SECRET)

    with pytest.raises(ProviderError) as caught:
        call_translated(fail, _provider_failed)
    assert caught.value.__context__ is None
    assert call_translated(lambda: 42, _provider_failed) == 42


def test_replacing_translates_only_the_named_kinds() -> None:
    """The named kinds become the fixed error, unchained; any other exception passes through as it was."""
    translate = replacing((KeyError, ValueError), RagValidationError("unknown name"))

    def missing() -> None:
        raise KeyError(SECRET)

    with pytest.raises(RagValidationError, match="unknown name") as caught:
        call_translated(missing, translate)
    assert caught.value.__context__ is None
    other = TypeError(SECRET)
    assert translate(other) is other
    assert isinstance(translate(ValueError(SECRET)), RagValidationError)


async def test_translate_may_let_an_error_through_unchanged() -> None:
    """Returning the exception itself re-raises it as it was."""
    error = RagValidationError("bad filter")

    async def fail() -> None:
        raise error

    with pytest.raises(RagValidationError) as caught:
        await translated(fail, lambda exc: exc)
    assert caught.value is error


async def test_cancellation_is_never_translated() -> None:
    """CancelledError is a BaseException: it passes untouched."""

    async def cancelled() -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await translated(cancelled, _provider_failed)


def test_chained_keeps_only_a_clean_runiq_cause() -> None:
    """A runiq error with nothing foreign behind it is chained; one holding a foreign context is not."""
    clean = ProviderUnavailableError("fake")
    assert chained(ProviderError("outer"), clean).__cause__ is clean
    sloppy = ProviderUnavailableError("fake")
    sloppy.__context__ = RuntimeError(SECRET)
    assert chained(ProviderError("outer"), sloppy).__cause__ is None
    assert chained(ProviderError("outer"), RuntimeError(SECRET)).__cause__ is None


def test_content_free_walks_causes_contexts_and_groups() -> None:
    """Every exception reachable through the chain and group members must be a runiq error."""
    assert content_free(ExceptionGroup("g", [ProviderError("a"), ProviderError("b")]))
    assert not content_free(ExceptionGroup("g", [ProviderError("a"), KeyError(SECRET)]))
    deep = ProviderError("a")
    deep.__cause__ = ProviderError("b")
    deep.__cause__.__context__ = OSError(SECRET)
    assert not content_free(deep)


def test_first_leaf_unwraps_nested_groups() -> None:
    """The first non-group exception, however deep; a plain exception is its own leaf."""
    leaf = ProviderError("a")
    assert first_leaf(ExceptionGroup("outer", [ExceptionGroup("inner", [leaf]), KeyError("x")])) is leaf
    assert first_leaf(leaf) is leaf


class _Retry(BaseModel):
    max_wait: float


class _Options(BaseModel):
    # Deliberately without hide_input_in_errors: the rule must hold even where a model forgets it.
    model_config = ConfigDict(extra="forbid")

    base_url: str
    retry: _Retry | None = None
    region: str = "eu"

    @field_validator("region")
    @classmethod
    def _known_region(cls, value: str) -> str:
        if value != "eu":
            raise RagConfigurationError("The region must be 'eu'.")  # a runiq message: content-free by contract
        return value

    @model_validator(mode="after")
    def _whole(self) -> _Options:
        if self.base_url == "whole":
            raise ValueError(f"the model as a whole is wrong: {SECRET}")
        return self


def _validate(values: dict[str, object]) -> _Options:
    return call_translated(lambda: _Options.model_validate(values), invalid_fields("Invalid test selection"))


def test_invalid_fields_names_the_fields_and_never_a_value() -> None:
    """Nested locations dotted and sorted; a secret given as a value reaches neither the message nor a chain."""
    with pytest.raises(RagConfigurationError) as caught:
        _validate({"base_url": 42, "retry": {"max_wait": SECRET}})
    assert str(caught.value) == "Invalid test selection: base_url, retry.max_wait."
    assert content_free(caught.value)


def test_invalid_fields_names_the_whole_model_and_keeps_runiq_advice() -> None:
    """An error about the model itself is named by ``whole``; a runiq error's own text is appended."""
    with pytest.raises(RagConfigurationError) as caught:
        _validate({"base_url": "whole"})
    assert str(caught.value) == "Invalid test selection: options."
    with pytest.raises(RagConfigurationError) as caught:
        call_translated(
            lambda: _Options.model_validate({"base_url": "whole"}), invalid_fields("Invalid settings", whole="settings")
        )
    assert str(caught.value) == "Invalid settings: settings."
    with pytest.raises(RagConfigurationError) as caught:
        _validate({"base_url": "h", "region": "us"})
    assert str(caught.value) == "Invalid test selection: region. The region must be 'eu'."


def test_invalid_fields_lets_other_exceptions_through() -> None:
    """Anything but a ValidationError is returned unchanged (a runiq error raised before validation, say)."""
    error = RagValidationError("already a runiq error")
    assert invalid_fields("Invalid")(error) is error


def test_field_names_is_the_naming_rule() -> None:
    """Sorted, unique, dotted; the CLI uses it directly for its own error type."""
    with pytest.raises(ValidationError) as caught:
        _Options.model_validate({"base_url": 1, "retry": {"max_wait": SECRET}, "extra": SECRET})
    assert field_names(caught.value) == "base_url, extra, retry.max_wait"

"""runiq.secrets: where a key comes from, the missing-key message, and the base_url rule; never a value."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, SecretStr

from runiq.errors import RagConfigurationError, call_translated, invalid_fields
from runiq.secrets import EnvironmentSecretProvider, EnvVarName, HttpBaseUrl, SecretProvider, require_secret

KEY = "sk-runiq-test-KEYCANARY-5b8e01"


class _Options(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    base_url: HttpBaseUrl | None = None
    api_key_env: EnvVarName = "RUNIQ_TEST_KEY"


def _options(**values: object) -> _Options:
    return call_translated(lambda: _Options.model_validate(values), invalid_fields("Invalid test options"))


async def test_the_environment_provider_reads_the_variable_each_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Set, blank and unset; the source names the variable and a provider satisfies the protocol."""
    provider = EnvironmentSecretProvider("RUNIQ_TEST_KEY")
    assert isinstance(provider, SecretProvider)
    monkeypatch.delenv("RUNIQ_TEST_KEY", raising=False)
    assert await provider.get_secret() is None
    monkeypatch.setenv("RUNIQ_TEST_KEY", "   ")
    assert await provider.get_secret() is None
    monkeypatch.setenv("RUNIQ_TEST_KEY", f" {KEY} ")
    secret = await provider.get_secret()
    assert isinstance(secret, SecretStr)
    assert secret.get_secret_value() == KEY
    assert KEY not in repr(secret) + repr(provider) + provider.source
    assert provider.source == "environment variable 'RUNIQ_TEST_KEY'"


def test_an_environment_variable_name_is_letters_digits_and_underscores() -> None:
    """A bad name fails in the provider and as an options field, naming the field only."""
    with pytest.raises(RagConfigurationError):
        EnvironmentSecretProvider("NOT A NAME")
    with pytest.raises(RagConfigurationError) as caught:
        _options(api_key_env="NOT A NAME")
    assert str(caught.value) == "Invalid test options: api_key_env."


async def test_require_secret_names_who_needs_it_and_the_source(monkeypatch: pytest.MonkeyPatch) -> None:
    """The message says what to set; a configured key is returned."""
    monkeypatch.delenv("RUNIQ_TEST_KEY", raising=False)
    provider = EnvironmentSecretProvider("RUNIQ_TEST_KEY")
    with pytest.raises(RagConfigurationError) as caught:
        await require_secret(provider, needed_by="The test reranker")
    assert str(caught.value) == (
        "The test reranker needs an API key; none is set in the environment variable 'RUNIQ_TEST_KEY'."
    )
    monkeypatch.setenv("RUNIQ_TEST_KEY", KEY)
    assert (await require_secret(provider, needed_by="x")).get_secret_value() == KEY


@pytest.mark.parametrize("url", ["http://127.0.0.1:11434/v1", "https://gw.example/tei/", "http://[::1]:8080"])
def test_http_base_urls_are_kept_as_given(url: str) -> None:
    """A valid address is not rewritten (plugins add their own paths)."""
    assert _options(base_url=url).base_url == url


@pytest.mark.parametrize(
    "url",
    [
        "ftp://host/v1",
        "http:///v1",
        f"https://user:{KEY}@host/v1",
        f"https://{KEY}@host/v1",  # a token as the user name, no password
        f"https://host/v1?key={KEY}",
        f"https://host/v1#{KEY}",
        "http://[::1",
    ],
)
def test_http_base_urls_refuse_other_schemes_credentials_queries_and_fragments(url: str) -> None:
    """Each is a configuration error naming base_url, with nothing of the URL in it or chained to it."""
    with pytest.raises(RagConfigurationError) as caught:
        _options(base_url=url)
    assert str(caught.value) == "Invalid test options: base_url."
    assert caught.value.__context__ is None
    assert caught.value.__cause__ is None

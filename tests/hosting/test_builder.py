"""HostBuilder: composes services, participants and plugins, and builds exactly one host."""

from __future__ import annotations

import types

import pytest

from runiq.hosting import Host, HostBuilder, HostState
from runiq.plugins import hookimpl
from runiq.settings import RuniqSettings


def test_builder_builds_once(builder: HostBuilder) -> None:
    """A second build() is refused: one builder, one host."""
    host = builder.build()
    assert isinstance(host, Host)
    assert host.state is HostState.CREATED
    with pytest.raises(RuntimeError, match="builds one host"):
        builder.build()


def test_services_cannot_be_added_after_build(builder: HostBuilder) -> None:
    """build() freezes the container: adding a service afterwards fails."""
    host = builder.build()
    with pytest.raises(RuntimeError, match="after the host is built"):
        builder.services.add_instance(int, 1)
    with pytest.raises(LookupError):
        host.services.get(int)


def test_builder_uses_given_settings() -> None:
    """Settings passed to the builder are the ones it exposes (no environment re-read)."""
    settings = RuniqSettings(disabled_plugins=("something",))
    assert HostBuilder(settings=settings, load_entry_points=False).settings is settings


def test_hook_runiq_configure_host_runs_at_build_before_freeze() -> None:
    """runiq_configure_host runs once, at build(), and may still add services and participants."""
    calls: list[HostBuilder] = []

    class Marker:
        pass

    plugin = types.ModuleType("configure_host_plugin")

    @hookimpl
    def runiq_configure_host(builder: HostBuilder) -> None:
        calls.append(builder)
        builder.services.add_instance(Marker, Marker())

    plugin.runiq_configure_host = runiq_configure_host  # type: ignore[attr-defined]
    builder = HostBuilder(load_entry_points=False, plugins=[plugin])
    assert calls == []
    host = builder.build()
    assert calls == [builder]
    assert isinstance(host.services.get(Marker), Marker)


class Feature:
    def __init__(self) -> None:
        self.parts: list[str] = []


def test_an_extension_is_created_once_per_builder(builder: HostBuilder) -> None:
    """get_or_add_extension creates the object on the first call and returns it afterwards."""
    created: list[Feature] = []

    def create() -> Feature:
        created.append(Feature())
        return created[-1]

    first = builder.get_or_add_extension(Feature, create)
    first.parts.append("a")
    second = builder.get_or_add_extension(Feature, create)
    assert second is first and second.parts == ["a"]
    assert len(created) == 1
    assert HostBuilder(load_entry_points=False).get_or_add_extension(Feature, Feature) is not first


def test_build_steps_run_after_configure_host_and_before_the_services_freeze() -> None:
    order: list[str] = []
    plugin = types.ModuleType("ordering_plugin")

    @hookimpl
    def runiq_configure_host(builder: HostBuilder) -> None:
        order.append("configure_host")

    plugin.runiq_configure_host = runiq_configure_host  # type: ignore[attr-defined]
    builder = HostBuilder(load_entry_points=False, plugins=[plugin])

    def step() -> None:
        order.append("step")
        builder.services.add_instance(Feature, Feature())  # still allowed

    builder.add_build_step(step)
    builder.add_build_step(lambda: order.append("second step"))
    assert order == []
    host = builder.build()
    assert order == ["configure_host", "step", "second step"]
    assert isinstance(host.services.get(Feature), Feature)


def test_the_builder_has_no_untyped_property_bag(builder: HostBuilder) -> None:
    assert not hasattr(builder, "properties")


def test_the_builder_hands_runiq_builtins_to_the_plugin_host(builder: HostBuilder) -> None:
    """The plugin host imports no RAG module itself: the builder registers the built-ins, first."""
    assert builder.plugins.plugin_names == ["runiq.builtins"]

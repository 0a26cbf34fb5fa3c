"""Hosting: a dependency-injector container with an explicit start/stop lifecycle."""

from __future__ import annotations

from runiq.hosting.builder import HostBuilder, builtin_plugins
from runiq.hosting.host import Host, HostState, LifecycleParticipant, ServiceProvider
from runiq.hosting.signals import Interrupted, run_until_signalled

__all__ = [
    "Host",
    "HostBuilder",
    "HostState",
    "Interrupted",
    "LifecycleParticipant",
    "ServiceProvider",
    "builtin_plugins",
    "run_until_signalled",
]

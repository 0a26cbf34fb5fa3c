"""Hosting: a dependency-injector container with an explicit start/stop lifecycle."""

from __future__ import annotations

from runiq.hosting.builder import HostBuilder
from runiq.hosting.host import Host, HostState, LifecycleParticipant, ServiceProvider

__all__ = ["Host", "HostBuilder", "HostState", "LifecycleParticipant", "ServiceProvider"]

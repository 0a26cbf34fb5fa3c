"""The host lifecycle participant that fires ingestion strategies. (Runtime resources are closed by the
host's services when it stops: see ``add_runiq_rag``.)"""

from __future__ import annotations

import asyncio

from runiq.rag._errors import StartupIngestionError
from runiq.rag._ingestion.manager import RagIngestionManager
from runiq.rag._ingestion.operation import RagIngestionReason, RagIngestionState
from runiq.rag._ingestion.scheduler import CronScheduler
from runiq.rag._ingestion.strategies import IngestionStrategyKind
from runiq.rag._runtime import IndexRuntime

__all__ = ["IngestionStrategiesParticipant"]


class IngestionStrategiesParticipant:
    """OnStartup blocks ``Host.start()``; BackgroundOnStartup starts a managed task; Scheduled joins the
    in-process scheduler. On stop, the scheduler stops and active runs are cancelled and awaited."""

    def __init__(self, manager: RagIngestionManager, runtime: IndexRuntime) -> None:
        self._manager = manager
        definitions = list(runtime.registry)
        self._on_startup = [d.name for d in definitions if d.ingestion.kind is IngestionStrategyKind.ON_STARTUP]
        self._background = [
            d.name for d in definitions if d.ingestion.kind is IngestionStrategyKind.BACKGROUND_ON_STARTUP
        ]
        self._scheduler = CronScheduler(
            manager,
            [d for d in definitions if d.ingestion.kind is IngestionStrategyKind.SCHEDULED],
            runtime=runtime,
        )

    async def start(self) -> None:
        for name in self._on_startup:
            operation = await self._manager.run(name, RagIngestionReason.STARTUP)
            if operation.state is RagIngestionState.CANCELLED:
                raise asyncio.CancelledError
            if operation.state is not RagIngestionState.COMPLETED:
                await self._manager.aclose()
                raise StartupIngestionError(name, operation.state.value)
        for name in self._background:
            await self._manager.start(name, RagIngestionReason.BACKGROUND_STARTUP)
        self._scheduler.start()

    async def stop(self) -> None:
        await self._scheduler.stop()
        await self._manager.aclose()

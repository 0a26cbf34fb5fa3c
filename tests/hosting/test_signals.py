"""run_until_signalled: SIGTERM and SIGINT cancel the main coroutine, its cleanup runs, then Interrupted."""

from __future__ import annotations

import asyncio
import signal

import pytest

from runiq.hosting import Interrupted, run_until_signalled


async def _signalled_then_cleanup(sig: signal.Signals, events: list[str]) -> str:
    try:
        signal.raise_signal(sig)
        await asyncio.sleep(60)
        return "finished"
    finally:
        await asyncio.sleep(0)  # the cleanup may await: the cancellation was delivered once
        events.append("cleanup")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_cancels_main_runs_its_cleanup_and_raises_interrupted(sig: signal.Signals) -> None:
    """The process survives the signal; main's finally block runs; the handlers are restored afterwards."""
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    events: list[str] = []
    with pytest.raises(Interrupted) as caught:
        run_until_signalled(_signalled_then_cleanup(sig, events))
    assert events == ["cleanup"]
    assert caught.value.signum == sig
    assert caught.value.exit_code == 128 + sig
    assert sig.name in str(caught.value)
    assert {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)} == before


def test_without_a_signal_it_is_asyncio_run() -> None:
    """The result comes back, exceptions propagate unchanged, and the handlers are restored."""
    before = signal.getsignal(signal.SIGTERM)

    async def fails() -> None:
        raise LookupError("boom")

    async def answers() -> int:
        return 42

    assert run_until_signalled(answers()) == 42
    with pytest.raises(LookupError):
        run_until_signalled(fails())
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_signal_during_a_cleanup_that_ignores_it_still_interrupts() -> None:
    """main swallowed the cancellation and returned: the signal is still reported, not lost."""

    async def swallows() -> str:
        try:
            signal.raise_signal(signal.SIGTERM)
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            return "swallowed"
        return "finished"

    with pytest.raises(Interrupted) as caught:
        run_until_signalled(swallows())
    assert caught.value.signum == signal.SIGTERM


def test_a_second_signal_interrupts_a_hanging_cleanup() -> None:
    """Ctrl-C twice: the second cancellation ends a cleanup that would otherwise wait forever."""
    events: list[str] = []

    async def hangs_in_cleanup() -> None:
        try:
            signal.raise_signal(signal.SIGINT)
            await asyncio.sleep(60)
        finally:
            try:
                asyncio.get_running_loop().call_later(0.05, signal.raise_signal, signal.SIGINT)
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                events.append("cleanup interrupted")
                raise

    with pytest.raises(Interrupted) as caught:
        run_until_signalled(hangs_in_cleanup())
    assert events == ["cleanup interrupted"]
    assert caught.value.signum == signal.SIGINT

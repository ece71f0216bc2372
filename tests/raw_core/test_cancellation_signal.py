"""A call's cancellation signal: fired before or after someone waits, it wakes them."""

from __future__ import annotations

import anyio
import anyio.lowlevel

from raw_core.tools.calls import CancellationSignal


def test_a_signal_fired_before_anyone_waits_still_wakes_the_waiter() -> None:
    async def main() -> None:
        signal = CancellationSignal()
        signal.cancel("stop")
        with anyio.fail_after(5):
            await signal.wait()
        assert signal.reason == "stop"

    anyio.run(main)


def test_a_waiter_wakes_when_the_signal_fires_later() -> None:
    async def main() -> None:
        signal = CancellationSignal()
        woke = anyio.Event()

        async def waiter() -> None:
            await signal.wait()
            woke.set()

        with anyio.fail_after(5):
            async with anyio.create_task_group() as group:
                group.start_soon(waiter)
                await anyio.lowlevel.checkpoint()
                assert not woke.is_set()
                signal.cancel()
                await woke.wait()

    anyio.run(main)


def test_a_signal_can_be_made_outside_an_event_loop() -> None:
    signal = CancellationSignal()  # its event is made by the first wait
    signal.cancel()
    assert signal.cancelled

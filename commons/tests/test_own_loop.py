"""cancel_all ends every task of a loop, one that shrugs off a cancellation too."""

from __future__ import annotations

import asyncio

from hermes_commons.own_loop import cancel_all


def test_every_task_ends_even_one_that_catches_a_cancellation() -> None:
    loop = asyncio.new_event_loop()
    caught: list[int] = []

    async def stubborn() -> None:
        while True:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                caught.append(1)
                if len(caught) > 1:
                    raise  # the second time it gives up, as the SDKs' loops do

    async def plain() -> None:
        await asyncio.sleep(60)

    tasks = [loop.create_task(stubborn()), loop.create_task(plain())]
    loop.run_until_complete(asyncio.sleep(0.01))  # both are waiting, as a library's are
    cancel_all(loop, rounds=5, wait=0.2)
    assert all(task.done() for task in tasks) and caught == [1, 1]
    loop.close()

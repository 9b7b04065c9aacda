"""FreshRead: concurrent requests share a read of the credential epoch, and none is answered by a
read that began before it asked (what makes a revocation take effect at once)."""

from __future__ import annotations

import asyncio
import threading

from toolkit.services.fresh_read import FreshRead


def test_a_caller_arriving_during_a_read_gets_the_next_read_not_that_one():
    started, release = threading.Event(), threading.Event()
    value = {"n": 0}

    def read() -> int:
        seen = value["n"]
        started.set()
        release.wait(5)
        return seen

    fresh = FreshRead(read)

    async def scenario() -> tuple[int, int]:
        first = asyncio.ensure_future(fresh())
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 5)
        value["n"] = 1  # changed while the first read is in flight, before the second caller asks
        second = asyncio.ensure_future(fresh())
        await asyncio.sleep(0)
        release.set()
        return await first, await second

    assert asyncio.run(scenario()) == (0, 1)


def test_a_failed_read_reaches_every_caller_sharing_it_and_the_next_call_reads_again():
    calls = []

    def read() -> int:
        calls.append(1)
        if len(calls) <= 2:
            raise ConnectionError("database gone")
        return len(calls)

    fresh = FreshRead(read)

    async def together() -> list:
        return await asyncio.gather(*(fresh() for _ in range(4)), return_exceptions=True)

    answers = asyncio.run(together())
    assert all(isinstance(a, ConnectionError) for a in answers), answers
    assert asyncio.run(fresh()) == 3
    assert asyncio.run(fresh()) == 4  # a new read each time nobody shares it

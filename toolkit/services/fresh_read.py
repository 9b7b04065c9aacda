"""Reads of one stored value that concurrent requests share, each answer read after its asker asked.

A request that must see the database as of its arrival (the credential epoch on a shared store)
may not reuse a read already in flight when it arrived, but it may share the next one with
every request that arrived meanwhile. So under load one read serves many requests, and a
request waits at most for the read in flight and its own.

>>> import asyncio
>>> reads = []
>>> fresh = FreshRead(lambda: reads.append(1) or len(reads))
>>> async def ten_at_once():
...     return await asyncio.gather(*(fresh() for _ in range(10)))
>>> answers = asyncio.run(ten_at_once())
>>> answers[0], set(answers[1:]), len(reads)  # the first started a read; the other nine share the next
(1, {2}, 2)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class FreshRead(Generic[T]):
    """An awaitable reader of ``read()`` (a blocking call, run in the default executor) whose
    every answer comes from a call that started after the awaiter asked."""

    def __init__(self, read: Callable[[], T]) -> None:
        self._read = read
        self._running: asyncio.Future[T] | None = None  # the read in flight
        self._queued: asyncio.Future[T] | None = None  # the read that starts when it ends

    async def __call__(self) -> T:
        loop = asyncio.get_running_loop()
        if self._running is not None:  # it started before this call: wait for the next one
            if self._queued is None:
                self._queued = loop.create_future()
            return await asyncio.shield(self._queued)
        self._running = answer = loop.create_future()
        loop.create_task(self._drive(answer))
        return await asyncio.shield(answer)

    async def _drive(self, answer: asyncio.Future[T] | None) -> None:
        loop = asyncio.get_running_loop()
        while answer is not None:
            try:
                answer.set_result(await loop.run_in_executor(None, self._read))
            except Exception as exc:  # every awaiter of this read gets it (a 503 when the database is gone)
                answer.set_exception(exc)
                answer.exception()  # retrieved: awaiters that gave up must not leave it to be logged
            answer, self._queued = self._queued, None
            self._running = answer

"""A fair gate in front of the service work: at most ``slots`` requests run at once, and when
one finishes the next slot goes to the workspaces with requests waiting in turn (round robin),
not to whoever asked first. A workspace sending many requests at once then queues behind its
own requests while another workspace's request waits for at most one slot to free up.

Used by :class:`server.limits.LimitsMiddleware`, from the event loop only (no lock needed).
A tenant is any hashable value (the server passes workspace ids).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Hashable


class FairGate:
    """``async acquire(tenant)`` / ``release()`` around a request's work; ``slots`` 0: no gate."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.running = 0
        self._waiting: dict[Hashable, deque[asyncio.Future]] = {}  # insertion order is the turn order

    async def acquire(self, tenant: Hashable) -> None:
        if self.slots <= 0:
            return
        if self.running < self.slots and not self._waiting:
            self.running += 1
            return
        turn = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(tenant, deque()).append(turn)
        try:
            await turn  # release() handed this request its slot (``running`` already counts it)
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release()  # the slot came just as the request was cancelled: pass it on
            else:
                queue = self._waiting.get(tenant)
                if queue is not None and turn in queue:
                    queue.remove(turn)
                    if not queue:
                        del self._waiting[tenant]
            raise

    def release(self) -> None:
        if self.slots <= 0:
            return
        while self._waiting:
            tenant = next(iter(self._waiting))
            queue = self._waiting.pop(tenant)
            turn = queue.popleft()
            if queue:
                self._waiting[tenant] = queue  # to the back of the line: the others go first
            if not turn.done():
                turn.set_result(None)
                return
        self.running -= 1
